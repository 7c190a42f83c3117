// The holds of one FundsHold actor, by the table of transitions.ts: the state loaded with its
// expiry kept (sweep on touch, the one-shot reminder and the safety net), a hold ended exactly
// once through one checked step (its closed record and its events), and a move on an ended hold
// answered by the table (repeated, recorded after expiry, or refused). The public methods are
// FundsHold's (FundsHold.ts); the leases are lease-book.ts's.

import { GatewayError } from '../../lib/errors';
import { billingEvent, usageEvent, type EventEnvelope, type UsageBill, type UsageData } from '../../lib/events';
import { fromStored, min, storedAmount, toJsonAmount } from '../../lib/money';
import type { ActorContext } from '../runtime/port';
import { StateRecord, StateRecords } from '../runtime/state-record';
import type { HoldOutcome } from './FundsHoldInterface';
import type { CheckedRoute } from '../../lib/route-record';
import {
  CLOSED_KEY_PREFIX,
  emptyState,
  expiryReminderName,
  hasLeases,
  NET_MAX_PERIOD_MS,
  NET_MIN_PERIOD_MS,
  NET_REMINDER,
  PLATFORM_BORNE_AFTER_EXPIRY,
  STATE_KEY,
  withSpend,
  type ClosedHold,
  type FundsState,
  type ParsedCarved,
} from './funds-state';
import { endingOf, holdVerdict, type HoldMove, type HoldState } from './transitions';
import { KeySpendBook } from './key-spend';
import { beyond, costed, type RecordedLine } from './usage';

/** Who a usage event is about (a hold's or a carved hold's record). */
type UsageMeta = { requestId: string; model: string; profileId: string };
/** A usage event's bill before it is written: its balance delta is the charge's. */
type BillOf = Pick<UsageBill, 'kind' | 'reference'> & { amount: bigint };

/** An expired hold's progress record, as an outcome's `chargedFor` (nothing when it had none). */
export function chargedFor(closed: ClosedHold): Pick<HoldOutcome, 'chargedFor'> {
  const lines = closed.expired?.lines ?? [];
  if (lines.length === 0) return {};
  return {
    chargedFor: costed(lines).lines.map((line) => ({
      unit: line.unit, quantity: line.quantity, unitPrice: line.unitPrice, ...(line.reasoningTokens !== undefined ? { reasoningTokens: line.reasoningTokens } : {}),
    })),
  };
}

export abstract class HoldBook {
  protected readonly accountId: string;
  protected readonly pool: string;

  /** The hot record (balance, open holds and leases, the expiry bookkeeping). */
  private readonly funds: StateRecord<FundsState>;
  /** Each ended hold, by hold id. */
  protected readonly closedHolds: StateRecords<ClosedHold>;
  /** What each key was charged (its own records), loaded by each turn for the keys it may charge. */
  protected readonly keySpend: KeySpendBook;
  /** The state this turn loaded (load), which emitBill counts its bills in. */
  private turnState?: FundsState;

  constructor(protected readonly ctx: ActorContext) {
    this.funds = new StateRecord(ctx.state, STATE_KEY, 'no funds record');
    this.closedHolds = new StateRecords(ctx.state, CLOSED_KEY_PREFIX);
    this.keySpend = new KeySpendBook(ctx.state);
    const separator = ctx.actorId.lastIndexOf(':');
    if (separator <= 0) throw new GatewayError('invalid_request', `FundsHold id must be "<account>:<pool>", got "${ctx.actorId}"`);
    this.accountId = ctx.actorId.slice(0, separator);
    this.pool = ctx.actorId.slice(separator + 1);
  }

  /**
   * Takes a charge off the balance and counts it against the account's spend, and against the
   * key's (its spend key) when the hold was made with one; that key's counter must have been
   * loaded in this turn (keySpend.load).
   */
  protected charge(state: FundsState, charged: bigint, apiKeyId?: string): bigint {
    const balance = fromStored(state.balance) - charged;
    state.balance = storedAmount(balance);
    if (charged > 0n) {
      const now = this.ctx.now();
      state.spent = withSpend(state.spent, charged, now);
      if (apiKeyId !== undefined) this.keySpend.add(apiKeyId, charged, now);
    }
    return balance;
  }

  /** The keys whose counters a sweep at `now` may charge: overdue holds' and overdue leases' carved holds'. */
  private keysDueAt(state: FundsState, now: number): Array<string | undefined> {
    return [
      ...Object.values(state.holds).filter((hold) => hold.expiresAt <= now).map((hold) => hold.apiKeyId),
      ...Object.values(state.leases ?? {}).filter((lease) => lease.expiresAt <= now).flatMap((lease) => Object.values(lease.progress).map((record) => record.apiKeyId)),
    ];
  }

  /** Ends every lease whose time is up; the number ended (lease-book.ts). */
  protected abstract expireOverdueLeases(state: FundsState, now: number): number;

  /**
   * Holds always expire, whatever happened to a reminder. Every turn that loads the state runs
   * this first: overdue holds end now (sweep on touch), a pending expiry reminder whose due time
   * has passed is taken as lost and set again, and the safety net exists while holds are open.
   * `fired`: the expiry reminder this turn was called for. True when the state changed.
   */
  private async keepExpiring(state: FundsState, fired?: string): Promise<boolean> {
    const now = this.ctx.now();
    const before = { dueAt: state.reminderDueAt, netPeriodMs: state.net?.periodMs, netDueAt: state.net?.dueAt };
    await this.keySpend.load(this.keysDueAt(state, now));
    const expired = this.expireOverdue(state, now);
    if (fired === NET_REMINDER) {
      if (state.net) state.net.dueAt = now + state.net.periodMs;
      if (Object.keys(state.holds).length === 0 && !hasLeases(state)) {
        // Nothing left to expire: the net goes until the next hold (removed from its own tick).
        await this.ctx.reminders.unregister(NET_REMINDER);
        state.net = null;
      }
    } else if (fired) {
      // A one-shot has fired, so none is pending now (a late retry of an older one included).
      state.reminderDueAt = null;
    }
    await this.scheduleExpiry(state, now);
    // Compared field by field (the net's record is changed in place above).
    return expired > 0 || state.reminderDueAt !== before.dueAt || state.net?.periodMs !== before.netPeriodMs || state.net?.dueAt !== before.netDueAt;
  }

  /** Ends every open hold whose time is up; the number ended. */
  private expireOverdue(state: FundsState, now: number): number {
    let ended = 0;
    for (const [holdId, hold] of Object.entries(state.holds)) {
      if (hold.expiresAt > now) continue;
      this.expireHold(state, holdId);
      ended++;
    }
    return ended + this.expireOverdueLeases(state, now);
  }

  /**
   * A one-shot reminder due at the earliest expiry (set again when none is pending, when the
   * pending one is due later, or when its due time has passed without it firing), and the safety
   * net while holds are open (set again when overdue by a whole period).
   */
  protected async scheduleExpiry(state: FundsState, now: number): Promise<void> {
    let next: number | null = null;
    for (const hold of Object.values(state.holds)) if (next === null || hold.expiresAt < next) next = hold.expiresAt;
    for (const lease of Object.values(state.leases ?? {})) if (next === null || lease.expiresAt < next) next = lease.expiresAt;
    if (next === null) {
      if (state.reminderDueAt !== null && state.reminderDueAt <= now) state.reminderDueAt = null;
      return;
    }
    if (state.reminderDueAt === null || state.reminderDueAt <= now || next < state.reminderDueAt) {
      await this.ctx.reminders.register(expiryReminderName(next), Math.max(0, next - now));
      state.reminderDueAt = next;
    }
    const net = state.net ?? null;
    if (net === null || net.dueAt + net.periodMs < now) {
      const periodMs = Math.min(NET_MAX_PERIOD_MS, Math.max(NET_MIN_PERIOD_MS, Math.round((next - now) / 4)));
      // First due just after the earliest expiry: before that the one-shot is expected to do it.
      const dueInMs = Math.max(0, next - now) + periodMs;
      await this.ctx.reminders.register(NET_REMINDER, dueInMs, undefined, { periodMs });
      state.net = { periodMs, dueAt: now + dueInMs };
    }
  }

  /**
   * What expiry does to one open hold: with a progress record it is charged for the usage
   * recorded (at most the hold, the same events as a settle); without one it is released.
   */
  protected expireHold(state: FundsState, holdId: string): void {
    const hold = state.holds[holdId];
    if (!hold.progress || hold.progress.length === 0) {
      this.end(state, holdId, 'expire', 'expired');
      return;
    }
    const amount = fromStored(hold.amount);
    const { lines, cost } = costed(hold.progress);
    const charged = min(cost, amount);
    this.charge(state, charged, hold.apiKeyId);
    this.close(state, holdId, 'expire', amount, charged, { requestId: hold.requestId, model: hold.model, profileId: hold.profileId, lines: hold.progress });
    this.emitCharge(holdId, hold, lines, charged, { kind: 'charge', amount: charged, reference: 'expired_with_progress' });
  }

  /**
   * What a change that charges usage emits (a settle, an expiry with progress): one usage event
   * (`<holdId>:usage`) carrying its bill (`<holdId>:charge`), which the ledger appends together.
   */
  protected emitCharge(holdId: string, meta: UsageMeta, lines: UsageData['lines'], charged: bigint, bill: BillOf, route?: CheckedRoute): void {
    this.emitBilledUsage(`${holdId}:usage`, holdId, meta, lines, charged, { ...bill, id: `${holdId}:charge` }, route);
  }

  /** One usage event with the bill of the same change (lib/events.ts, UsageData.bill). */
  private emitBilledUsage(id: string, holdId: string, meta: UsageMeta, lines: UsageData['lines'], charged: bigint, bill: BillOf & { id: string }, route?: CheckedRoute): void {
    this.emitBill(usageEvent(id, this.ctx.now(), {
      accountId: this.accountId, pool: this.pool, holdId, requestId: meta.requestId, model: meta.model, profileId: meta.profileId,
      lines, charged: toJsonAmount(charged), ...(route ? { route } : {}),
      // -charged, not −(a number): a zero charge is 0, never −0.
      bill: { id: bill.id, kind: bill.kind, balanceDelta: toJsonAmount(-charged), amount: toJsonAmount(bill.amount), ...(bill.reference !== undefined ? { reference: bill.reference } : {}) },
    }));
  }

  /** Ends an open hold without a charge (released or expired) and emits the release. */
  protected end(state: FundsState, holdId: string, move: Extract<HoldMove, 'release' | 'expire'>, reason: string): void {
    const hold = state.holds[holdId];
    const amount = fromStored(hold.amount);
    this.close(state, holdId, move, amount, 0n, move === 'expire' ? { requestId: hold.requestId, model: hold.model, profileId: hold.profileId, lines: [] } : undefined);
    this.emitBill(billingEvent(`${holdId}:release`, this.ctx.now(), {
      kind: 'release', accountId: this.accountId, pool: this.pool, balanceDelta: 0, amount: toJsonAmount(amount),
      holdId, requestId: hold.requestId, model: hold.model, profileId: hold.profileId, reference: reason,
    }));
  }

  /** Ends an open hold of the state by `move`: out of the open holds, its ended record written. */
  protected close(state: FundsState, holdId: string, move: HoldMove, amount: bigint, charged: bigint, expired?: ClosedHold['expired']): void {
    delete state.holds[holdId];
    this.ctx.adjustGauge('holds_open', -1);
    this.recordEnded(holdId, move, amount, charged, expired);
  }

  /**
   * The one step that ends a hold (open, or carved from a lease): the state the table gives
   * `move` from open, written as the hold's ended record with what it was charged.
   */
  protected recordEnded(holdId: string, move: HoldMove, amount: bigint, charged: bigint, expired?: ClosedHold['expired']): ClosedHold {
    const closed = this.endingOf(move, amount, charged, expired);
    this.closedHolds.set(holdId, closed);
    return closed;
  }

  /** The ended record `move` from open gives (written by recordEnded, or for a carved hold by its lease's chunk). */
  protected endingOf(move: HoldMove, amount: bigint, charged: bigint, expired?: ClosedHold['expired']): ClosedHold {
    return { state: endingOf(move), amount: storedAmount(amount), charged: storedAmount(charged), ...(expired ? { expired } : {}) };
  }

  protected closedHold(holdId: string): Promise<ClosedHold | undefined> {
    return this.closedHolds.get(holdId);
  }

  /**
   * A settle or release of a hold that is no longer open, by the table: the same answer if it
   * ended that way (a release of an expired hold answers its expiry), a settle after expiry
   * recorded as such (with the settle's route, if it has one), any other move refused.
   */
  protected async onEnded(state: FundsState, holdId: string, move: Extract<HoldMove, 'settle' | 'release'>, usage: RecordedLine[] = [], route?: CheckedRoute, known?: ClosedHold): Promise<HoldOutcome> {
    const closed = known ?? (await this.closedHold(holdId));
    if (!closed) throw new GatewayError('hold_not_found', `no hold ${holdId}`);
    const verdict = holdVerdict(closed.state, move);
    if (verdict && 'afterExpiry' in verdict) return this.settleAfterExpiry(state, holdId, closed, usage, route);
    if (verdict && 'repeat' in verdict) return { ...this.outcome(holdId, closed.state, fromStored(closed.amount), fromStored(closed.charged), state), ...chargedFor(closed) };
    throw new GatewayError('hold_state_conflict', `hold ${holdId} is ${closed.state}; it cannot become ${endingOf(move)}`);
  }

  /**
   * A settle that finds its hold expired: the expiry's outcome stands, and the usage beyond what
   * the expiry charged is recorded as platform-borne (a bill row with balanceDelta 0 and a usage
   * row charged 0, counted in payg_platform_borne_total), once: a repeat records nothing more.
   */
  protected async settleAfterExpiry(state: FundsState, holdId: string, closed: ClosedHold, usage: RecordedLine[], route?: CheckedRoute): Promise<HoldOutcome> {
    const answer = () => this.outcome(holdId, 'expired', fromStored(closed.amount), fromStored(closed.charged), state);
    if (closed.borne !== undefined) return answer();
    const { lines, cost } = costed(beyond(usage, closed.expired?.lines));
    // Nothing beyond the expiry's charge (or an empty settle, which only asks): nothing to record.
    if (lines.length === 0) return answer();
    this.closedHolds.set(holdId, { ...closed, borne: storedAmount(cost) });
    const meta = closed.expired ?? { requestId: '', model: '', profileId: '' };
    this.emitBilledUsage(`${holdId}:usage-borne`, holdId, meta, lines, 0n, { id: `${holdId}:platform-borne`, kind: 'platform_borne', amount: cost, reference: PLATFORM_BORNE_AFTER_EXPIRY }, route);
    this.ctx.adjustGauge(`platform_borne:${PLATFORM_BORNE_AFTER_EXPIRY}`, toJsonAmount(cost));
    return answer();
  }

  protected outcome(holdId: string, holdState: HoldState, amount: bigint, charged: bigint, state: FundsState): HoldOutcome {
    return { holdId, state: holdState, amount: toJsonAmount(amount), charged: toJsonAmount(charged), balance: toJsonAmount(fromStored(state.balance)) };
  }

  protected emitRelease(meta: ParsedCarved, reason: string): void {
    this.emitBill(billingEvent(`${meta.holdId}:release`, this.ctx.now(), {
      kind: 'release', accountId: this.accountId, pool: this.pool, balanceDelta: 0, amount: toJsonAmount(meta.amount),
      holdId: meta.holdId, requestId: meta.requestId, model: meta.model, profileId: meta.profileId, reference: reason,
    }));
  }

  /**
   * Emits an event that makes a bill row in the ledger (every event FundsHold emits does), counted
   * in the turn's state (FundsState.bills, when it counts) and written with it: the count moves in
   * the same commit as the event, whether or not the turn writes the state otherwise (a settle
   * after expiry changes only the hold's ended record).
   */
  protected emitBill(event: EventEnvelope): void {
    this.ctx.emit(event);
    const state = this.turnState;
    if (state?.bills === undefined) return;
    state.bills += 1;
    this.funds.save(state);
  }

  /** The state, with its expiry kept (keepExpiring) before anything else happens in the turn. */
  protected async load(firedReminder?: string): Promise<FundsState> {
    this.keySpend.reset();
    const state = (await this.funds.load()) ?? emptyState();
    this.turnState = state;
    const moved = await this.moveKeySpent(state);
    if ((await this.keepExpiring(state, firedReminder)) || moved) this.save(state);
    return state;
  }

  /** Counters an earlier version kept in the hot record go to the keys' own records (key-spend.ts). */
  private async moveKeySpent(state: FundsState): Promise<boolean> {
    if (!state.keySpent) return false;
    const kept = state.keySpent;
    await this.keySpend.load(Object.keys(kept));
    for (const [id, counter] of Object.entries(kept)) this.keySpend.adopt(id, counter);
    delete state.keySpent;
    return true;
  }

  /** The state and the key counters changed in this turn, written with it. */
  protected save(state: FundsState): void {
    this.keySpend.flush();
    this.funds.save(state);
  }
}
