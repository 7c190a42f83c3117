// FundsHold actor: the balance of one account in one funding pool, and its open holds.
// Available = balance − open holds − what open leases still lock. A reserve that does not fit is
// refused and holds nothing; the balance never goes negative; every change of funds emits its
// event in the same commit. Its public methods are here; the holds' bookkeeping (expiry, the
// checked step that ends a hold, moves on ended holds by transitions.ts) is hold-book.ts's, the
// funds leases lease-book.ts's, the state funds-state.ts's.

import { GatewayError } from '../../lib/errors';
import { billingEvent } from '../../lib/events';
import { availableOf, fromStored, MAX_SAFE, min, parseAmount, storedAmount, toJsonAmount, toJsonAvailable } from '../../lib/money';
import type { ActorInstance } from '../runtime/port';
import {
  FUNDS_HOLD_ACTOR_TYPE,
  FUNDS_HOLD_ARGS,
  FUNDS_HOLD_METHODS,
  type BalanceView,
  type LedgerFigures,
  type CreditOutcome,
  type CreditRequest,
  type DebitRequest,
  type FundsHoldApi,
  type HoldOutcome,
  type ProgressRequest,
  type ReleaseRequest,
  type ReserveRequest,
  type SettleRequest,
  type SpendFigures,
  type SpendScopes,
  type SpendView,
} from './FundsHoldInterface';
import { availableIn, CREDIT_KEY_PREFIX, DEBIT_KEY_PREFIX, EXPIRY_REMINDER, held, heldForKey, leasedRest, spentAt, type ClosedHold, type FundsState } from './funds-state';
import { SPEND_LIMITS, type SpendLimitName } from '../../lib/limits';
import { LeaseBook } from './lease-book';
import { chargedFor } from './hold-book';
import { StateRecords } from '../runtime/state-record';
import { costed, mergeProgress, recordLines } from './usage';
import { checkRoute } from '../../lib/route-record';

/** What a spend limit's `spent` counts, as a refusal says it. */
const PERIOD_TEXT: Record<SpendLimitName, string> = { spend_per_day: 'this UTC day', spend_per_month: 'this UTC month', spend_total: 'in all' };

export class FundsHold extends LeaseBook implements FundsHoldApi, ActorInstance {
  static readonly actorType = FUNDS_HOLD_ACTOR_TYPE;
  static readonly methods = FUNDS_HOLD_METHODS;
  static readonly args = FUNDS_HOLD_ARGS;

  /** Each credit's amount, by reference (a reference applies once). */
  private readonly credits = new StateRecords<string>(this.ctx.state, CREDIT_KEY_PREFIX);
  private readonly debits = new StateRecords<string>(this.ctx.state, DEBIT_KEY_PREFIX);

  async reserve(request: ReserveRequest): Promise<HoldOutcome> {
    const amount = parseAmount(request.amount);
    const state = await this.load();
    const existing = state.holds[request.holdId];
    if (existing) {
      if (fromStored(existing.amount) !== amount) throw new GatewayError('hold_state_conflict', `hold ${request.holdId} is open with another amount`);
      // Taken over by a retry (an image start that died between its hold and its task): the hold
      // lives at least as long as the retry's own would, since the retry's task measures its
      // deadline from now. Left at the first start's expiry, an artifact that came before the
      // task's deadline could find the hold expired, and the platform would bear the image.
      const expiresAt = this.ctx.now() + request.ttlMs;
      if (expiresAt > existing.expiresAt) {
        existing.expiresAt = expiresAt;
        await this.scheduleExpiry(state, this.ctx.now());
        this.save(state);
      }
      return this.outcome(request.holdId, 'open', amount, 0n, state);
    }
    if (await this.closedHold(request.holdId)) throw new GatewayError('hold_state_conflict', `hold ${request.holdId} has already ended`);
    const available = availableIn(state);
    if (amount > available) {
      throw new GatewayError('insufficient_funds', 'the available balance does not cover the reservation estimate', {
        extra: { required: toJsonAmount(amount), available: toJsonAvailable(available) },
      });
    }
    // The key whose spend the charge counts towards: the call's spend key, with or without limits.
    const apiKeyId = request.spendKeyId ?? request.spend?.apiKeyId ?? undefined;
    if (request.spend) {
      await this.keySpend.load([request.spend.apiKeyId ?? undefined]);
      this.fitSpend(state, request.spend, amount);
    }
    const expiresAt = this.ctx.now() + request.ttlMs;
    state.holds[request.holdId] = { amount: storedAmount(amount), expiresAt, requestId: request.requestId, model: request.model, profileId: request.profileId, ...(apiKeyId !== undefined ? { apiKeyId } : {}) };
    this.ctx.adjustGauge('holds_open', 1);
    await this.scheduleExpiry(state, this.ctx.now());
    this.save(state);
    return this.outcome(request.holdId, 'open', amount, 0n, state);
  }

  /**
   * Refuses a hold that would take a scope past one of its spend limits: what the scope was
   * charged in the limit's period, plus what it holds open (the account: every open hold and what
   * leases lock; a key: its own holds), plus this amount. The key's counter is loaded (reserve).
   */
  private fitSpend(state: FundsState, spend: SpendScopes, amount: bigint): void {
    const now = this.ctx.now();
    // What funds leases lock counts for the account: the actor cannot see the calls carved from
    // them, nor tell an idle lease from a busy one until its gateway returns it.
    const leased = leasedRest(state);
    const scopes = [
      { scope: 'account' as const, limits: spend.account, spent: spentAt(state.spent, now), open: held(state) + leased, leased },
      ...(spend.apiKeyId !== null && spend.key
        ? [{ scope: 'key' as const, limits: spend.key, spent: this.keySpend.spentAt(spend.apiKeyId, now), open: heldForKey(state, spend.apiKeyId), leased: 0n }]
        : []),
    ];
    for (const { scope, limits, spent, open, leased: locked } of scopes) {
      for (const name of SPEND_LIMITS) {
        const limit = limits?.[name];
        if (limit === undefined || spent[name] + open + amount <= BigInt(limit)) continue;
        // An idle lease can refuse a call while no call runs: the refusal says how much of what it
        // counts is only locked by leases, which their gateways return once idle.
        const heldText = scope === 'account' ? `${open} held (${open - locked} by open holds, ${locked} locked by funds leases until their gateways return them)` : `${open} held`;
        throw new GatewayError('spend_limit_exceeded', `the ${scope}'s ${name} of ${limit} nano-USD would be passed: ${spent[name]} charged ${PERIOD_TEXT[name]} and ${heldText} now, ${amount} asked; nothing is held`, {
          param: name,
          extra: { limit: name, scope, value: limit, spent: toJsonAmount(spent[name]), held: toJsonAmount(open), ...(scope === 'account' ? { leased: toJsonAmount(locked) } : {}), required: toJsonAmount(amount) },
        });
      }
    }
  }

  async settle(request: SettleRequest): Promise<HoldOutcome> {
    const recorded = recordLines(request.lines);
    const route = checkRoute(request.route);
    const state = await this.load();
    const hold = state.holds[request.holdId];
    if (!hold) {
      return this.onEnded(state, request.holdId, 'settle', recorded, route);
    }
    const amount = fromStored(hold.amount);
    const { lines, cost } = costed(recorded);
    // Never above the hold: usage beyond the estimate is borne by the platform.
    const charged = request.platformBorne ? 0n : min(cost, amount);
    await this.keySpend.load([hold.apiKeyId]);
    this.charge(state, charged, hold.apiKeyId);
    this.close(state, request.holdId, 'settle', amount, charged);
    this.emitCharge(request.holdId, hold, lines, charged, { kind: request.platformBorne ? 'platform_borne' : 'charge', amount: request.platformBorne ? cost : charged }, route);
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
    const state = await this.load();
    const hold = state.holds[request.holdId];
    if (!hold) {
      const closed = await this.closedHold(request.holdId);
      if (!closed) throw new GatewayError('hold_not_found', `no hold ${request.holdId}`);
      return this.outcome(request.holdId, closed.state, fromStored(closed.amount), fromStored(closed.charged), state);
    }
    if (recorded.length > 0) hold.progress = mergeProgress(hold.progress, recorded);
    // Later than the pending reminder: that reminder finds the hold not yet due and re-arms for it.
    hold.expiresAt = Math.max(hold.expiresAt, this.ctx.now() + request.ttlMs);
    this.save(state);
    return this.outcome(request.holdId, 'open', fromStored(hold.amount), 0n, state);
  }

  /** A release asExpiry: the hold ends now as its expiry would end it (expireHold). */
  private async expireNow(state: FundsState, holdId: string): Promise<HoldOutcome> {
    await this.keySpend.load([state.holds[holdId].apiKeyId]);
    this.expireHold(state, holdId);
    this.save(state);
    const closed = (await this.closedHold(holdId)) as ClosedHold;
    return { ...this.outcome(holdId, 'expired', fromStored(closed.amount), fromStored(closed.charged), state), ...chargedFor(closed) };
  }

  async release(request: ReleaseRequest): Promise<HoldOutcome> {
    const state = await this.load();
    const hold = state.holds[request.holdId];
    if (!hold) return this.onEnded(state, request.holdId, 'release');
    if (request.asExpiry === true) return this.expireNow(state, request.holdId);
    this.end(state, request.holdId, 'release', request.reason);
    this.save(state);
    return this.outcome(request.holdId, 'released', fromStored(hold.amount), 0n, state);
  }

  async credit(request: CreditRequest): Promise<CreditOutcome> {
    return this.adjust('credit', request, (state, amount) => {
      const balance = fromStored(state.balance) + amount;
      if (balance > MAX_SAFE) throw new GatewayError('invalid_request', 'the balance would exceed 2^53-1 minor units', { param: 'amount' });
      return balance;
    });
  }

  async debit(request: DebitRequest): Promise<CreditOutcome> {
    return this.adjust('debit', request, (state, amount) => {
      const available = availableOf(state.balance, held(state), leasedRest(state));
      if (amount > available) {
        throw new GatewayError('insufficient_funds', `the debit exceeds what is available (${available < 0n ? 0n : available} after open holds and leases); nothing moved`, { param: 'amount' });
      }
      return fromStored(state.balance) - amount;
    });
  }

  /**
   * A credit or a debit: applied once per reference (`credit:`/`debit:` records; a repeat answers
   * applied: false, another amount under the same reference is refused), the balance `next`
   * computes (or refuses), one bill event.
   */
  private async adjust(kind: 'credit' | 'debit', request: CreditRequest, next: (state: FundsState, amount: bigint) => bigint): Promise<CreditOutcome> {
    const amount = parseAmount(request.amount);
    if (amount === 0n) throw new GatewayError('invalid_request', 'amount must be positive', { param: 'amount' });
    const references = kind === 'credit' ? this.credits : this.debits;
    const state = await this.load();
    const earlier = await references.get(request.reference);
    const answer = (applied: boolean, balance: bigint) => ({ reference: request.reference, amount: toJsonAmount(amount), applied, balance: toJsonAmount(balance) });
    if (earlier !== undefined) {
      if (fromStored(earlier) !== amount) throw new GatewayError(`${kind}_reference_reused`, `reference "${request.reference}" was already used for another amount`, { param: 'reference' });
      return answer(false, fromStored(state.balance));
    }
    const balance = next(state, amount);
    state.balance = storedAmount(balance);
    references.set(request.reference, storedAmount(amount));
    const delta = toJsonAmount(amount);
    this.emitBill(billingEvent(`${kind}:${this.accountId}:${this.pool}:${request.reference}`, this.ctx.now(), {
      kind, accountId: this.accountId, pool: this.pool, balanceDelta: kind === 'credit' ? delta : -delta, amount: delta, reference: request.reference,
    }));
    this.save(state);
    return answer(true, balance);
  }

  async getBalance(): Promise<BalanceView> {
    const state = await this.load();
    const balance = fromStored(state.balance);
    const onHold = held(state);
    const leased = leasedRest(state);
    return {
      accountId: this.accountId,
      pool: this.pool,
      balance: toJsonAmount(balance),
      held: toJsonAmount(onHold),
      available: toJsonAmount(availableOf(balance, onHold, leased)),
      openHolds: Object.keys(state.holds).length,
      leased: toJsonAmount(leased),
      openLeases: Object.keys(state.leases ?? {}).length,
    };
  }

  async ledgerFigures(): Promise<LedgerFigures> {
    const state = await this.load();
    return { balance: toJsonAmount(fromStored(state.balance)), bills: state.bills ?? null };
  }

  async getSpend(request: { apiKeyId: string | null }): Promise<SpendView> {
    const state = await this.load();
    const now = this.ctx.now();
    const figures = (spent: Record<SpendLimitName, bigint>, open: bigint): SpendFigures => ({
      spend_per_day: toJsonAmount(spent.spend_per_day),
      spend_per_month: toJsonAmount(spent.spend_per_month),
      spend_total: toJsonAmount(spent.spend_total),
      held: toJsonAmount(open),
    });
    // `held` is what the account's limits count; `leased`, the part of it funds leases lock, tells
    // why it may be above what calls in flight hold.
    const leased = leasedRest(state);
    const account = { ...figures(spentAt(state.spent, now), held(state) + leased), leased: toJsonAmount(leased) };
    if (request.apiKeyId === null) return { account, key: null };
    await this.keySpend.load([request.apiKeyId]);
    return { account, key: figures(this.keySpend.spentAt(request.apiKeyId, now), heldForKey(state, request.apiKeyId)) };
  }

  async onReminder(name: string): Promise<void> {
    if (!name.startsWith(EXPIRY_REMINDER)) return;
    // Loading sweeps and schedules (keepExpiring), told which reminder fired.
    this.save(await this.load(name));
  }
}
