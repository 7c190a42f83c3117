// The FundsHold actor's state and its pure helpers: the hot record (balance, open holds, open
// leases, the expiry reminders' bookkeeping) under one key, each ended hold and lease under its
// own key, and what is held, leased and available. Amounts are stored as decimal strings of
// nano-USD and computed in BigInt.

import { periodStarts, type SpendLimitName } from '../../lib/limits';
import { availableOf, fromStored, parseAmount, storedAmount, sumOf } from '../../lib/money';
import type { CarvedHold } from './FundsHoldInterface';
import type { HoldState } from './transitions';
import type { RecordedLine } from './usage';

export const STATE_KEY = 'funds';
export const CREDIT_KEY_PREFIX = 'credit:';
export const DEBIT_KEY_PREFIX = 'debit:';
/** Each ended hold is its own small record, so the hot state (balance, open holds) stays small. */
export const CLOSED_KEY_PREFIX = 'closed:';
/**
 * Expiry reminders are named by their due time: a one-shot reminder re-registered from its own
 * callback under the same name can be deleted when that callback completes (Dapr Scheduler).
 */
export const EXPIRY_REMINDER = 'expire-holds';
export const expiryReminderName = (dueAt: number) => `${EXPIRY_REMINDER}@${dueAt}`;
/**
 * The safety net: a periodic reminder kept while any hold is open, so an expiry whose one-shot
 * reminder was lost (host down when it came due, a crash before the state recorded it) is
 * caught by the next period. Its period: a quarter of the time to the earliest expiry when it
 * is set, within these bounds.
 */
export const NET_REMINDER = `${EXPIRY_REMINDER}:net`;
export const NET_MIN_PERIOD_MS = 1000;
export const NET_MAX_PERIOD_MS = 10 * 60 * 1000;
/** The reason a settle after expiry gives for the usage the platform bears (bill row reference, metric label). */
export const PLATFORM_BORNE_AFTER_EXPIRY = 'settle_after_expiry';

export interface OpenHold {
  amount: string;
  expiresAt: number;
  requestId: string;
  model: string;
  profileId: string;
  /** The usage delivered so far (progress): what expiry charges if the call never settles. */
  progress?: RecordedLine[];
  /**
   * The spend key of the API key the hold was made with (its charge counts against that key's
   * spend, key-spend.ts). Holds reserved before every key's spend was counted carry it only when
   * reserved under the key's spend limits.
   */
  apiKeyId?: string;
}

/** What a scope (the account, or one key) has been charged: today, this month (UTC, the actor's clock) and in all. */
export interface SpendCounter {
  day: { start: number; amount: string };
  month: { start: number; amount: string };
  total: string;
}

export interface ClosedHold {
  state: Exclude<HoldState, 'open'>;
  amount: string;
  charged: string;
  /** Expired holds: who the hold was for, and the usage its expiry charged (settle after expiry). */
  expired?: { requestId: string; model: string; profileId: string; lines: RecordedLine[] };
  /** Settle after expiry: the cost recorded as platform-borne (set once; a repeat records nothing). */
  borne?: string;
}

export interface FundsState {
  balance: string;
  holds: Record<string, OpenHold>;
  /** When the pending expiry reminder is due (null: none pending; in the past: lost, set again). */
  reminderDueAt: number | null;
  /** The safety net while holds are open: its period and when it is next due (absent: none). */
  net?: { periodMs: number; dueAt: number } | null;
  /** Open funds leases (absent: none). They expire like holds. */
  leases?: Record<string, OpenLease>;
  /** What the account has been charged, per period (absent in records from before spend limits: nothing counted yet). */
  spent?: SpendCounter;
  /**
   * The same per key, as an earlier version kept it here (only for keys under spend limits):
   * moved to the keys' own records (key-spend.ts) by the first turn that loads it.
   */
  keySpent?: Record<string, SpendCounter>;
  /**
   * How many bill rows this actor's events make in the ledger (each billing event, and the bill a
   * usage event carries: credits, debits, charges, releases, platform-borne records), counted in
   * the turn that emits them. Reconciliation compares it with the ledger's count of the bills
   * FundsHold's events made, so a lost bill that moves no balance (a release, a platform-borne
   * record) is seen too. Absent in records made before 2026-11-29: unknown, never compared (the
   * bills emitted before it was kept are not known), and never started later.
   */
  bills?: number;
}

/** A funds lease: `amount` locked for one gateway instance, `charged` of it spent so far. */
export interface OpenLease {
  amount: string;
  charged: string;
  expiresAt: number;
  /** Delivered usage of the lease's carved holds still running (what its expiry charges). */
  progress: Record<string, { amount: string; requestId: string; model: string; profileId: string; lines: RecordedLine[]; apiKeyId?: string }>;
  /** The numbers of its carved holds that have ended (CarvedHold.carve); absent: not counted (every item's record is read). */
  ended?: EndedCarves;
}

/**
 * Ended carve numbers as sorted, disjoint, half-open ranges, flat: [from0, to0, from1, to1, …].
 * Carves end about in the order they were made, so the ranges are about as many as the gaps
 * left by calls still in flight (a long stream holds one gap however many calls end after it).
 * Should they grow past MAX_ENDED_RANGES, the lease stops counting and reads every item's record
 * from then on.
 */
export type EndedCarves = number[];

export const MAX_ENDED_RANGES = 256;

/** Where `carve` is among the ranges: the index of the first range ending after it. */
function rangeOf(ended: EndedCarves, carve: number): number {
  let i = 0;
  while (i < ended.length && ended[i + 1] <= carve) i += 2;
  return i;
}

/** Whether the carved hold numbered `carve` may have ended: only a counted number not recorded as ended has not. */
export function mayHaveEnded(ended: EndedCarves | undefined, carve: number | undefined): boolean {
  if (ended === undefined || carve === undefined) return true;
  const i = rangeOf(ended, carve);
  return i < ended.length && ended[i] <= carve;
}

/** The ended numbers with `carve` among them (undefined: too many ranges, no longer counted). */
export function withEnded(ended: EndedCarves, carve: number): EndedCarves | undefined {
  const i = rangeOf(ended, carve);
  if (i < ended.length && ended[i] <= carve) return ended; // already among them
  const next = [...ended];
  const joinsBefore = i > 0 && next[i - 1] === carve;
  const joinsAfter = i < next.length && next[i] === carve + 1;
  if (joinsBefore && joinsAfter) next.splice(i - 1, 2); // [a, c) and [c + 1, b) become [a, b)
  else if (joinsBefore) next[i - 1] = carve + 1;
  else if (joinsAfter) next[i] = carve;
  else next.splice(i, 0, carve, carve + 1);
  return next.length / 2 > MAX_ENDED_RANGES ? undefined : next;
}

/** An ended lease, kept so a retried call answers the same. */
export interface ClosedLease {
  state: 'closed' | 'expired';
  amount: string;
  charged: string;
}

export const LEASE_KEY_PREFIX = 'lease:';
/** A lease takes at most this share of the available balance (1/4): the rest stays for other instances. */
export const LEASE_SHARE_DIVISOR = 4n;
export const MAX_BATCH_ITEMS = 1000;

/** What open leases still lock: granted − charged. */
export function leasedRest(state: FundsState): bigint {
  const leases = Object.values(state.leases ?? {});
  return sumOf(leases.map((lease) => lease.amount)) - sumOf(leases.map((lease) => lease.charged));
}

export function hasLeases(state: FundsState): boolean {
  return state.leases !== undefined && Object.keys(state.leases).length > 0;
}

export function emptyState(): FundsState {
  return { balance: '0', holds: {}, reminderDueAt: null, bills: 0 };
}

export function held(state: FundsState): bigint {
  return sumOf(Object.values(state.holds).map((hold) => hold.amount));
}

/** balance − open holds − what open leases still lock (may be negative: a lease's carved holds are not held). */
export function availableIn(state: FundsState): bigint {
  return availableOf(state.balance, held(state), leasedRest(state));
}

export interface ParsedCarved {
  holdId: string;
  amount: bigint;
  requestId: string;
  model: string;
  profileId: string;
  carve?: number;
  /** The spend key whose count the carved hold's charge joins (CarvedHold.apiKeyId). */
  apiKeyId?: string;
}

export function carvedMeta(item: CarvedHold): ParsedCarved {
  // Its shape (an object with a holdId of 1 to 200 characters) was checked by the host (FUNDS_HOLD_ARGS).
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return {
    holdId: item.holdId, amount: parseAmount(item.amount), requestId: text(item.requestId), model: text(item.model), profileId: text(item.profileId),
    ...(item.carve !== undefined ? { carve: item.carve } : {}),
    ...(item.apiKeyId !== undefined ? { apiKeyId: item.apiKeyId } : {}),
  };
}

/** The furthest a clock stepping back is followed by a spend counter staying in its later period. */
const MAX_STEP_BACK_MS = 86_400_000;

/**
 * The day and month a counter counts in at `now`: now's, or the counter's own when it began later,
 * by at most a day (the clock stepped back across midnight: an NTP step, or the actor placed on a
 * host whose clock is a little behind). Left for the earlier period, what was charged in the later
 * one would be forgotten, and forgotten again when the clock passes midnight once more: the day's
 * limit would allow its whole amount again each time. A period further ahead than a day is taken
 * as a clock that was wrong, not stepped: kept, it would count every charge until the clock
 * reached it, refusing the account once its limit was reached.
 */
function periodsOf(counter: SpendCounter | undefined, now: number): { day: number; month: number } {
  const { day, month } = periodStarts(now);
  const later = (start: number | undefined, own: number) => (start !== undefined && start > own && start - now <= MAX_STEP_BACK_MS ? start : own);
  return { day: later(counter?.day.start, day), month: later(counter?.month.start, month) };
}

/** A scope's spend per period at `now` (a past day or month counts nothing). */
export function spentAt(counter: SpendCounter | undefined, now: number): Record<SpendLimitName, bigint> {
  const { day, month } = periodsOf(counter, now);
  return {
    spend_per_day: counter && counter.day.start === day ? fromStored(counter.day.amount) : 0n,
    spend_per_month: counter && counter.month.start === month ? fromStored(counter.month.amount) : 0n,
    spend_total: counter ? fromStored(counter.total) : 0n,
  };
}

/** The counter after a charge at `now`. */
export function withSpend(counter: SpendCounter | undefined, charged: bigint, now: number): SpendCounter {
  const before = spentAt(counter, now);
  const { day, month } = periodsOf(counter, now);
  return {
    day: { start: day, amount: storedAmount(before.spend_per_day + charged) },
    month: { start: month, amount: storedAmount(before.spend_per_month + charged) },
    total: storedAmount(before.spend_total + charged),
  };
}

/**
 * What the open holds made with one key (its spend key) hold: the actor's own, and the holds
 * carved from funds leases that the actor knows of, those whose progress a batch has recorded
 * (a call that runs a while: every 2 s or 256 tokens). A call carved because its key had no spend
 * limit then, and still running when one is set, so counts against it once it has recorded
 * progress; until then the actor cannot see it.
 */
export function heldForKey(state: FundsState, apiKeyId: string): bigint {
  const own = Object.values(state.holds).filter((hold) => hold.apiKeyId === apiKeyId).map((hold) => hold.amount);
  const carved = Object.values(state.leases ?? {}).flatMap((lease) => Object.values(lease.progress).filter((record) => record.apiKeyId === apiKeyId).map((record) => record.amount));
  return sumOf([...own, ...carved]);
}
