// Traces: OpenTelemetry spans of each request's hops, exported over OTLP when the deployment
// names a collector (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and not
// made at all otherwise. Context is carried by this code base itself (lib/request-context.ts):
// no OpenTelemetry context manager and no auto-instrumentation, so an untraced deployment pays
// nothing and a traced one records exactly the spans written here:
//
//   gateway  HTTP server span ─┬─ actor call (FundsHold/reserve …)   ─ daprd ─ actors app server span ─ state, publish
//                              ├─ provider call (GenAI attributes)
//                              └─ …                                     publish ─ ledger consume (one per event)
//   actors   send (a batch of events, its own trace, linked to each publish) ─ daprd ─ ledger delivery
//
// W3C trace context goes along every call to a sidecar (lib/dapr-http.ts) and in each event's
// envelope, so daprd's own spans join the trace of the call that made them, and the ledger's
// consume of an event joins the trace of the request that emitted it (docs/observability.md).

import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeSDK, tracing as sdkTrace } from '@opentelemetry/sdk-node';
import type { IncomingHttpHeaders } from 'node:http';
import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { traceExportOf } from './config';
import { contextFromHeaders, currentContext, detached, incomingTrace, parseTraceparent, runRequest, runWithContext, type ParsedTraceparent, type RequestContext } from './request-context';

export { SpanKind };

let sdk: NodeSDK | undefined;
let tracer: Tracer | undefined;

/**
 * Starts the OpenTelemetry Node SDK for `service` when the environment asks for it (the SDK's
 * own variables, checked by `traceExportOf`: a bad value stops the start): spans go in batches
 * (OTEL_BSP_* tune them) to the OTLP/HTTP protobuf endpoint, and `logger` is told where they go
 * and when they are lost. Every span is sampled, whatever the caller's traceparent says: a
 * client must not be able to switch tracing off for its own requests. Idempotent.
 */
export function startTracing(service: string, options: { env?: NodeJS.ProcessEnv; exporter?: sdkTrace.SpanExporter; logger?: Logger } = {}): boolean {
  const env = options.env ?? process.env;
  if (tracer) return true;
  let inner = options.exporter;
  let endpoint: string | undefined;
  if (!inner) {
    const target = traceExportOf(env);
    if (!target) return false;
    endpoint = target.url;
    // Given explicitly, so the URL checked and logged is the one used.
    inner = new OTLPTraceExporter({ url: endpoint });
  }
  const exporter = options.logger ? new ReportingExporter(inner, warnExportFailure(options.logger)) : inner;
  const processor = options.exporter ? new sdkTrace.SimpleSpanProcessor(exporter) : new sdkTrace.BatchSpanProcessor(exporter);
  sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || service,
    autoDetectResources: false,
    instrumentations: [],
    sampler: new sdkTrace.AlwaysOnSampler(),
    spanProcessors: [new DetachedSpanProcessor(processor)],
  });
  sdk.start();
  tracer = trace.getTracer('payg-gateway');
  if (endpoint !== undefined) options.logger?.info({ endpoint: shownEndpoint(endpoint) }, 'trace export on (OTLP)');
  return true;
}

/** The endpoint without what could be a credential (user and password, a query). */
function shownEndpoint(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/**
 * A span processor whose work runs outside any request. The batch processor starts its export
 * timer when a span ends, inside the request that ended it; without this, the export that timer
 * runs later (for the spans of many requests) and a failure's warning would carry that one
 * request's ids.
 */
class DetachedSpanProcessor implements sdkTrace.SpanProcessor {
  constructor(private readonly inner: sdkTrace.SpanProcessor) {}

  onStart(span: sdkTrace.Span, parent: Context): void {
    this.inner.onStart(span, parent);
  }

  onEnd(span: sdkTrace.ReadableSpan): void {
    detached(() => this.inner.onEnd(span));
  }

  forceFlush(): Promise<void> {
    return detached(() => this.inner.forceFlush());
  }

  shutdown(): Promise<void> {
    return detached(() => this.inner.shutdown());
  }
}

/** Told of failed exports: the error, how many spans were lost since the last report, and in all. */
export type ExportFailureHandler = (failure: { error: unknown; lostSpans: number; failedExports: number }) => void;

/** The handler every app uses: one warning line naming what was lost. */
export function warnExportFailure(logger: { warn(object: object, message: string): void }): ExportFailureHandler {
  return ({ error, lostSpans, failedExports }) =>
    logger.warn({ err: error, lostSpans, failedExports }, 'trace export failed: spans dropped (the collector refused, is unreachable or does not answer); told at most once a minute');
}

/** The longest a failing collector goes unreported: the first failure is told at once, then at most once per this. */
export const EXPORT_FAILURE_REPORT_MS = 60_000;

/**
 * An exporter that tells of its failures (a collector refusing, unreachable or never answering:
 * the batch's spans are dropped, and the SDK says nothing by itself), at most once a minute.
 */
export class ReportingExporter implements sdkTrace.SpanExporter {
  private lost = 0;
  private failedExports = 0;
  private reportedAt = -Infinity;

  constructor(private readonly inner: sdkTrace.SpanExporter, private readonly report: ExportFailureHandler, private readonly now: () => number = Date.now) {}

  export(spans: sdkTrace.ReadableSpan[], done: (result: { code: number; error?: Error }) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== 0) {
        this.lost += spans.length;
        this.failedExports += 1;
        if (this.now() - this.reportedAt >= EXPORT_FAILURE_REPORT_MS) {
          this.reportedAt = this.now();
          this.report({ error: result.error, lostSpans: this.lost, failedExports: this.failedExports });
          this.lost = 0;
        }
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Exports what is still buffered and stops (on shutdown). */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  tracer = undefined;
  await running?.shutdown().catch(() => undefined);
  // Unregisters the global provider, so a later start (tests) registers its own.
  if (running) trace.disable();
}

export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

function parentContext(parent: ParsedTraceparent | RequestContext | undefined): Context {
  if (!parent) return ROOT_CONTEXT;
  if ('span' in parent && parent.span) return trace.setSpan(ROOT_CONTEXT, parent.span);
  const spanId = 'spanId' in parent ? parent.spanId : parent.parentId;
  const spanContext: SpanContext = { traceId: parent.traceId, spanId, traceFlags: parseInt(parent.flags, 16) & 1, isRemote: true, traceState: parent.traceState };
  return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}

/** A link to the span of `context` (the current request's by default). */
export function linkToContext(context: RequestContext | undefined = currentContext()): Link[] {
  return context ? [{ context: { traceId: context.traceId, spanId: context.spanId, traceFlags: parseInt(context.flags, 16) & 1 } }] : [];
}

/** The span context a `traceparent` names, for a link (undefined when absent or invalid). */
export function linkTo(traceparent: unknown): Link[] {
  const parsed = parseTraceparent(traceparent);
  return parsed ? [{ context: { traceId: parsed.traceId, spanId: parsed.parentId, traceFlags: parseInt(parsed.flags, 16) & 1, isRemote: true } }] : [];
}

export interface SpanOptions {
  kind: SpanKind;
  attributes?: Attributes;
  links?: Link[];
}

/**
 * The context of an incoming request, with its server (or consumer) span when tracing is on:
 * the span continues the caller's `traceparent` (and carries its `tracestate`), or starts a
 * trace. Untraced, the ids are made up here (lib/request-context.ts) so logs and sidecars still
 * share one trace id.
 */
export function incomingContext(headers: IncomingHttpHeaders, name: string, options: SpanOptions, requestId?: string, traceIt = true): RequestContext {
  const incoming = incomingTrace(headers);
  const context = contextFromHeaders(headers, requestId, incoming);
  if (!tracer || !traceIt) return context;
  return withinSpan(context, tracer.startSpan(name, options, parentContext(incoming)));
}

/** A span under the current request's (or under `parent`), not made current; undefined when untraced. */
export function startSpan(name: string, options: SpanOptions, parent: RequestContext | undefined = currentContext()): Span | undefined {
  return tracer?.startSpan(name, options, parentContext(parent));
}

/** The request context whose outgoing calls and log lines belong to `span` (its tracestate, the one its parent had, going along). */
export function withinSpan(parent: RequestContext | undefined, span: Span): RequestContext {
  const ids = span.spanContext();
  return { requestId: parent?.requestId ?? ids.spanId, traceId: ids.traceId, spanId: ids.spanId, flags: ids.traceFlags & 1 ? '01' : '00', span, traceState: ids.traceState };
}

/** Marks the current request's span (when traced) as failed, without ending it: work that failed without throwing. */
export function failCurrentSpan(message: string): void {
  currentContext()?.span?.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Ends `span` with an error status when `error` is given. */
export function endSpan(span: Span | undefined, error?: unknown, attributes?: Attributes): void {
  if (!span) return;
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  span.end();
}

/**
 * Runs `body` in a child span of the current request: the span is current for everything
 * `body` calls (its sidecar calls carry it), and ends with `body`. Untraced: just `body()`.
 */
export function traced<R>(name: string, options: SpanOptions, body: () => Promise<R>): Promise<R> {
  if (!tracer) return body();
  const parent = currentContext();
  return runInSpan(tracer.startSpan(name, options, parentContext(parent)), parent, body);
}

/**
 * Runs `body` in a span that starts a trace of its own, outside whatever request is current (a
 * batch that serves many requests belongs to none of them; `links` name them). Untraced: `body()`
 * outside any request.
 */
export function tracedRoot<R>(name: string, options: SpanOptions, body: () => Promise<R>): Promise<R> {
  if (!tracer) return detached(body);
  return runInSpan(tracer.startSpan(name, options, ROOT_CONTEXT), undefined, body);
}

/**
 * Runs `body` in a span whose parent is the one `traceparent` names (a message's publish span, so
 * its consumption joins the trace of the request that made it, with the `tracestate` it carried),
 * or the current request's when the traceparent is absent or invalid.
 */
export function tracedFrom<R>(carrier: { traceparent?: unknown; tracestate?: unknown }, name: string, options: SpanOptions, body: () => Promise<R>): Promise<R> {
  if (!tracer) return body();
  const parent = currentContext();
  return runInSpan(tracer.startSpan(name, options, parentContext(parseTraceparent(carrier.traceparent, carrier.tracestate) ?? parent)), parent, body);
}

function runInSpan<R>(span: Span, parent: RequestContext | undefined, body: () => Promise<R>): Promise<R> {
  return runWithContext(withinSpan(parent, span), body).then(
    (result) => {
      span.end();
      return result;
    },
    (error: unknown) => {
      endSpan(span, error);
      throw error;
    },
  );
}

/** The same, for synchronous work. */
export function tracedSync<R>(name: string, options: SpanOptions, body: () => R, parent: RequestContext | undefined = currentContext()): R {
  if (!tracer) return body();
  const span = tracer.startSpan(name, options, parentContext(parent));
  try {
    const result = runWithContext(withinSpan(parent, span), body);
    span.end();
    return result;
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
}

/** Attributes of an actor call (the Dapr semantic names, kept the same on both hosts). */
export function actorAttributes(actorType: string, actorId: string, method: string): Attributes {
  return { 'dapr.actor.type': actorType, 'dapr.actor.id': actorId, 'dapr.actor.method': method, 'rpc.system': 'dapr', 'rpc.service': actorType, 'rpc.method': method };
}

/** The span name of an actor call, the same for its caller and its server and on both hosts. */
function actorSpanName(actorType: string, method: string): string {
  return `${actorType}/${method}`;
}

/** An actor call made by this process (client on Dapr, internal in process), around `body`. */
export function tracedActorCall<R>(kind: SpanKind, actorType: string, actorId: string, method: string, body: () => Promise<R>): Promise<R> {
  return traced(actorSpanName(actorType, method), { kind, attributes: actorAttributes(actorType, actorId, method) }, body);
}

/** Probes, scrapes and Dapr's own configuration reads: answered, never traced (they would be noise). */
export function untracedPath(path: string): boolean {
  return UNTRACED.test(path);
}

/**
 * A model call under the current request, named and described by the GenAI semantic
 * conventions (operation, system, request model); `endModelCall` adds the token counts.
 */
export function startModelCall(operation: 'chat' | 'generate_content' | 'embeddings', system: string, requestModel: string, provider: string, extra: Attributes = {}): Span | undefined {
  if (!tracer) return undefined;
  return startSpan(`${operation} ${requestModel}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'gen_ai.operation.name': operation, 'gen_ai.system': system, 'gen_ai.provider.name': system, 'gen_ai.request.model': requestModel, 'payg.provider': provider, ...extra },
  });
}

/**
 * Runs `open` (the request to the provider) as part of the model call's span, so the request
 * carries that span's `traceparent` (../providers/openai/client.ts): an upstream that traces
 * continues the trace under it. Untraced, the request's own context is left as it is.
 */
export function withinModelCall<R>(span: Span | undefined, open: () => R): R {
  return span ? runWithContext(withinSpan(currentContext(), span), open) : open();
}

export function endModelCall(span: Span | undefined, usage: { inputTokens: number; outputTokens: number } | undefined, error?: unknown): void {
  endSpan(span, error, usage ? usageAttributes(usage) : undefined);
}

/**
 * Ends a model call the gateway itself cut short (`reason`: `client_disconnected`, its client
 * left): no failure of the provider's, so its status stays unset; `payg.cancelled` says why, and
 * the tokens produced until then are counted when known.
 */
export function cancelModelCall(span: Span | undefined, reason: string, usage?: { inputTokens: number; outputTokens: number }): void {
  endSpan(span, undefined, { 'payg.cancelled': reason, ...(usage ? usageAttributes(usage) : {}) });
}

function usageAttributes(usage: { inputTokens: number; outputTokens: number }): Attributes {
  return { 'gen_ai.usage.input_tokens': usage.inputTokens, 'gen_ai.usage.output_tokens': usage.outputTokens };
}

/** Attributes of a publish or consume of one event. */
export function messagingAttributes(operation: 'publish' | 'process', topic: string, eventId: string): Attributes {
  return { 'messaging.system': 'dapr', 'messaging.operation.type': operation, 'messaging.destination.name': topic, 'messaging.message.id': eventId };
}

/** Attributes of the send of a batch of events (one pub/sub message). */
export function batchSendAttributes(topic: string, count: number): Attributes {
  return { 'messaging.system': 'dapr', 'messaging.operation.type': 'send', 'messaging.destination.name': topic, 'messaging.batch.message_count': count };
}

/**
 * One event handed to an in-process consumer (the embedded ledger): the producer span and,
 * under it, the consumer's span linked to it, as the Dapr topology shows them across apps.
 */
export function deliverInProcess(event: { topic: string; id: string }, consume: () => void): void {
  if (!tracer) return consume();
  tracedSync(`publish ${event.topic}`, { kind: SpanKind.PRODUCER, attributes: messagingAttributes('publish', event.topic, event.id) }, () =>
    tracedSync(`process ${event.topic}`, { kind: SpanKind.CONSUMER, links: linkToContext(), attributes: messagingAttributes('process', event.topic, event.id) }, consume));
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const UNTRACED = /^\/(?:(?:healthz|readyz|metrics)$|dapr\/)/;
const ACTOR_ROUTE = /^\/actors\/([^/]+)\/([^/]+)\/method\/(?:remind\/)?([^/?]+)/;

interface MinimalRequest extends EventEmitter {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  /** The route Express matched (the ledger app), known once it has run. */
  route?: { path?: unknown };
}

interface MinimalResponse {
  statusCode: number;
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

/**
 * Express-compatible middleware of the Dapr-side apps (actors, ledger): each request runs in its
 * own context, continued from the traceparent daprd forwarded, with a server span when traced
 * (an actor call's span says which actor type, id and method it ran). Any other request's span
 * is named by its method and, once Express has matched it, its route (`GET /accounts/:accountId/…`),
 * never by its path, which carries account and event ids: span names stay a bounded set.
 */
export function requestContext() {
  return function withRequestContext(req: MinimalRequest, res: MinimalResponse | undefined, next: () => void): void {
    const path = (req.url ?? '/').split('?')[0];
    if (!tracer || !res || untracedPath(path)) {
      runRequest(req, contextFromHeaders(req.headers), next);
      return;
    }
    const actor = ACTOR_ROUTE.exec(path);
    const name = actor ? actorSpanName(actor[1], actor[3]) : req.method ?? 'HTTP';
    const attributes: Attributes = actor
      ? { ...actorAttributes(actor[1], safeDecode(actor[2]), actor[3]), 'http.request.method': req.method }
      : { 'http.request.method': req.method, 'url.path': path };
    const context = incomingContext(req.headers, name, { kind: SpanKind.SERVER, attributes });
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = actor ? undefined : req.route?.path;
      if (typeof route === 'string') context.span?.updateName(`${req.method} ${route}`);
      endSpan(context.span, res.statusCode >= 500 ? `status ${res.statusCode}` : undefined, {
        'http.response.status_code': res.statusCode,
        ...(typeof route === 'string' ? { 'http.route': route } : {}),
      });
    };
    res.once('finish', end);
    res.once('close', end);
    runRequest(req, context, next);
  };
}
