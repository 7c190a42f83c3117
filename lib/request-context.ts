// The request a piece of work belongs to, without passing it down every call: its request id
// and its W3C trace context (https://www.w3.org/TR/trace-context/). Log lines carry both (see
// lib/logger.ts) and calls to the Dapr sidecar forward them, so one trace id follows a request
// from the gateway through daprd into the actors and ledger apps.

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync, randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { Span } from '@opentelemetry/api';

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

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * A trace this process starts is marked sampled: no span is recorded here, but the deployment's
 * daprd sidecars sample every trace (dapr/config.yaml) and follow the parent's decision, so an
 * unsampled mark would silently switch their tracing off for gateway requests.
 */
const NEW_TRACE_FLAGS = '01';

/** A valid `traceparent` header, or undefined (invalid ones are ignored, as the spec says). */
export function parseTraceparent(header: unknown): ParsedTraceparent | undefined {
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, parentId, flags, rest] = match;
  if (version === 'ff') return undefined;
  // Version 00 has exactly four fields; later versions may append more, which we do not read.
  if (version === '00' && rest !== undefined) return undefined;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(parentId)) return undefined;
  return { traceId, parentId, flags };
}

/**
 * Random bytes for ids, drawn from the system in 4 KiB batches (as randomUUID does): a
 * randomBytes call per id is a getrandom system call, two per request on the hot path.
 */
const RANDOM_BATCH = 4096;
const randomBatch = Buffer.allocUnsafeSlow(RANDOM_BATCH);
let randomOffset = RANDOM_BATCH;

/** `bytes` fresh random bytes as lowercase hex, never all zero (W3C trace context forbids it). */
function randomHex(bytes: number): string {
  for (;;) {
    if (randomOffset + bytes > RANDOM_BATCH) {
      randomFillSync(randomBatch);
      randomOffset = 0;
    }
    const id = randomBatch.toString('hex', randomOffset, randomOffset + bytes);
    randomOffset += bytes;
    if (!ALL_ZERO.test(id)) return id;
  }
}

export function newSpanId(): string {
  return randomHex(8);
}

function newTraceId(): string {
  return randomHex(16);
}

/** The context of an incoming request: its trace continued from `traceparent`, or a new one. */
export function contextFromHeaders(headers: IncomingHttpHeaders, requestId?: string): RequestContext {
  const incoming = parseTraceparent(headers.traceparent);
  const header = headers['x-request-id'];
  return {
    requestId: requestId ?? (typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID()),
    traceId: incoming?.traceId ?? newTraceId(),
    spanId: newSpanId(),
    flags: incoming?.flags ?? NEW_TRACE_FLAGS,
  };
}

/** The `traceparent` of this process's span: answered to the client, sent on outgoing calls. */
export function traceparentOf(context: RequestContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags}`;
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
