// The process's Prometheus metrics (docs/observability.md): one registry per process, so the
// embedded gateway exposes its actors' metrics too, and each Dapr app exposes its own. Every
// label takes values from a closed list: a raw path, id or client-chosen string never becomes a
// label, or one client could grow the series without bound.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Topic, UsageUnit } from './events';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** The route family label: services/gateway/route-table.ts says which paths belong to which. */
export type RouteFamily = 'open' | 'compat' | 'member' | 'console' | 'console_ui' | 'orders' | 'admin' | 'catalog' | 'prototype' | 'health' | 'other';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Node accepts a few dozen methods: the rare ones share one label value. */
export function methodLabel(method: string | undefined): string {
  return method !== undefined && METHODS.has(method) ? method : 'OTHER';
}

const httpRequests = new Counter({
  name: 'payg_http_requests_total',
  help: 'HTTP requests answered, by route family, method and status (499: the client left before an answer was sent)',
  labelNames: ['family', 'method', 'status'] as const,
  registers: [registry],
});

const httpDuration = new Histogram({
  name: 'payg_http_request_duration_seconds',
  help: 'Time from the request to the end of its answer (streams included), by route family',
  labelNames: ['family'] as const,
  // From a cached catalog read (sub-millisecond) to the default provider timeout (120 s).
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  registers: [registry],
});

const tokensBilled = new Counter({
  name: 'payg_tokens_billed_total',
  help: 'Tokens of settled chat holds, by unit',
  labelNames: ['unit'] as const,
  registers: [registry],
});

const unpricedTokens = new Counter({
  name: 'payg_unpriced_tokens_total',
  help: 'Tokens of settled chats in a unit their model does not price, billed at the unit it refines (docs/money.md), by unit',
  labelNames: ['unit'] as const,
  registers: [registry],
});

const imagesBilled = new Counter({
  name: 'payg_images_billed_total',
  help: 'Images settled with a charge',
  registers: [registry],
});

const catalogReloads = new Counter({
  name: 'payg_catalog_reloads_total',
  help: 'Catalog file reloads (SIGHUP or a change of the file), by outcome: applied, refused (the catalog in force stays), unchanged (same bytes)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const holdsOpen = new Gauge({
  name: 'payg_holds_open',
  help: 'FundsHold holds opened minus holds ended by the actors of this process since it started (sum it over every actor host)',
  registers: [registry],
});

const platformBorne = new Counter({
  name: 'payg_platform_borne_total',
  help: 'Usage the platform bore that a hold could not charge, by reason (settle_after_expiry: the settle came after its hold expired); events',
  labelNames: ['reason'] as const,
  registers: [registry],
});

const platformBorneAmount = new Counter({
  name: 'payg_platform_borne_nano_usd_total',
  help: 'The cost of that usage in nano-USD, by reason',
  labelNames: ['reason'] as const,
  registers: [registry],
});

const remindersFired = new Counter({
  name: 'payg_reminders_fired_total',
  help: 'Actor reminders run, by actor type and outcome (failed: retried later)',
  labelNames: ['actor_type', 'outcome'] as const,
  registers: [registry],
});

const eventsPublished = new Counter({
  name: 'payg_events_published_total',
  help: 'Events handed to pub/sub, retries of the outbox included, by topic',
  labelNames: ['topic'] as const,
  registers: [registry],
});

const eventsAcknowledged = new Counter({
  name: 'payg_events_acknowledged_total',
  help: 'Events pub/sub took (Dapr: the publish answered 2xx; embedded: delivered in the commit), by topic',
  labelNames: ['topic'] as const,
  registers: [registry],
});

const providerErrors = new Counter({
  name: 'payg_provider_errors_total',
  help: 'Provider calls that failed, by kind (rejected, unavailable, timeout, protocol, other)',
  labelNames: ['kind'] as const,
  registers: [registry],
});

const upstreamAttempts = new Counter({
  name: 'payg_upstream_attempts_total',
  help: 'Provider call attempts of the chat routes, by provider entry and outcome (served, refused, unavailable, rate_limited, timeout, rejected, aborted; broken: a served stream cut after output)',
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
});

const upstreamAttemptSeconds = new Histogram({
  name: 'payg_upstream_attempt_seconds',
  help: 'How long a provider call attempt took to be answered (first byte) or to fail, by provider entry',
  labelNames: ['provider'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** Where the circuit gauge reads the circuits at each scrape (the gateway's UpstreamHealth). */
let circuitStates: () => Record<string, 'closed' | 'half_open' | 'open'> = () => ({});
const CIRCUIT_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

// Read at each scrape: registered, never set by hand.
new Gauge({
  name: 'payg_upstream_circuit_state',
  help: "Each provider entry's circuit as this instance sees it: 0 closed, 1 half-open (the next request probes), 2 open",
  labelNames: ['provider'] as const,
  registers: [registry],
  collect() {
    for (const [provider, state] of Object.entries(circuitStates())) this.set({ provider }, CIRCUIT_VALUE[state]);
  },
});

const ledgerEvents = new Counter({
  name: 'payg_ledger_events_consumed_total',
  help: 'Events delivered to the ledger app, by topic and outcome (appended, duplicate, retry, dropped)',
  labelNames: ['topic', 'outcome'] as const,
  registers: [registry],
});

const exportReads = new Counter({
  name: 'payg_export_reads_total',
  help: 'Embedded host: reads of an export\'s rows (1,000 at a time), by where they were read: reader (a child process) or gateway (the reader could not answer)',
  labelNames: ['where'] as const,
  registers: [registry],
});

const exportReaders = new Counter({
  name: 'payg_export_readers_started_total',
  help: 'Embedded host: export reader processes started (each ends past its memory bound or when idle)',
  registers: [registry],
});

export type ReminderOutcome = 'ok' | 'failed';
export type ProviderErrorLabel = 'rejected' | 'rate_limited' | 'unavailable' | 'timeout' | 'protocol' | 'other';
export type LedgerOutcome = 'appended' | 'duplicate' | 'retry' | 'dropped';
export type PlatformBorneReason = 'settle_after_expiry';
/**
 * What an actor moves through its host once its turn has committed (see ActorContext.adjustGauge):
 * the open-holds gauge, and the platform-borne counters (one event, `delta` nano-USD).
 */
export type ActorGauge = 'holds_open' | `platform_borne:${PlatformBorneReason}`;

const TOPIC_LABELS: ReadonlySet<string> = new Set<Topic>(['billing', 'usage']);

/** A topic from an event that failed validation must not become a label. */
const topicLabel = (topic: string) => (TOPIC_LABELS.has(topic) ? topic : 'other');

export const metrics = {
  /** `seconds` undefined: a request whose start is unknown (the parser refused it) is counted, not timed. */
  httpRequest(family: RouteFamily, method: string | undefined, status: number, seconds: number | undefined): void {
    httpRequests.inc({ family, method: methodLabel(method), status: String(status) });
    if (seconds !== undefined) httpDuration.observe({ family }, seconds);
  },
  tokensBilled(unit: UsageUnit, quantity: number): void {
    if (quantity > 0) tokensBilled.inc({ unit }, quantity);
  },
  unpricedTokens(unit: UsageUnit, quantity: number): void {
    if (quantity > 0) unpricedTokens.inc({ unit }, quantity);
  },
  imageBilled(): void {
    imagesBilled.inc();
  },
  catalogReload(outcome: 'applied' | 'refused' | 'unchanged'): void {
    catalogReloads.inc({ outcome });
  },
  actorGauge(gauge: ActorGauge, delta: number): void {
    if (gauge === 'holds_open') holdsOpen.inc(delta);
    else if (gauge === 'platform_borne:settle_after_expiry') {
      platformBorne.inc({ reason: 'settle_after_expiry' });
      platformBorneAmount.inc({ reason: 'settle_after_expiry' }, delta);
    }
  },
  reminderFired(actorType: string, outcome: ReminderOutcome): void {
    remindersFired.inc({ actor_type: actorType, outcome });
  },
  eventPublished(topic: string): void {
    eventsPublished.inc({ topic: topicLabel(topic) });
  },
  eventAcknowledged(topic: string): void {
    eventsAcknowledged.inc({ topic: topicLabel(topic) });
  },
  providerError(kind: ProviderErrorLabel): void {
    providerErrors.inc({ kind });
  },
  upstreamAttempt(provider: string, outcome: string, seconds?: number): void {
    upstreamAttempts.inc({ provider, outcome });
    if (seconds !== undefined) upstreamAttemptSeconds.observe({ provider }, seconds);
  },
  /** The circuits the gauge shows, read at each scrape. */
  watchCircuits(states: () => Record<string, 'closed' | 'half_open' | 'open'>): void {
    circuitStates = states;
  },
  ledgerEvent(topic: string, outcome: LedgerOutcome): void {
    ledgerEvents.inc({ topic: topicLabel(topic), outcome });
  },
  exportRead(where: 'reader' | 'gateway'): void {
    exportReads.inc({ where });
  },
  exportReaderStarted(): void {
    exportReaders.inc();
  },
};

/** The registry in the Prometheus text format, with its content type. */
export async function exposition(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** GET /metrics of every app: anonymous, like /healthz. */
export async function serveMetrics(_req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { contentType, body } = await exposition();
  res.statusCode = 200;
  res.setHeader('content-type', contentType);
  res.setHeader('cache-control', 'no-store');
  res.end(body);
}
