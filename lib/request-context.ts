// The request a piece of work belongs to, without passing it down every call: its request id
// and its W3C trace context (https://www.w3.org/TR/trace-context/): `traceparent`, and the
// caller's `tracestate` (vendor data passed on unchanged, when one came). Log lines carry both (see
// lib/logger.ts) and calls to the Dapr sidecar forward them, so one trace id follows a request
// from the gateway through daprd into the actors and ledger apps.

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync, randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, TraceFlags, defaultTextMapSetter, trace, type Span, type TextMapGetter, type TraceState } from '@opentelemetry/api';
import { TRACE_PARENT_HEADER, TraceState as W3CTraceState, W3CTraceContextPropagator } from '@opentelemetry/core';

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
  /** The caller's `tracestate`, as validated by parseTracestate: sent on with `traceparent`. */
  traceState?: TraceState;
}

export interface ParsedTraceparent {
  traceId: string;
  parentId: string;
  flags: string;
  /** The `tracestate` that came with it, when one did and it was valid. */
  traceState?: TraceState;
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
 * Of the flags only `sampled` (the one flag of version 00) is kept. `tracestate` is the header
 * that came with it, kept when valid (parseTracestate); never read without a valid traceparent.
 */
export function parseTraceparent(header: unknown, tracestate?: unknown): ParsedTraceparent | undefined {
  if (typeof header !== 'string') return undefined;
  const parent = trace.getSpanContext(w3c.extract(ROOT_CONTEXT, header, traceparentValue));
  if (!parent) return undefined;
  const parsed: ParsedTraceparent = { traceId: parent.traceId, parentId: parent.spanId, flags: parent.traceFlags & TraceFlags.SAMPLED ? '01' : '00' };
  if (tracestate !== undefined) parsed.traceState = parseTracestate(tracestate);
  return parsed;
}

/** The most list members a `tracestate` may hold (W3C Trace Context). */
export const TRACESTATE_MAX_MEMBERS = 32;
/** The length a `tracestate` is cut to, entries over 128 characters going first (the spec's SHOULD). */
export const TRACESTATE_MAX_LENGTH = 512;
const TRACESTATE_LARGE_MEMBER = 128;

/**
 * A caller's `tracestate` (one header, or several, which make one list), as W3C Trace Context
 * says a participant passes it on; undefined when there is nothing to pass. The grammar of each
 * member is OpenTelemetry's TraceState's own: a member it would not keep as it is (no `=`, a key
 * or value out of the grammar) or a key said twice makes the header malformed, and a header of
 * more than 32 members is not a valid list either: either is dropped whole, never an error.
 * Empty members (`a=1,,b=2`) are allowed and left out. Over 512 characters, members longer than
 * 128 are removed first (the rightmost first), then members from the end, until it fits.
 */
export function parseTracestate(header: unknown): TraceState | undefined {
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (typeof raw !== 'string') return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const part of raw.split(',')) {
    const member = part.trim();
    if (member === '') continue;
    const key = member.slice(0, member.indexOf('='));
    if (members.length === TRACESTATE_MAX_MEMBERS || keys.has(key) || new W3CTraceState(member).serialize() !== member) return undefined;
    keys.add(key);
    members.push(member);
  }
  let length = members.join(',').length;
  for (const large of [true, false]) {
    for (let i = members.length - 1; i >= 0 && length > TRACESTATE_MAX_LENGTH; i--) {
      if (large && members[i].length <= TRACESTATE_LARGE_MEMBER) continue;
      length -= members[i].length + (members.length > 1 ? 1 : 0);
      members.splice(i, 1);
    }
  }
  return members.length > 0 ? new W3CTraceState(members.join(',')) : undefined;
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

/** The trace context a request came with: its `traceparent` and `tracestate` headers, read (undefined when none or invalid). */
export function incomingTrace(headers: IncomingHttpHeaders): ParsedTraceparent | undefined {
  return parseTraceparent(headers.traceparent, headers.tracestate);
}

/**
 * The context of an incoming request: its trace continued from `traceparent` (sampled whatever
 * its flag) with the caller's `tracestate`, or a new one. `incoming` is that read of its headers.
 */
export function contextFromHeaders(headers: IncomingHttpHeaders, requestId?: string, incoming = incomingTrace(headers)): RequestContext {
  const header = headers['x-request-id'];
  return {
    requestId: requestId ?? (typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID()),
    traceId: incoming?.traceId ?? newTraceId(),
    spanId: newSpanId(),
    flags: SAMPLED,
    traceState: incoming?.traceState,
  };
}

/**
 * The `traceparent` of this process's span: answered to the client, sent on outgoing calls (with
 * `tracestateOf`, when the request came with one).
 */
export function traceparentOf(context: RequestContext): string {
  const span = context.span ?? trace.wrapSpanContext({ traceId: context.traceId, spanId: context.spanId, traceFlags: context.flags === '01' ? TraceFlags.SAMPLED : TraceFlags.NONE });
  injected[TRACE_PARENT_HEADER] = '';
  w3c.inject(trace.setSpan(ROOT_CONTEXT, span), injected, defaultTextMapSetter);
  // Our ids are never invalid (made here or read by parseTraceparent); an empty header would say otherwise.
  return injected[TRACE_PARENT_HEADER];
}

/** The `tracestate` sent on beside `traceparentOf(context)`: the caller's, unchanged; undefined when it sent none. */
export function tracestateOf(context: RequestContext): string | undefined {
  return context.traceState?.serialize();
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

/** The headers that carry the current request to another app through the sidecar (tracestate too, when the request has one). */
export function propagationHeaders(): Record<string, string> {
  const context = currentContext();
  if (!context) return {};
  const headers: Record<string, string> = { traceparent: traceparentOf(context), 'x-request-id': context.requestId };
  if (context.traceState) headers.tracestate = context.traceState.serialize();
  return headers;
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
