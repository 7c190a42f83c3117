// Ledger rows derived from events: one bill row per billing event (its id is the event id) or
// per bill a usage event carries (its id is the bill's), and one usage row per usage line (id
// `<eventId>:<unit>`). The ids are also the dedupe marks, so a redelivered event is recognised and
// never doubles a row.

import { billingDataSchema, envelopeSchema, usageDataSchema, type BillingData, type EventEnvelope, type Topic, type UsageData, type UsageUnit } from '../../lib/events';
import { allocateInOrder, toJsonAmount } from '../../lib/money';
import type { SpendingBase, SpendingDays } from './spending';

export class PoisonedEvent extends Error {}

/** Validates an event off the wire; a malformed one is poisoned (dropped, never retried). */
export function parseEvent(raw: unknown): EventEnvelope {
  const base = envelopeSchema.safeParse(raw);
  if (!base.success) throw new PoisonedEvent(`malformed event envelope: ${base.error.issues[0]?.message}`);
  const schema = base.data.topic === 'billing' ? billingDataSchema : usageDataSchema;
  const data = schema.safeParse(base.data.data);
  if (!data.success) throw new PoisonedEvent(`malformed ${base.data.topic} event ${base.data.id}: ${data.error.issues[0]?.path.join('.')} ${data.error.issues[0]?.message}`);
  return { ...base.data, data: data.data } as EventEnvelope;
}

/**
 * The events a stored event stands for: itself, or for a usage event that carries its bill (a
 * settle's, lib/events.ts) the billing event of that bill, then the usage event without it. Each
 * part is appended once by its own id, in the same store call, so the rows are those two events
 * would make, and a part already appended (an earlier delivery) is a duplicate alone.
 */
export function eventParts(event: EventEnvelope): EventEnvelope[] {
  if (event.topic !== 'usage' || (event.data as UsageData).bill === undefined) return [event];
  const { bill, ...usage } = event.data as UsageData;
  const { accountId, pool, holdId, requestId, model, profileId } = usage;
  const { id, kind, balanceDelta, amount, reference } = bill!;
  // The fields in the order a billing event of the same change has them (rows and exports alike).
  const billing: BillingData = { accountId, pool, holdId, requestId, model, profileId, kind, balanceDelta, amount, ...(reference !== undefined ? { reference } : {}) };
  return [
    { ...event, id, topic: 'billing', type: `billing.${kind}`, data: billing },
    { ...event, data: usage },
  ];
}

/** One bill row: the billing event's data with its id and time. */
export interface BillEntry extends BillingData {
  id: string;
  occurredAt: string;
}

type UsageLineData = UsageData['lines'][number];

/** One usage row: one line of a usage event, with the event's context. */
export interface UsageRow extends Omit<UsageData, 'lines' | 'charged'>, UsageLineData {
  /** `<eventId>:<unit>` (a unit repeated within one event: `<eventId>:<unit>:<n>`, n from 2) */
  id: string;
  occurredAt: string;
  /** This line's share of what the event charged the customer: the lines are covered in order. */
  charged: number;
  /** The event charged nothing for a cost above zero: the platform bore the whole cost. */
  platformBorne: boolean;
}

export type LedgerRow = BillEntry | UsageRow;

export type AppendOutcome = 'appended' | 'duplicate';

/** The rows an event becomes, oldest first: one bill row, or one usage row per line. */
export function toRows(event: EventEnvelope): LedgerRow[] {
  if (event.topic === 'billing') return [{ id: event.id, occurredAt: event.occurredAt, ...(event.data as BillingData) }];
  const { accountId, pool, holdId, requestId, model, profileId, lines, charged, route } = event.data as UsageData;
  const shares = allocateInOrder(BigInt(charged), lines.map((line) => BigInt(line.cost)));
  const platformBorne = charged === 0 && lines.some((line) => line.cost > 0);
  const seen = new Map<UsageUnit, number>();
  return lines.map((line, i) => {
    const nth = (seen.get(line.unit) ?? 0) + 1;
    seen.set(line.unit, nth);
    return {
      id: nth === 1 ? `${event.id}:${line.unit}` : `${event.id}:${line.unit}:${nth}`,
      occurredAt: event.occurredAt,
      accountId, pool, holdId, requestId, model, profileId,
      unit: line.unit, quantity: line.quantity, unitPrice: line.unitPrice, cost: line.cost,
      ...(line.reasoningTokens !== undefined ? { reasoningTokens: line.reasoningTokens } : {}),
      charged: toJsonAmount(shares[i]),
      platformBorne,
      // The call's route, on each of its rows (absent when its settle said none).
      ...(route !== undefined ? { route } : {}),
    };
  });
}

export interface AccountLedgerView {
  accountId: string;
  pool: string;
  /** Σ balanceDelta of the bills: what the ledger says the balance is (kept as a running total). */
  balance: number;
  /** Bill rows (one per billing event). */
  bills: number;
  /**
   * Of `bills`, those made by a FundsHold actor's events (source FUNDS_HOLD_SOURCE): what the
   * actor's own count of the bills it emitted (FundsState.bills) must equal. Absent: the totals
   * were written before this was counted (2026-11-29), unknown.
   */
  fundsBills?: number;
  /** Usage events (a chat is one, an image is one). */
  usage: number;
  /** Usage rows (one per line of a usage event): what the usage pages count. */
  usageRows: number;
}

export interface LedgerAccount {
  accountId: string;
  pool: string;
}

/**
 * The ledger's storage: append is atomic and idempotent by event id. Rows of one account and
 * topic are numbered 1, 2, … in append order and never move, so a position read once stays valid.
 */
export interface LedgerStore {
  append(event: EventEnvelope): Promise<AppendOutcome>;
  /**
   * Appends the events in their order, each once by id (a repeat, within the call or of an
   * earlier one, is a duplicate), in one call to the storage: one outcome per event. A usage
   * event with its bill is its two parts (eventParts), each once by its own id: appended when
   * either was new. A failure may leave the first events appended: a retry finds them duplicates.
   */
  appendAll(events: readonly EventEnvelope[]): Promise<AppendOutcome[]>;
  account(accountId: string, pool: string): Promise<AccountLedgerView>;
  /** Whether the event was appended (its acknowledgment: a late image artifact waits for it). */
  has(eventId: string): Promise<boolean>;
  /** How many rows the account has on the topic. */
  count(topic: Topic, accountId: string, pool: string): Promise<number>;
  /** Rows `from` to `to` (positions from 1, inclusive), newest first. */
  rows(topic: Topic, accountId: string, pool: string, from: number, to: number): Promise<LedgerRow[]>;
  /** The ids among `ids` that were appended (one round trip for a batch). */
  stored(ids: readonly string[]): Promise<string[]>;
  /**
   * Enters an account and pool in the index with no money rows (idempotent): reconciliation then
   * covers it even before its first event reaches the ledger.
   */
  register(accountId: string, pool: string): Promise<void>;
  /**
   * The last usage row position the spending sums leave out (rows appended by a version that kept
   * none): fixed by the first append that keeps them; until then every row there is.
   */
  spendingFrom(accountId: string, pool: string): Promise<number>;
  /** The kept sums of usage events after `spendingFrom`: charged per model for each day from `fromDay` to `toDay` (YYYY-MM-DD, inclusive) that has any. */
  spendingDays(accountId: string, pool: string, fromDay: string, toDay: string): Promise<SpendingDays>;
  /** The sums of the rows up to `spendingFrom`, as last saved (spending.ts). */
  spendingBase(accountId: string, pool: string): Promise<SpendingBase | undefined>;
  saveSpendingBase(accountId: string, pool: string, base: SpendingBase): Promise<void>;
  /** Every account (with its pool) the ledger has rows for or registered, each once, in no particular order. */
  accounts(): AsyncIterable<LedgerAccount>;
  close(): Promise<void>;
}
