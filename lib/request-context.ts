// The request a piece of work belongs to, without passing it down every call: its request id
// and its W3C trace context (https://www.w3.org/TR/trace-context/). Log lines carry both (see
// lib/logger.ts) and calls to the Dapr sidecar forward them, so one trace id follows a request
// from the gateway through daprd into the actors and ledger apps.

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync, randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, TraceFlags, defaultTextMapSetter, trace, type Span, type TextMapGetter } from '@opentelemetry/api';
import { TRACE_PARENT_HEADER, W3CTraceContextPropagator } from '@opentelemetry/core';

export interface RequestContext {
  requestId: string;
  /** 32 lowercase hex digits, shared by every hop of the request. */
  traceId: string;
  /** 16 lowercase hex digits: this process's span of the request, the parent of its outgoing calls. */
  spanId: string;
  /** The trace flags, two hex digits (01: sampled). */
  flags: string;
  /** The recording span `spanId` names, when this process traces (lib/tracing.ts). */
  span?: Span;
}

export interface ParsedTraceparent {
  traceId: string;
  parentId: string;
  flags: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

const ALL_ZERO = /^0+$/;
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * Every request is marked sampled, whether its trace starts here or a caller's continues: a
 * client sending an unsampled traceparent must not switch tracing off for its requests, here
 * (lib/tracing.ts samples every span) or in the daprd sidecars, which sample every trace
 * (dapr/config.yaml) but follow the parent's decision.
 */
const SAMPLED = '01';

/**
 * The W3C trace-context format is OpenTelemetry's own propagator, held here rather than taken
 * from the global one: that one exists only once the SDK has started (lib/tracing.ts), and ids
 * are carried whether or not this process traces.
 */
const w3c = new W3CTraceContextPropagator();
/** The carrier is the `traceparent` value itself: no headers object to build for one field. */
const traceparentValue: TextMapGetter<string> = {
  get: (value, key) => (key === TRACE_PARENT_HEADER ? value : undefined),
  keys: () => [TRACE_PARENT_HEADER],
};
/** Receives the injected header (used synchronously, so one object serves every call). */
const injected: Record<string, string> = { [TRACE_PARENT_HEADER]: '' };

/**
 * A valid `traceparent` header, or undefined (invalid ones are ignored, as the spec says).
 * Of the flags only `sampled` (the one flag of version 00) is kept.
 */
export function parseTraceparent(header: unknown): ParsedTraceparent | undefined {
  if (typeof header !== 'string') return undefined;
  const parent = trace.getSpanContext(w3c.extract(ROOT_CONTEXT, header, traceparentValue));
  if (!parent) return undefined;
  return { traceId: parent.traceId, parentId: parent.spanId, flags: parent.traceFlags & TraceFlags.SAMPLED ? '01' : '00' };
}

/**
 * Random bytes for ids, drawn a block at a time: one randomFillSync per 256 span ids instead
 * of a randomBytes call per id (each costs microseconds, on every request). The ids name
 * spans; they are no secret.
 */
const idBytes = Buffer.allocUnsafe(4096);
let idBytesUsed = idBytes.length;

function randomHex(bytes: number): string {
  for (;;) {
    if (idBytesUsed + bytes > idBytes.length) {
      randomFillSync(idBytes);
      idBytesUsed = 0;
    }
    const id = idBytes.toString('hex', idBytesUsed, (idBytesUsed += bytes));
    if (!ALL_ZERO.test(id)) return id;
  }
}

export function newSpanId(): string {
  return randomHex(8);
}

function newTraceId(): string {
  return randomHex(16);
}

/** The context of an incoming request: its trace continued from `traceparent` (sampled whatever its flag), or a new one. */
export function contextFromHeaders(headers: IncomingHttpHeaders, requestId?: string): RequestContext {
  const incoming = parseTraceparent(headers.traceparent);
  const header = headers['x-request-id'];
  return {
    requestId: requestId ?? (typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID()),
    traceId: incoming?.traceId ?? newTraceId(),
    spanId: newSpanId(),
    flags: SAMPLED,
  };
}

/** The `traceparent` of this process's span: answered to the client, sent on outgoing calls. */
export function traceparentOf(context: RequestContext): string {
  const span = context.span ?? trace.wrapSpanContext({ traceId: context.traceId, spanId: context.spanId, traceFlags: context.flags === '01' ? TraceFlags.SAMPLED : TraceFlags.NONE });
  injected[TRACE_PARENT_HEADER] = '';
  w3c.inject(trace.setSpan(ROOT_CONTEXT, span), injected, defaultTextMapSetter);
  // Our ids are never invalid (made here or read by parseTraceparent); an empty header would say otherwise.
  return injected[TRACE_PARENT_HEADER];
}

export function runWithContext<R>(context: RequestContext, body: () => R): R {
  return storage.run(context, body);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

/**
 * Runs `body` outside any request: work that merely happens to be scheduled during a request
 * (a reminder's timer, an outbox retry) must not be logged as part of it.
 */
export function detached<R>(body: () => R): R {
  return storage.exit(body);
}

/** The headers that carry the current request to another app through the sidecar. */
export function propagationHeaders(): Record<string, string> {
  const context = currentContext();
  return context ? { traceparent: traceparentOf(context), 'x-request-id': context.requestId } : {};
}

/**
 * Runs the rest of an HTTP request's handling in `context`. The body's stream events (data, end)
 * are emitted from the connection, outside any request, and body parsers call the next handler
 * from them: the request's own emitter is bound to the context so that chain stays inside.
 */
export function runRequest(req: EventEmitter, context: RequestContext, next: () => void): void {
  // Only this store is carried, not the whole async context: a fifth of AsyncResource.bind's
  // cost, which makes an async resource per request (≈5 µs against ≈1.5 µs).
  const emit = req.emit;
  req.emit = function emitInRequest(this: EventEmitter, ...args: Parameters<EventEmitter['emit']>): boolean {
    return storage.run(context, () => Reflect.apply(emit, this, args));
  };
  storage.run(context, next);
}
