// Ledger entries derived from events: a bill line for every billing event, a usage record for
// every usage event. The event id is the entry id, so a redelivered event is recognised.

import { z } from 'zod';
import { TOPICS, type BillingData, type EventEnvelope, type UsageData } from '../../lib/events';

const safeInt = z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

const billingData = z.object({
  kind: z.enum(['credit', 'hold', 'charge', 'release', 'platform_borne']),
  accountId: z.string().min(1),
  pool: z.string().min(1),
  balanceDelta: safeInt,
  amount: safeInt.nonnegative(),
  holdId: z.string().optional(),
  reference: z.string().optional(),
  requestId: z.string().optional(),
  model: z.string().optional(),
  profileId: z.string().optional(),
});

const usageData = z.object({
  accountId: z.string().min(1),
  pool: z.string().min(1),
  holdId: z.string(),
  requestId: z.string(),
  model: z.string(),
  profileId: z.string(),
  lines: z.array(z.object({ unit: z.enum(['TEXT_INPUT', 'TEXT_OUTPUT', 'IMAGE', 'SECOND']), quantity: safeInt.nonnegative(), unitPrice: safeInt.nonnegative(), cost: safeInt.nonnegative() })),
  charged: safeInt.nonnegative(),
});

const envelope = z.object({
  id: z.string().min(1).max(512),
  topic: z.enum(TOPICS),
  type: z.string(),
  occurredAt: z.iso.datetime(),
  source: z.string(),
  data: z.unknown(),
  traceparent: z.string().optional(),
});

export class PoisonedEvent extends Error {}

/** Validates an event off the wire; a malformed one is poisoned (dropped, never retried). */
export function parseEvent(raw: unknown): EventEnvelope {
  const base = envelope.safeParse(raw);
  if (!base.success) throw new PoisonedEvent(`malformed event envelope: ${base.error.issues[0]?.message}`);
  const schema = base.data.topic === 'billing' ? billingData : usageData;
  const data = schema.safeParse(base.data.data);
  if (!data.success) throw new PoisonedEvent(`malformed ${base.data.topic} event ${base.data.id}: ${data.error.issues[0]?.path.join('.')} ${data.error.issues[0]?.message}`);
  return { ...base.data, data: data.data } as EventEnvelope;
}

export interface BillEntry extends BillingData {
  id: string;
  occurredAt: string;
}

export interface UsageEntry extends UsageData {
  id: string;
  occurredAt: string;
}

export function toEntry(event: EventEnvelope): BillEntry | UsageEntry {
  return { id: event.id, occurredAt: event.occurredAt, ...(event.data as BillingData | UsageData) } as BillEntry | UsageEntry;
}

export interface AccountLedgerView {
  accountId: string;
  pool: string;
  /** Σ balanceDelta of the bills: what the ledger says the balance is. */
  balance: number;
  bills: number;
  usage: number;
}

/** The ledger's storage: append is atomic and idempotent by event id. */
export interface LedgerStore {
  append(event: EventEnvelope): Promise<'appended' | 'duplicate'>;
  account(accountId: string, pool: string): Promise<AccountLedgerView>;
  /** Whether the event was appended (its acknowledgment: a late image artifact waits for it). */
  has(eventId: string): Promise<boolean>;
  close(): Promise<void>;
}
