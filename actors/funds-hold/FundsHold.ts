// FundsHold actor: the balance of one account in one funding pool, and its open holds.
// Available = balance − open holds. A reserve that does not fit is refused and holds nothing;
// the balance never goes negative; every change of funds emits its event in the same commit.

import { GatewayError } from '../../lib/errors';
import { billingEvent, usageEvent } from '../../lib/events';
import { MAX_SAFE, min, parseAmount, toJsonAmount } from '../../lib/money';
import type { ActorContext, ActorInstance } from '../runtime/port';
import {
  FUNDS_HOLD_ACTOR_TYPE,
  FUNDS_HOLD_METHODS,
  type BalanceView,
  type CreditOutcome,
  type CreditRequest,
  type FundsHoldApi,
  type HoldOutcome,
  type CarvedHold,
  type CarvedResult,
  type LeaseBatchOutcome,
  type LeaseBatchRequest,
  type LeaseOutcome,
  type OpenLeaseRequest,
  type ProgressRequest,
  type ReleaseRequest,
  type ReserveRequest,
  type SettleRequest,
} from './FundsHoldInterface';
import { canTransition, type HoldState } from './transitions';
import { beyond, costed, mergeProgress, recordLines, type RecordedLine } from './usage';

const STATE_KEY = 'funds';
const CREDIT_KEY_PREFIX = 'credit:';
/** Each ended hold is its own small record, so the hot state (balance, open holds) stays small. */
const CLOSED_KEY_PREFIX = 'closed:';
/**
 * Expiry reminders are named by their due time: a one-shot reminder re-registered from its own
 * callback under the same name can be deleted when that callback completes (Dapr Scheduler).
 */
const EXPIRY_REMINDER = 'expire-holds';
const expiryReminderName = (dueAt: number) => `${EXPIRY_REMINDER}@${dueAt}`;
/**
 * The safety net: a periodic reminder kept while any hold is open, so an expiry whose one-shot
 * reminder was lost (host down when it came due, a crash before the state recorded it) is
 * caught by the next period. Its period: a quarter of the time to the earliest expiry when it
 * is set, within these bounds.
 */
const NET_REMINDER = `${EXPIRY_REMINDER}:net`;
const NET_MIN_PERIOD_MS = 1000;
const NET_MAX_PERIOD_MS = 10 * 60 * 1000;
/** The reason a settle after expiry gives for the usage the platform bears (bill row reference, metric label). */
const PLATFORM_BORNE_AFTER_EXPIRY = 'settle_after_expiry';

interface OpenHold {
  amount: string;
  expiresAt: number;
  requestId: string;
  model: string;
  profileId: string;
  /** The usage delivered so far (progress): what expiry charges if the call never settles. */
  progress?: RecordedLine[];
}

interface ClosedHold {
  state: Exclude<HoldState, 'open'>;
  amount: string;
  charged: string;
  /** Expired holds: who the hold was for, and the usage its expiry charged (settle after expiry). */
  expired?: { requestId: string; model: string; profileId: string; lines: RecordedLine[] };
  /** Settle after expiry: the cost recorded as platform-borne (set once; a repeat records nothing). */
  borne?: string;
}

/** The longest renewal a progress record may ask for. */
const MAX_TTL_MS = 86_400_000;

interface FundsState {
  balance: string;
  holds: Record<string, OpenHold>;
  /** When the pending expiry reminder is due (null: none pending; in the past: lost, set again). */
  reminderDueAt: number | null;
  /** The safety net while holds are open: its period and when it is next due (absent: none). */
  net?: { periodMs: number; dueAt: number } | null;
  /** Open funds leases (absent: none). They expire like holds. */
  leases?: Record<string, OpenLease>;
}

/** A funds lease: `amount` locked for one gateway instance, `charged` of it spent so far. */
interface OpenLease {
  amount: string;
  charged: string;
  expiresAt: number;
  /** Delivered usage of the lease's carved holds still running (what its expiry charges). */
  progress: Record<string, { amount: string; requestId: string; model: string; profileId: string; lines: RecordedLine[] }>;
}

/** An ended lease, kept so a retried call answers the same. */
interface ClosedLease {
  state: 'closed' | 'expired';
  amount: string;
  charged: string;
}

const LEASE_KEY_PREFIX = 'lease:';
/** A lease takes at most this share of the available balance (1/4): the rest stays for other instances. */
const LEASE_SHARE_DIVISOR = 4n;
const MAX_BATCH_ITEMS = 1000;

/** What open leases still lock: granted − charged. */
function leasedRest(state: FundsState): bigint {
  let total = 0n;
  for (const lease of Object.values(state.leases ?? {})) total += BigInt(lease.amount) - BigInt(lease.charged);
  return total;
}

function hasLeases(state: FundsState): boolean {
  return state.leases !== undefined && Object.keys(state.leases).length > 0;
}

function emptyState(): FundsState {
  return { balance: '0', holds: {}, reminderDueAt: null };
}

function held(state: FundsState): bigint {
  let total = 0n;
  for (const hold of Object.values(state.holds)) total += BigInt(hold.amount);
  return total;
}

export class FundsHold implements FundsHoldApi, ActorInstance {
  static readonly actorType = FUNDS_HOLD_ACTOR_TYPE;
  static readonly methods = FUNDS_HOLD_METHODS;

  private readonly accountId: string;
  private readonly pool: string;

  constructor(private readonly ctx: ActorContext) {
    const separator = ctx.actorId.lastIndexOf(':');
    if (separator <= 0) throw new GatewayError('invalid_request', `FundsHold id must be "<account>:<pool>", got "${ctx.actorId}"`);
    this.accountId = ctx.actorId.slice(0, separator);
    this.pool = ctx.actorId.slice(separator + 1);
  }

  async reserve(request: ReserveRequest): Promise<HoldOutcome> {
    const amount = parseAmount(request.amount);
    const state = await this.load();
    const existing = state.holds[request.holdId];
    if (existing) {
      if (BigInt(existing.amount) !== amount) throw new GatewayError('hold_state_conflict', `hold ${request.holdId} is open with another amount`);
      return this.outcome(request.holdId, 'open', amount, 0n, state);
    }
    if (await this.closedHold(request.holdId)) throw new GatewayError('hold_state_conflict', `hold ${request.holdId} has already ended`);
    const available = BigInt(state.balance) - held(state) - leasedRest(state);
    if (amount > available) {
      throw new GatewayError('insufficient_funds', 'the available balance does not cover the reservation estimate', {
        extra: { required: toJsonAmount(amount), available: toJsonAmount(available < 0n ? 0n : available) },
      });
    }
    const expiresAt = this.ctx.now() + request.ttlMs;
    state.holds[request.holdId] = { amount: amount.toString(), expiresAt, requestId: request.requestId, model: request.model, profileId: request.profileId };
    this.ctx.adjustGauge('holds_open', 1);
    await this.scheduleExpiry(state, this.ctx.now());
    this.save(state);
    return this.outcome(request.holdId, 'open', amount, 0n, state);
  }

  async settle(request: SettleRequest): Promise<HoldOutcome> {
    const recorded = recordLines(request.lines);
    const state = await this.load();
    const hold = state.holds[request.holdId];
    if (!hold) {
      const closed = await this.closedHold(request.holdId);
      if (closed?.state === 'expired') return this.settleAfterExpiry(state, request.holdId, closed, recorded);
      return this.repeatOrConflict(state, request.holdId, 'settled');
    }
    const amount = BigInt(hold.amount);
    const { lines, cost } = costed(recorded);
    // Never above the hold: usage beyond the estimate is borne by the platform.
    const charged = request.platformBorne ? 0n : min(cost, amount);
    const balance = BigInt(state.balance) - charged;
    state.balance = balance.toString();
    this.close(state, request.holdId, 'settled', amount, charged);
    const now = this.ctx.now();
    const common = { accountId: this.accountId, pool: this.pool, holdId: request.holdId, requestId: hold.requestId, model: hold.model, profileId: hold.profileId };
    this.ctx.emit(billingEvent(`${request.holdId}:charge`, now, {
      ...common,
      kind: request.platformBorne ? 'platform_borne' : 'charge',
      balanceDelta: -toJsonAmount(charged),
      amount: toJsonAmount(request.platformBorne ? cost : charged),
    }));
    this.ctx.emit(usageEvent(`${request.holdId}:usage`, now, { ...common, lines, charged: toJsonAmount(charged) }));
    this.save(state);
    return this.outcome(request.holdId, 'settled', amount, charged, state);
  }

  /**
   * Records on an open hold the usage delivered so far (the newest record wins, no quantity goes
   * down) and pushes its expiry to now + ttlMs: a call still running keeps its hold. Idempotent.
   * An ended hold answers its outcome and records nothing.
   */
  async progress(request: ProgressRequest): Promise<HoldOutcome> {
    const recorded = recordLines(request.lines);
    if (!Number.isSafeInteger(request.ttlMs) || request.ttlMs < 1 || request.ttlMs > MAX_TTL_MS) {
      throw new GatewayError('invalid_request', `ttlMs must be an integer from 1 to ${MAX_TTL_MS}`, { param: 'ttlMs' });
    }
    const state = await this.load();
    const hold = state.holds[request.holdId];
    if (!hold) {
      const closed = await this.closedHold(request.holdId);
      if (!closed) throw new GatewayError('hold_not_found', `no hold ${request.holdId}`);
      return this.outcome(request.holdId, closed.state, BigInt(closed.amount), BigInt(closed.charged), state);
    }
    if (recorded.length > 0) hold.progress = mergeProgress(hold.progress, recorded);
    // Later than the pending reminder: that reminder finds the hold not yet due and re-arms for it.
    hold.expiresAt = Math.max(hold.expiresAt, this.ctx.now() + request.ttlMs);
    this.save(state);
    return this.outcome(request.holdId, 'open', BigInt(hold.amount), 0n, state);
  }

  /** A release asExpiry: the hold ends now as its expiry would end it (expireHold). */
  private async expireNow(state: FundsState, holdId: string): Promise<HoldOutcome> {
    this.expireHold(state, holdId);
    this.save(state);
    const closed = (await this.closedHold(holdId)) as ClosedHold;
    return this.outcome(holdId, 'expired', BigInt(closed.amount), BigInt(closed.charged), state);
  }

  /**
   * A settle that finds its hold expired: the expiry's outcome stands, and the usage beyond what
   * the expiry charged is recorded as platform-borne (a bill row with balanceDelta 0 and a usage
   * row charged 0, counted in payg_platform_borne_total), once: a repeat records nothing more.
   */
  private async settleAfterExpiry(state: FundsState, holdId: string, closed: ClosedHold, usage: RecordedLine[]): Promise<HoldOutcome> {
    const answer = () => this.outcome(holdId, 'expired', BigInt(closed.amount), BigInt(closed.charged), state);
    if (closed.borne !== undefined) return answer();
    const { lines, cost } = costed(beyond(usage, closed.expired?.lines));
    // Nothing beyond the expiry's charge (or an empty settle, which only asks): nothing to record.
    if (lines.length === 0) return answer();
    this.ctx.state.set<ClosedHold>(CLOSED_KEY_PREFIX + holdId, { ...closed, borne: cost.toString() });
    const now = this.ctx.now();
    const meta = closed.expired ?? { requestId: '', model: '', profileId: '' };
    const common = { accountId: this.accountId, pool: this.pool, holdId, requestId: meta.requestId, model: meta.model, profileId: meta.profileId };
    this.ctx.emit(billingEvent(`${holdId}:platform-borne`, now, { ...common, kind: 'platform_borne', balanceDelta: 0, amount: toJsonAmount(cost), reference: PLATFORM_BORNE_AFTER_EXPIRY }));
    this.ctx.emit(usageEvent(`${holdId}:usage-borne`, now, { ...common, lines, charged: 0 }));
    this.ctx.adjustGauge(`platform_borne:${PLATFORM_BORNE_AFTER_EXPIRY}`, toJsonAmount(cost));
    return answer();
  }

  async release(request: ReleaseRequest): Promise<HoldOutcome> {
    const state = await this.load();
    const hold = state.holds[request.holdId];
    if (!hold) return this.repeatOrConflict(state, request.holdId, 'released');
    if (request.asExpiry === true) return this.expireNow(state, request.holdId);
    this.end(state, request.holdId, 'released', request.reason);
    this.save(state);
    return this.outcome(request.holdId, 'released', BigInt(hold.amount), 0n, state);
  }

  async credit(request: CreditRequest): Promise<CreditOutcome> {
    const amount = parseAmount(request.amount);
    if (amount === 0n) throw new GatewayError('invalid_request', 'amount must be positive', { param: 'amount' });
    if (typeof request.reference !== 'string' || request.reference.length === 0 || request.reference.length > 200) {
      throw new GatewayError('invalid_request', 'reference must be a string of 1 to 200 characters', { param: 'reference' });
    }
    const state = await this.load();
    const creditKey = CREDIT_KEY_PREFIX + request.reference;
    const earlier = await this.ctx.state.get<string>(creditKey);
    if (earlier !== undefined) {
      if (BigInt(earlier) !== amount) throw new GatewayError('credit_reference_reused', `reference "${request.reference}" was already used for another amount`, { param: 'reference' });
      return { reference: request.reference, amount: toJsonAmount(amount), applied: false, balance: toJsonAmount(BigInt(state.balance)) };
    }
    const balance = BigInt(state.balance) + amount;
    if (balance > MAX_SAFE) throw new GatewayError('invalid_request', 'the balance would exceed 2^53-1 minor units', { param: 'amount' });
    state.balance = balance.toString();
    this.ctx.state.set(creditKey, amount.toString());
    this.ctx.emit(billingEvent(`credit:${this.accountId}:${this.pool}:${request.reference}`, this.ctx.now(), {
      kind: 'credit', accountId: this.accountId, pool: this.pool, balanceDelta: toJsonAmount(amount), amount: toJsonAmount(amount), reference: request.reference,
    }));
    this.save(state);
    return { reference: request.reference, amount: toJsonAmount(amount), applied: true, balance: toJsonAmount(balance) };
  }

  async getBalance(): Promise<BalanceView> {
    const state = await this.load();
    const balance = BigInt(state.balance);
    const onHold = held(state);
    const leased = leasedRest(state);
    return {
      accountId: this.accountId,
      pool: this.pool,
      balance: toJsonAmount(balance),
      held: toJsonAmount(onHold),
      available: toJsonAmount(balance - onHold - leased),
      openHolds: Object.keys(state.holds).length,
      leased: toJsonAmount(leased),
      openLeases: Object.keys(state.leases ?? {}).length,
    };
  }

  async onReminder(name: string): Promise<void> {
    if (!name.startsWith(EXPIRY_REMINDER)) return;
    // Loading sweeps and schedules (keepExpiring), told which reminder fired.
    this.save(await this.load(name));
  }

  /**
   * Holds always expire, whatever happened to a reminder. Every turn that loads the state runs
   * this first: overdue holds end now (sweep on touch), a pending expiry reminder whose due time
   * has passed is taken as lost and set again, and the safety net exists while holds are open.
   * `fired`: the expiry reminder this turn was called for. True when the state changed.
   */
  private async keepExpiring(state: FundsState, fired?: string): Promise<boolean> {
    const now = this.ctx.now();
    const before = { dueAt: state.reminderDueAt, netPeriodMs: state.net?.periodMs, netDueAt: state.net?.dueAt };
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
  private async scheduleExpiry(state: FundsState, now: number): Promise<void> {
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
  private expireHold(state: FundsState, holdId: string): void {
    const hold = state.holds[holdId];
    if (!hold.progress || hold.progress.length === 0) {
      this.end(state, holdId, 'expired', 'expired');
      return;
    }
    const amount = BigInt(hold.amount);
    const { lines, cost } = costed(hold.progress);
    const charged = min(cost, amount);
    state.balance = (BigInt(state.balance) - charged).toString();
    this.close(state, holdId, 'expired', amount, charged, { requestId: hold.requestId, model: hold.model, profileId: hold.profileId, lines: hold.progress });
    const now = this.ctx.now();
    const common = { accountId: this.accountId, pool: this.pool, holdId, requestId: hold.requestId, model: hold.model, profileId: hold.profileId };
    this.ctx.emit(billingEvent(`${holdId}:charge`, now, { ...common, kind: 'charge', balanceDelta: -toJsonAmount(charged), amount: toJsonAmount(charged), reference: 'expired_with_progress' }));
    this.ctx.emit(usageEvent(`${holdId}:usage`, now, { ...common, lines, charged: toJsonAmount(charged) }));
  }

  /** Ends an open hold without a charge (released or expired) and emits the release. */
  private end(state: FundsState, holdId: string, to: 'released' | 'expired', reason: string): void {
    const hold = state.holds[holdId];
    const amount = BigInt(hold.amount);
    this.close(state, holdId, to, amount, 0n, to === 'expired' ? { requestId: hold.requestId, model: hold.model, profileId: hold.profileId, lines: [] } : undefined);
    this.ctx.emit(billingEvent(`${holdId}:release`, this.ctx.now(), {
      kind: 'release', accountId: this.accountId, pool: this.pool, balanceDelta: 0, amount: toJsonAmount(amount),
      holdId, requestId: hold.requestId, model: hold.model, profileId: hold.profileId, reference: reason,
    }));
  }

  private close(state: FundsState, holdId: string, to: Exclude<HoldState, 'open'>, amount: bigint, charged: bigint, expired?: ClosedHold['expired']): void {
    if (!canTransition('open', to)) throw new GatewayError('hold_state_conflict', `a hold cannot move from open to ${to}`);
    delete state.holds[holdId];
    this.ctx.adjustGauge('holds_open', -1);
    this.ctx.state.set<ClosedHold>(CLOSED_KEY_PREFIX + holdId, { state: to, amount: amount.toString(), charged: charged.toString(), ...(expired ? { expired } : {}) });
  }

  private closedHold(holdId: string): Promise<ClosedHold | undefined> {
    return this.ctx.state.get<ClosedHold>(CLOSED_KEY_PREFIX + holdId);
  }

  /** A settle or release of a hold that is no longer open: the same answer if it ended that way, else a conflict. */
  private async repeatOrConflict(state: FundsState, holdId: string, wanted: Exclude<HoldState, 'open'>): Promise<HoldOutcome> {
    const closed = await this.closedHold(holdId);
    if (!closed) throw new GatewayError('hold_not_found', `no hold ${holdId}`);
    if (closed.state === wanted || (wanted === 'released' && closed.state === 'expired')) {
      return this.outcome(holdId, closed.state, BigInt(closed.amount), BigInt(closed.charged), state);
    }
    // An ended hold has no transitions left (transitions.ts): any other ending is refused.
    throw new GatewayError('hold_state_conflict', `hold ${holdId} is ${closed.state}; it cannot become ${wanted}`);
  }

  private outcome(holdId: string, holdState: HoldState, amount: bigint, charged: bigint, state: FundsState): HoldOutcome {
    return { holdId, state: holdState, amount: toJsonAmount(amount), charged: toJsonAmount(charged), balance: toJsonAmount(BigInt(state.balance)) };
  }

  // ---- Funds leases (docs/money.md, "Funds leases") ----

  /**
   * Grants a lease of min(amount, available / 4) when that is at least minAmount, else answers
   * `refused` and changes nothing. Idempotent by leaseId: an open or ended lease answers itself.
   */
  async openLease(request: OpenLeaseRequest): Promise<LeaseOutcome> {
    checkId(request.leaseId, 'leaseId');
    const amount = parseAmount(request.amount);
    const minAmount = parseAmount(request.minAmount);
    checkTtl(request.ttlMs);
    const state = await this.load();
    const existing = state.leases?.[request.leaseId];
    if (existing) return this.leaseOutcome(request.leaseId, 'open', existing, state);
    const closed = await this.ctx.state.get<ClosedLease>(LEASE_KEY_PREFIX + request.leaseId);
    if (closed) return this.leaseOutcome(request.leaseId, closed.state, closed, state);
    const available = BigInt(state.balance) - held(state) - leasedRest(state);
    const share = available > 0n ? available / LEASE_SHARE_DIVISOR : 0n;
    const grant = min(amount, share);
    if (grant < minAmount || grant <= 0n) return this.leaseOutcome(request.leaseId, 'refused', { amount: '0', charged: '0' }, state);
    const lease: OpenLease = { amount: grant.toString(), charged: '0', expiresAt: this.ctx.now() + request.ttlMs, progress: {} };
    state.leases = { ...(state.leases ?? {}), [request.leaseId]: lease };
    await this.scheduleExpiry(state, this.ctx.now());
    this.save(state);
    return this.leaseOutcome(request.leaseId, 'open', lease, state);
  }

  /**
   * One batch against a lease in one turn: progress records, settles, releases, the lease renewed,
   * closed if asked. Each carved hold ends once (its `closed:` record, as a hold's), with the same
   * events as a settle or release of a hold; a carved hold's charge is at most its amount and
   * never more than the lease has left. On a lease that has ended (expired), a carved hold not yet
   * ended is ended as an expired hold without progress, and its settle records the usage as
   * platform-borne (as a settle after expiry does).
   */
  async leaseBatch(request: LeaseBatchRequest): Promise<LeaseBatchOutcome> {
    checkId(request.leaseId, 'leaseId');
    checkTtl(request.ttlMs);
    const progress = request.progress ?? [];
    const settles = request.settle ?? [];
    const releases = request.release ?? [];
    if (progress.length + settles.length + releases.length > MAX_BATCH_ITEMS) {
      throw new GatewayError('invalid_request', `a lease batch has at most ${MAX_BATCH_ITEMS} items`);
    }
    // Checked before anything changes: a bad item refuses the whole batch.
    const checked = {
      progress: progress.map((item) => ({ item, meta: carvedMeta(item), lines: recordLines(item.lines) })),
      settle: settles.map((item) => ({ item, meta: carvedMeta(item), lines: recordLines(item.lines) })),
      release: releases.map((item) => ({ item, meta: carvedMeta(item) })),
    };
    const state = await this.load();
    const lease = state.leases?.[request.leaseId];
    const ended = lease ? undefined : await this.ctx.state.get<ClosedLease>(LEASE_KEY_PREFIX + request.leaseId);
    if (!lease && !ended) throw new GatewayError('hold_not_found', `no lease ${request.leaseId}`);
    if (lease) {
      for (const { meta, lines } of checked.progress) {
        const entry = lease.progress[meta.holdId];
        if (entry) entry.lines = mergeProgress(entry.lines, lines);
        // A late record of a hold that has ended records nothing (it would be charged again at expiry).
        else if (lines.length > 0 && !(await this.closedHold(meta.holdId))) {
          lease.progress[meta.holdId] = { amount: meta.amount.toString(), requestId: meta.requestId, model: meta.model, profileId: meta.profileId, lines };
        }
      }
      lease.expiresAt = Math.max(lease.expiresAt, this.ctx.now() + request.ttlMs);
    }
    const settled: CarvedResult[] = [];
    for (const { item, meta, lines } of checked.settle) {
      settled.push(await this.carvedResult(meta.holdId, () => this.settleCarved(state, lease, meta, lines, item.platformBorne === true)));
    }
    const released: CarvedResult[] = [];
    for (const { item, meta } of checked.release) {
      released.push(await this.carvedResult(meta.holdId, () => this.releaseCarved(state, lease, meta, String(item.reason ?? ''))));
    }
    let outcome: LeaseOutcome;
    if (lease && request.close === true) {
      this.endLease(state, request.leaseId, 'closed');
      outcome = this.leaseOutcome(request.leaseId, 'closed', lease, state);
    } else if (lease) outcome = this.leaseOutcome(request.leaseId, 'open', lease, state);
    else outcome = this.leaseOutcome(request.leaseId, ended!.state, ended!, state);
    this.save(state);
    return { lease: outcome, settled, released };
  }

  private async carvedResult(holdId: string, run: () => Promise<HoldOutcome>): Promise<CarvedResult> {
    try {
      return { holdId, outcome: await run() };
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      return { holdId, error: { code: error.code, message: error.message } };
    }
  }

  private async settleCarved(state: FundsState, lease: OpenLease | undefined, meta: ParsedCarved, recorded: RecordedLine[], platformBorne: boolean): Promise<HoldOutcome> {
    const closed = await this.closedHold(meta.holdId);
    if (closed?.state === 'expired') return this.settleAfterExpiry(state, meta.holdId, closed, recorded);
    if (closed) return this.repeatOrConflict(state, meta.holdId, 'settled');
    if (!lease) return this.settleAfterExpiry(state, meta.holdId, this.expireCarvedUnrecorded(meta), recorded);
    const { lines, cost } = costed(recorded);
    const rest = BigInt(lease.amount) - BigInt(lease.charged);
    // Never above the carved hold, never above what the lease has left.
    const charged = platformBorne ? 0n : min(min(cost, meta.amount), rest);
    state.balance = (BigInt(state.balance) - charged).toString();
    lease.charged = (BigInt(lease.charged) + charged).toString();
    delete lease.progress[meta.holdId];
    this.ctx.state.set<ClosedHold>(CLOSED_KEY_PREFIX + meta.holdId, { state: 'settled', amount: meta.amount.toString(), charged: charged.toString() });
    const now = this.ctx.now();
    const common = { accountId: this.accountId, pool: this.pool, holdId: meta.holdId, requestId: meta.requestId, model: meta.model, profileId: meta.profileId };
    this.ctx.emit(billingEvent(`${meta.holdId}:charge`, now, { ...common, kind: platformBorne ? 'platform_borne' : 'charge', balanceDelta: -toJsonAmount(charged), amount: toJsonAmount(platformBorne ? cost : charged) }));
    this.ctx.emit(usageEvent(`${meta.holdId}:usage`, now, { ...common, lines, charged: toJsonAmount(charged) }));
    return this.outcome(meta.holdId, 'settled', meta.amount, charged, state);
  }

  private async releaseCarved(state: FundsState, lease: OpenLease | undefined, meta: ParsedCarved, reason: string): Promise<HoldOutcome> {
    if (await this.closedHold(meta.holdId)) return this.repeatOrConflict(state, meta.holdId, 'released');
    if (!lease) {
      const closed = this.expireCarvedUnrecorded(meta);
      return this.outcome(meta.holdId, closed.state, meta.amount, 0n, state);
    }
    delete lease.progress[meta.holdId];
    this.ctx.state.set<ClosedHold>(CLOSED_KEY_PREFIX + meta.holdId, { state: 'released', amount: meta.amount.toString(), charged: '0' });
    this.emitRelease(meta, reason);
    return this.outcome(meta.holdId, 'released', meta.amount, 0n, state);
  }

  /** A carved hold of an ended lease, never recorded there: ended as an expired hold without progress. */
  private expireCarvedUnrecorded(meta: ParsedCarved): ClosedHold {
    const closed: ClosedHold = { state: 'expired', amount: meta.amount.toString(), charged: '0', expired: { requestId: meta.requestId, model: meta.model, profileId: meta.profileId, lines: [] } };
    this.ctx.state.set<ClosedHold>(CLOSED_KEY_PREFIX + meta.holdId, closed);
    this.emitRelease(meta, 'expired');
    return closed;
  }

  private emitRelease(meta: ParsedCarved, reason: string): void {
    this.ctx.emit(billingEvent(`${meta.holdId}:release`, this.ctx.now(), {
      kind: 'release', accountId: this.accountId, pool: this.pool, balanceDelta: 0, amount: toJsonAmount(meta.amount),
      holdId: meta.holdId, requestId: meta.requestId, model: meta.model, profileId: meta.profileId, reference: reason,
    }));
  }

  /** Ends every lease whose time is up (its gateway stopped renewing it); the number ended. */
  private expireOverdueLeases(state: FundsState, now: number): number {
    let ended = 0;
    for (const [leaseId, lease] of Object.entries(state.leases ?? {})) {
      if (lease.expiresAt > now) continue;
      this.endLease(state, leaseId, 'expired');
      ended++;
    }
    return ended;
  }

  /**
   * Ends a lease: each carved hold with a progress record is charged for it as an expired hold
   * is (at most its amount and what the lease has left, the same events); the rest of the lease
   * returns to available.
   */
  private endLease(state: FundsState, leaseId: string, to: ClosedLease['state']): void {
    const lease = state.leases![leaseId];
    const now = this.ctx.now();
    for (const [holdId, record] of Object.entries(lease.progress)) {
      const amount = BigInt(record.amount);
      const { lines, cost } = costed(record.lines);
      const rest = BigInt(lease.amount) - BigInt(lease.charged);
      const charged = min(min(cost, amount), rest);
      state.balance = (BigInt(state.balance) - charged).toString();
      lease.charged = (BigInt(lease.charged) + charged).toString();
      this.ctx.state.set<ClosedHold>(CLOSED_KEY_PREFIX + holdId, { state: 'expired', amount: record.amount, charged: charged.toString(), expired: { requestId: record.requestId, model: record.model, profileId: record.profileId, lines: record.lines } });
      const common = { accountId: this.accountId, pool: this.pool, holdId, requestId: record.requestId, model: record.model, profileId: record.profileId };
      this.ctx.emit(billingEvent(`${holdId}:charge`, now, { ...common, kind: 'charge', balanceDelta: -toJsonAmount(charged), amount: toJsonAmount(charged), reference: 'expired_with_progress' }));
      this.ctx.emit(usageEvent(`${holdId}:usage`, now, { ...common, lines, charged: toJsonAmount(charged) }));
    }
    lease.progress = {};
    this.ctx.state.set<ClosedLease>(LEASE_KEY_PREFIX + leaseId, { state: to, amount: lease.amount, charged: lease.charged });
    const { [leaseId]: _gone, ...rest } = state.leases!;
    state.leases = rest;
  }

  private leaseOutcome(leaseId: string, leaseState: LeaseOutcome['state'], lease: { amount: string; charged: string }, state: FundsState): LeaseOutcome {
    const available = BigInt(state.balance) - held(state) - leasedRest(state);
    return { leaseId, state: leaseState, amount: toJsonAmount(BigInt(lease.amount)), charged: toJsonAmount(BigInt(lease.charged)), balance: toJsonAmount(BigInt(state.balance)), available: toJsonAmount(available < 0n ? 0n : available) };
  }

  /** The state, with its expiry kept (keepExpiring) before anything else happens in the turn. */
  private async load(firedReminder?: string): Promise<FundsState> {
    const state = (await this.ctx.state.get<FundsState>(STATE_KEY)) ?? emptyState();
    if (await this.keepExpiring(state, firedReminder)) this.save(state);
    return state;
  }

  private save(state: FundsState): void {
    this.ctx.state.set(STATE_KEY, state);
  }
}

interface ParsedCarved {
  holdId: string;
  amount: bigint;
  requestId: string;
  model: string;
  profileId: string;
}

function checkId(value: unknown, param: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) throw new GatewayError('invalid_request', `${param} must be a string of 1 to 200 characters`, { param });
}

function checkTtl(ttlMs: unknown): void {
  if (!Number.isSafeInteger(ttlMs) || (ttlMs as number) < 1 || (ttlMs as number) > MAX_TTL_MS) {
    throw new GatewayError('invalid_request', `ttlMs must be an integer from 1 to ${MAX_TTL_MS}`, { param: 'ttlMs' });
  }
}

function carvedMeta(item: CarvedHold): ParsedCarved {
  if (typeof item !== 'object' || item === null) throw new GatewayError('invalid_request', 'a lease batch item must be an object');
  checkId(item.holdId, 'holdId');
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return { holdId: item.holdId, amount: parseAmount(item.amount), requestId: text(item.requestId), model: text(item.model), profileId: text(item.profileId) };
}
