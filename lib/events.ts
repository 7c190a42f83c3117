// The shared event envelope. Every event has a deterministic id, so a redelivery is
// recognised by the ledger and never doubles an entry. The schemas here are the one definition:
// the types are inferred from them and the ledger checks events off the wire with them.

import { z } from 'zod';
import { routeRecordSchema } from './route-record';

export { ROUTE_OUTCOMES, routeRecordSchema, type RouteAttempt, type RouteRecord } from './route-record';

export const TOPICS = ['billing', 'usage'] as const;
export type Topic = (typeof TOPICS)[number];

const safeInt = z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

export const BILLING_KINDS = ['credit', 'debit', 'hold', 'charge', 'release', 'platform_borne'] as const;
export type BillingKind = (typeof BILLING_KINDS)[number];
/**
 * What a usage line bills. The TEXT_INPUT_CACHE_* units are prompt tokens the provider read from
 * or wrote to its prompt cache (TEXT_INPUT is then the rest of the prompt); a write for one hour
 * is priced apart from the default (five-minute) one, as Anthropic bills it.
 */
export const USAGE_UNITS = ['TEXT_INPUT', 'TEXT_INPUT_CACHE_READ', 'TEXT_INPUT_CACHE_WRITE', 'TEXT_INPUT_CACHE_WRITE_1H', 'TEXT_OUTPUT', 'IMAGE', 'SECOND'] as const;
export type UsageUnit = (typeof USAGE_UNITS)[number];

/** A billing event's data: what the ledger checks off the wire and what the actors emit. */
export const billingDataSchema = z.object({
  kind: z.enum(BILLING_KINDS),
  accountId: z.string().min(1),
  pool: z.string().min(1),
  /** Signed change of the balance in minor units (credit +, charge −; hold and release 0). */
  balanceDelta: safeInt,
  /** The amount the entry is about (the hold amount for hold/release, the charge for charge). */
  amount: safeInt.nonnegative(),
  holdId: z.string().optional(),
  reference: z.string().optional(),
  requestId: z.string().optional(),
  model: z.string().optional(),
  profileId: z.string().optional(),
});
export type BillingData = z.infer<typeof billingDataSchema>;

export const usageDataSchema = z.object({
  accountId: z.string().min(1),
  pool: z.string().min(1),
  holdId: z.string(),
  requestId: z.string(),
  model: z.string(),
  profileId: z.string(),
  lines: z.array(z.object({
    unit: z.enum(USAGE_UNITS), quantity: safeInt.nonnegative(), unitPrice: safeInt.nonnegative(), cost: safeInt.nonnegative(),
    /** TEXT_OUTPUT: how many of the quantity were reasoning tokens. */
    reasoningTokens: safeInt.nonnegative().optional(),
  })),
  /** What the customer is charged for these lines (may be 0 when the platform bears the cost). */
  charged: safeInt.nonnegative(),
  /** How the call was routed (a settle that said it): the upstream charged and every attempt. */
  route: routeRecordSchema.optional(),
  /**
   * The bill of the same change (a settle, an expiry with progress, a platform-borne record):
   * the ledger makes of it the bill row `id` beside the usage rows, in the same append. One event
   * where there were two: a settle publishes, stores and delivers half as many events.
   */
  bill: z.object({
    id: z.string().min(1).max(512),
    kind: z.enum(['charge', 'platform_borne']),
    balanceDelta: safeInt.max(0),
    amount: safeInt.nonnegative(),
    reference: z.string().optional(),
  }).optional(),
});
export type UsageData = z.infer<typeof usageDataSchema>;
export type UsageBill = NonNullable<UsageData['bill']>;

/** The envelope off the wire; its data is checked by topic (billingDataSchema, usageDataSchema). */
export const envelopeSchema = z.object({
  id: z.string().min(1).max(512),
  topic: z.enum(TOPICS),
  type: z.string(),
  occurredAt: z.iso.datetime(),
  source: z.string(),
  data: z.unknown(),
  traceparent: z.string().optional(),
  tracestate: z.string().optional(),
});

/**
 * The most events one pub/sub message carries. The actors' outbox publishes what it has ready as
 * one message per topic, `{ events }` (each event still checked on its own by the ledger); 250
 * events of a few hundred bytes stay well inside the ledger's 1 MB body limit.
 */
export const MAX_EVENTS_PER_MESSAGE = 250;

/** A pub/sub message carrying a batch of one topic's events. */
export interface EventBatchMessage {
  events: readonly EventEnvelope[];
}

/** The batch off the wire: its events are checked one by one (a bad one is dropped alone). */
export const eventBatchMessageSchema = z.object({ events: z.array(z.unknown()).min(1).max(MAX_EVENTS_PER_MESSAGE) });

export interface EventEnvelope<T = BillingData | UsageData> {
  id: string;
  topic: Topic;
  type: string;
  occurredAt: string;
  source: string;
  data: T;
  /** The W3C trace context of the event's publish span (set when it is published traced). */
  traceparent?: string;
  /** The `tracestate` of the request that made the event, when it came with one. */
  tracestate?: string;
}

/**
 * The `source` of the events a FundsHold actor emits (its actor type). The ledger counts the bills
 * they make apart (AccountLedgerView.fundsBills), for reconciliation to compare with the count the
 * actor keeps: an image's late artifact bills the account from its ImageTask, which FundsHold never sees.
 */
export const FUNDS_HOLD_SOURCE = 'FundsHold';

export function billingEvent(id: string, occurredAtMs: number, data: BillingData, source = FUNDS_HOLD_SOURCE): EventEnvelope<BillingData> {
  return { id, topic: 'billing', type: `billing.${data.kind}`, occurredAt: new Date(occurredAtMs).toISOString(), source, data };
}

export function usageEvent(id: string, occurredAtMs: number, data: UsageData, source = FUNDS_HOLD_SOURCE): EventEnvelope<UsageData> {
  return { id, topic: 'usage', type: 'usage.recorded', occurredAt: new Date(occurredAtMs).toISOString(), source, data };
}
