// The ledger service as a Dapr app: subscriptions for the billing and usage topics, and the
// reads the gateway makes through service invocation.

import { Readable } from 'node:stream';
import express from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { errorResponder } from '../../lib/error-responder';
import { GatewayError, toGatewayError } from '../../lib/errors';
import { eventBatchMessageSchema, TOPICS } from '../../lib/events';
import { serveMetrics } from '../../lib/metrics';
import { failCurrentSpan, linkTo, linkToContext, messagingAttributes, requestContext, SpanKind, traced, tracedFrom, tracingEnabled } from '../../lib/tracing';
import { sendStream } from '../../lib/http-stream';
import { balancesAt, ledgerBalances, MAX_BALANCES_SPAN } from './balances';
import { exportItems, readPage } from './console';
import { CONSOLE_KINDS, parseExportQuery, parsePageQuery, parseSpendingQuery, type ConsoleKind } from './console-query';
import type { LedgerStore } from './entries';
import { exportHeaders, exportStream } from './export-format';
import { createEventHandler, type DeliveryStatus } from './subscriber';
import { readSpending } from './spending';

export const PUBSUB_NAME = 'pubsub';

export function createLedgerApp(store: LedgerStore, options: { logger?: Logger; ready?: () => Promise<boolean> } = {}) {
  const app = express();
  const handleEvents = createEventHandler(store, options.logger);
  // daprd forwards the publisher's traceparent with each delivery and each service invocation.
  app.use(requestContext());
  app.use(express.json({ limit: '1mb', type: ['application/json', 'application/cloudevents+json'] }));

  app.get('/dapr/subscribe', (_req, res) => {
    res.json(TOPICS.map((topic) => ({ pubsubname: PUBSUB_NAME, topic, route: `/events/${topic}` })));
  });

  // The actors' outbox asks, in one call, which of the events it keeps the ledger has stored
  // (docs/money.md): the confirmed ones it forgets, the others it sends again.
  app.post('/events/stored', async (req, res) => {
    const { ids } = parseBody(eventIds, req.body);
    res.json({ stored: await store.stored(ids) });
  });

  // Direct delivery (reconciliation's repair): the events are appended as a pub/sub delivery would
  // append them, idempotently by id; the answer names those the ledger now holds.
  app.post('/events/append', async (req, res) => {
    const { events } = parseBody(eventBatch, req.body);
    const statuses = await handleEvents(events);
    const dropped = events.flatMap((event, i) => (statuses[i] === 'DROP' ? [String((event as { id?: unknown }).id)] : []));
    const ids = events.flatMap((event) => (typeof (event as { id?: unknown }).id === 'string' ? [(event as { id: string }).id] : []));
    res.json({ stored: await store.stored(ids), dropped });
  });

  app.post('/events/:topic', async (req, res) => {
    // Dapr wraps what was published in a CloudEvent; its `data` is what the actors sent: a batch
    // of events (`{ events }`), or one envelope (how earlier versions published).
    const data = payloadOf(req.body);
    const { topic } = req.params;
    const batch = eventBatchMessageSchema.safeParse(data);
    const status = batch.success ? await handleBatch(topic, batch.data.events) : await handleOne(topic, data);
    res.status(200).json({ status });
  });

  /** One envelope: consumed under daprd's delivery span, linked to the publish it names. */
  async function handleOne(topic: string, event: unknown): Promise<DeliveryStatus> {
    return traced(`process ${topic}`, { kind: SpanKind.CONSUMER, links: linkTo(traceContextIn(event).traceparent), attributes: messagingAttributes('process', topic, idOf(event)) }, async () => consumption((await handleEvents([event]))[0]));
  }

  /**
   * A batch: its events are appended in their order with one store call, each idempotently by
   * id (a poisoned one is dropped alone). Traced, each consumption joins the trace of the request
   * that made the event (under the publish span it names), linked to this delivery. The delivery
   * is retried when any event could not be stored: the stored ones are duplicates then.
   */
  async function handleBatch(topic: string, events: readonly unknown[]): Promise<DeliveryStatus> {
    const handled = handleEvents(events);
    if (tracingEnabled()) {
      const links = linkToContext();
      await Promise.all(events.map((event, i) =>
        tracedFrom(traceContextIn(event), `process ${topic}`, { kind: SpanKind.CONSUMER, links, attributes: messagingAttributes('process', topic, idOf(event)) }, async () => consumption((await handled)[i]))));
    }
    return (await handled).includes('RETRY') ? 'RETRY' : 'SUCCESS';
  }

  // Whether an event has been appended: the acknowledgment a late image artifact waits for.
  app.get('/events/:eventId', async (req, res) => {
    const found = await store.has(req.params.eventId);
    res.status(found ? 200 : 404).json({ id: req.params.eventId, appended: found });
  });

  // An account made by the operator API enters the index before its creation is answered, so
  // reconciliation covers it even while none of its events has arrived.
  app.put('/accounts/:accountId/pools/:pool', async (req, res) => {
    await store.register(req.params.accountId, req.params.pool);
    res.status(204).end();
  });

  app.get('/accounts/:accountId/pools/:pool', async (req, res) => {
    res.json(await store.account(req.params.accountId, req.params.pool));
  });

  // The console's reads (services/ledger/console.ts), for the gateway, which has authenticated
  // the caller and names the caller's own account in the path.
  app.get('/accounts/:accountId/pools/:pool/:kind/page', async (req, res) => {
    const kind = consoleKind(req.params.kind);
    res.json(await readPage(store, kind, req.params.accountId, req.params.pool, parsePageQuery(req.query, kind)));
  });

  app.get('/accounts/:accountId/pools/:pool/spending', async (req, res) => {
    res.json(await readSpending(store, req.params.accountId, req.params.pool, parseSpendingQuery(req.query)));
  });

  app.get('/accounts/:accountId/pools/:pool/:kind/export', async (req, res) => {
    const kind = consoleKind(req.params.kind);
    const query = parseExportQuery(req.query, kind);
    res.set(exportHeaders(kind, query.format));
    await sendStream(exportStream(kind, query.format, exportItems(store, kind, req.params.accountId, req.params.pool, query)), res);
  });

  // Reconciliation's check of a difference: an account's balance at each bill count from `from` to
  // `to` (the balance of the moment it had that many bills; its running total and bill count now
  // are the route above).
  app.get('/accounts/:accountId/pools/:pool/balances', async (req, res) => {
    const { from, to } = parseBody(balancesQuery, req.query);
    if (to < from || to - from > MAX_BALANCES_SPAN) throw new GatewayError('invalid_request', `to must be from from to from + ${MAX_BALANCES_SPAN}`);
    res.json({ balances: await balancesAt(store, req.params.accountId, req.params.pool, from, to) });
  });

  // Reconciliation: every account with its balance recomputed from its bill rows, as JSON Lines.
  app.get('/balances', async (_req, res) => {
    res.set('content-type', 'application/x-ndjson; charset=utf-8');
    await sendStream(Readable.from(balanceLines(store)), res);
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/metrics', serveMetrics);

  app.get('/readyz', async (_req, res) => {
    const ready = options.ready ? await options.ready().catch(() => false) : true;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready' });
  });

  // Native bodies without a request id (the ledger's requests have none); an export already
  // started is cut, so the gateway never takes it for a complete one.
  app.use(errorResponder({ logger: options.logger, classify: toGatewayError, started: 'cut' }));

  return app;
}

const MAX_BATCH = 1000;
const eventIds = z.object({ ids: z.array(z.string().min(1).max(512)).max(MAX_BATCH) });
const billCount = (name: string) => z.string({ error: `${name} must be given once` }).regex(/^[0-9]{1,15}$/, `${name} must be a whole number`).transform(Number);
const balancesQuery = z.strictObject({ from: billCount('from'), to: billCount('to') });
const eventBatch = z.object({ events: z.array(z.unknown()).max(MAX_BATCH) });

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new GatewayError('invalid_request', `${parsed.error.issues[0]?.path.join('.') || 'body'}: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

function consoleKind(value: string | undefined): ConsoleKind {
  if (!CONSOLE_KINDS.includes(value as ConsoleKind)) throw new GatewayError('not_found', `no console list ${value}`);
  return value as ConsoleKind;
}

async function* balanceLines(store: LedgerStore): AsyncGenerator<string> {
  for await (const balance of ledgerBalances(store)) yield `${JSON.stringify(balance)}\n`;
}

/** The id an event says it has ('' when it has none: it is dropped as poisoned). */
/** An event's consumption, its span (when traced) in error unless the event was stored: retried, or dropped as poisoned. */
function consumption(status: DeliveryStatus): DeliveryStatus {
  if (status === 'RETRY') failCurrentSpan('the event was not stored: redelivery requested');
  else if (status === 'DROP') failCurrentSpan('the event is not valid: dropped');
  return status;
}

function idOf(event: unknown): string {
  const id = typeof event === 'object' && event !== null ? (event as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : '';
}

/** The trace context an event carries (its publish span's `traceparent`, and the `tracestate` of the request that made it). */
function traceContextIn(event: unknown): { traceparent?: unknown; tracestate?: unknown } {
  return typeof event === 'object' && event !== null ? (event as { traceparent?: unknown; tracestate?: unknown }) : {};
}

/**
 * What a delivery carries: the CloudEvent's `data`, or its `data_base64` read as JSON (the actors
 * publish their batches as opaque bytes); a body that is no CloudEvent is taken whole.
 */
export function payloadOf(body: unknown): unknown {
  if (!body || typeof body !== 'object') return body;
  const event = body as { data?: unknown; data_base64?: unknown };
  if (typeof event.data_base64 === 'string') {
    const text = Buffer.from(event.data_base64, 'base64').toString('utf8');
    try {
      return JSON.parse(text);
    } catch {
      return text; // not JSON: refused as a poisoned event
    }
  }
  return 'data' in event ? event.data : body;
}
