// What an account was charged per UTC day and model, from its usage events: the console's
// Overview chart, answered from sums the ledger keeps as it appends (never by reading the rows).
//
// Each store keeps, per account, pool and UTC day, the charged sum of each model's usage events,
// moved in the same step as the event's rows. Rows appended by a version of the ledger that kept
// no sums (positions 1 to `spendFrom`, which the first append that keeps them fixes) are summed
// here once, by reading them, and the result is kept beside the sums ("the base"): those rows
// never change, so the base is read again, not recomputed, until nothing is left to add.

import type { SpendingDaysQuery } from './console-query';
import type { LedgerStore, UsageRow } from './entries';

/** Charged (nano-USD) per model on one UTC day. */
export type DaySpending = Record<string, number>;
/** Days (YYYY-MM-DD) → charged per model. */
export type SpendingDays = Record<string, DaySpending>;

/** The sums of the rows appended before the ledger kept sums: rows 1 to `upTo`. */
export interface SpendingBase {
  upTo: number;
  days: SpendingDays;
}

export interface SpendingItem {
  day: string;
  model: string;
  /** What the day's usage events of this model charged the customer (nano-USD; 0 when the platform bore it). */
  charged: number;
}

export interface SpendingAnswer {
  from: string;
  to: string;
  /** By day, then by model; a day or a model without usage has no item. */
  items: SpendingItem[];
}

/** The rows read per step while the base is summed. */
const BASE_CHUNK_ROWS = 1000;

/** The UTC day of an event's time. */
/** The form every event's occurredAt is written in (Date's toISOString). */
const CANONICAL_INSTANT = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The UTC day (YYYY-MM-DD) of an instant. Read off the text when it is in the canonical form and
 * names a day its month has (one per usage event appended: parsing a date and printing it again
 * cost 3 µs of a chat's settle); any other form (an offset, no milliseconds, a 31st of a month of
 * 30 days, which Date reads as a day of the next month) through Date, as before.
 */
export function dayOf(occurredAt: string): string {
  if (CANONICAL_INSTANT.test(occurredAt)) {
    const year = Number(occurredAt.slice(0, 4));
    const month = Number(occurredAt.slice(5, 7));
    const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    if (Number(occurredAt.slice(8, 10)) <= MONTH_DAYS[month - 1] + (leap ? 1 : 0)) return occurredAt.slice(0, 10);
  }
  return new Date(occurredAt).toISOString().slice(0, 10);
}

/** Adds `charged` to a model's sum of one day (the sums the stores keep and the base alike). */
export function addCharged(models: DaySpending, model: string, charged: number): void {
  models[model] = (models[model] ?? 0) + charged;
}

export function addSpending(days: SpendingDays, day: string, model: string, charged: number): void {
  addCharged((days[day] ??= {}), model, charged);
}

export async function readSpending(store: LedgerStore, accountId: string, pool: string, query: SpendingDaysQuery): Promise<SpendingAnswer> {
  // The position first, the sums after: a row appended in between is in the sums, never in both.
  const upTo = await store.spendingFrom(accountId, pool);
  const days = await store.spendingDays(accountId, pool, query.from, query.to);
  if (upTo > 0) {
    const base = await baseOf(store, accountId, pool, upTo);
    for (const [day, models] of Object.entries(base)) {
      if (day < query.from || day > query.to) continue;
      for (const [model, charged] of Object.entries(models)) addSpending(days, day, model, charged);
    }
  }
  const items: SpendingItem[] = [];
  for (const day of Object.keys(days).sort()) {
    for (const model of Object.keys(days[day]).sort()) items.push({ day, model, charged: days[day][model] });
  }
  return { from: query.from, to: query.to, items };
}

async function baseOf(store: LedgerStore, accountId: string, pool: string, upTo: number): Promise<SpendingDays> {
  const kept = await store.spendingBase(accountId, pool);
  if (kept?.upTo === upTo) return kept.days;
  const days: SpendingDays = {};
  for (let from = 1; from <= upTo; from += BASE_CHUNK_ROWS) {
    for (const row of (await store.rows('usage', accountId, pool, from, Math.min(upTo, from + BASE_CHUNK_ROWS - 1))) as UsageRow[]) {
      addSpending(days, dayOf(row.occurredAt), row.model, row.charged);
    }
  }
  await store.saveSpendingBase(accountId, pool, { upTo, days });
  return days;
}
