// One account's funds (one pool) as this gateway instance sees them through leases: each
// request's hold is carved from an open lease locally (no actor call), settled in the lease's
// next batch (./lease-batcher.ts). When no lease fits, a new one is asked for (one at a time),
// sized from recent demand and bounded; the FundsHold actor grants at most a quarter of the
// available balance and refuses a lease smaller than two requests' holds, so a small balance
// falls back to per-request holds (the actor's reserve/settle) and nothing is locked away from
// other instances. Invariant: on every lease, charged + carved ≤ granted (a carve must fit the
// rest; a charge is never above its carve), so spend never exceeds a lease, and a lease never
// exceeds what was available when it was granted: no overdraw, however many instances lease.

import { plus, rest } from '../../../lib/money';
import { randomUUID } from 'node:crypto';
import type {
  CarvedHold,
  FundsHoldApi,
  HoldOutcome,
  ProgressRequest,
  ReleaseRequest,
  ReserveRequest,
  SettleRequest,
} from '../../../actors/funds-hold/FundsHoldInterface';
import { GatewayError } from '../../../lib/errors';
import { checkRoute } from '../../../lib/route-record';
import { retryable } from '../chat/pending-settlements';
import { LeaseBatcher } from './lease-batcher';

export interface LeaseSettings {
  /** A lease lives this long without news (its expiry charges its carved holds' progress). */
  ttlMs: number;
  /** A lease without calls for this long is returned. */
  idleMs: number;
  /** The largest lease asked for (nano-USD). */
  maxAmount: number;
}

/** A lease is asked for this many of the current request's holds at least (recent demand may ask more). */
export const LEASE_MIN_REQUESTS = 8;
/** The actor refuses a lease that fits fewer than this many of the request's holds: per-request holds then. */
export const LEASE_MIN_GRANT_REQUESTS = 2;
/** After a refusal, per-request holds for this long before a lease is asked for again. */
export const LEASE_RETRY_AFTER_MS = 1000;
/** Recent demand: the sum of carved amounts, decaying with this time constant. */
const DEMAND_DECAY_MS = 2000;
/** A lease is sized this much above recent demand (a burst still arriving, the decay of the first calls). */
const DEMAND_HEADROOM = 1.5;
/**
 * When a carve leaves less than this share of its lease, the next lease is asked for at once, in
 * the background: the call that finds the lease full then carves from the next one instead of
 * waiting for `openLease` (a synchronous actor round trip; on Dapr through two sidecars).
 */
const LEASE_AHEAD_SHARE = 0.25;

interface Lease {
  id: string;
  granted: number;
  charged: number;
  /** Amounts of the carved holds not yet ended. */
  carved: number;
  holds: number;
  /** Carves made from it so far: each carved hold is numbered in its lease (CarvedHold.carve). */
  carves: number;
  /** Until when the actor keeps the lease at least (the send time of its last answered batch + ttl). */
  renewedUntil: number;
  lastSentAt: number;
  lastUsedAt: number;
  /** Its last batch reached the actor: carves only then (an actor out of reach serves no new call from it). */
  confirmed: boolean;
  /** No new carves: full, or renewals failing; closed once its carves have ended. */
  draining: boolean;
  /** Ended on the actor (closed or expired). */
  ended: boolean;
  closing?: Promise<unknown>;
  batcher: LeaseBatcher;
}

interface Carve {
  lease: Lease;
  hold: CarvedHold;
}

export class AccountLeases {
  private readonly leases: Lease[] = [];
  private readonly carves = new Map<string, Carve>();
  private opening: Promise<Lease | number | undefined> | undefined;
  private refusedUntil = 0;
  private demand = 0;
  private demandAt = 0;
  private lastBalance = 0;

  /**
   * `now`: the instance's own monotonic clock. Every time here is compared only with another of
   * this instance's (a renewal due, an idle lease, a lease known to live, a refusal's pause), so
   * a wall clock stepped back (NTP) must not stop the renewals: the actor, on its own clock,
   * would let the lease expire while this instance still carved from it, and each call carved
   * then would be borne by the platform (a settle after expiry).
   */
  constructor(private readonly actor: FundsHoldApi, private readonly settings: LeaseSettings, private readonly now: () => number = () => performance.now()) {}

  /** What the actors see of this account through this instance: leases open, holds carved. */
  get openLeases(): number {
    return this.leases.length;
  }

  get carvedHolds(): number {
    return this.carves.size;
  }

  async reserve(request: ReserveRequest): Promise<HoldOutcome> {
    this.noteDemand(request.amount);
    for (let attempt = 0; attempt < 3; attempt++) {
      const lease = this.leases.find((l) => this.fits(l, request.amount));
      if (lease) {
        this.drainFull(request.amount, lease);
        const outcome = this.carve(lease, request);
        this.openAhead(lease, request.amount);
        return outcome;
      }
      if (this.now() < this.refusedUntil) break;
      this.drainFull(request.amount);
      const opened = await this.open(request.amount);
      // Refused with less available than this call's hold: the actor's answer to a call that was
      // waiting for it, as fresh as a reserve of its own would have been (no second turn to say 402).
      if (typeof opened === 'number' && opened < request.amount) throw insufficientFunds(request.amount, opened);
      if (typeof opened !== 'object') break;
    }
    return this.actor.reserve(request);
  }

  async settle(request: SettleRequest): Promise<HoldOutcome> {
    const carve = this.carves.get(request.holdId);
    if (!carve) return this.actor.settle(request);
    // Checked here as a direct settle's argument is, so a bad route is refused to its caller alone, before any batch.
    const route = checkRoute(request.route);
    return this.ending(carve, carve.lease.batcher.settle({ ...carve.hold, lines: request.lines, ...(request.platformBorne ? { platformBorne: true } : {}), ...(route ? { route } : {}) }));
  }

  async release(request: ReleaseRequest): Promise<HoldOutcome> {
    const carve = this.carves.get(request.holdId);
    if (!carve) return this.actor.release(request);
    return this.ending(carve, carve.lease.batcher.release({ ...carve.hold, reason: request.reason }));
  }

  /** A carved hold's settle or release in its batch: once answered, the carve has ended here. */
  private async ending(carve: Carve, batched: Promise<HoldOutcome>): Promise<HoldOutcome> {
    const outcome = await batched.catch((error) => {
      // Refused (the hold ended otherwise): counted as charged in full here, never spent twice.
      if (!retryable(error)) this.ended(carve, carve.hold.amount);
      throw error;
    });
    this.ended(carve, outcome.charged);
    return outcome;
  }

  /**
   * A carved hold's delivered usage goes in its lease's next batch. A renewal only (no usage)
   * needs no call: the lease is renewed while it has holds (tick).
   */
  async progress(request: ProgressRequest): Promise<HoldOutcome> {
    const carve = this.carves.get(request.holdId);
    if (!carve) return this.actor.progress(request);
    if (request.lines.length > 0) await carve.lease.batcher.progress({ ...carve.hold, lines: request.lines });
    return { holdId: request.holdId, state: 'open', amount: carve.hold.amount, charged: 0, balance: this.lastBalance };
  }

  /**
   * Housekeeping, every second or so: renews leases in use (a quarter of the ttl after the last
   * batch), stops carving from a lease whose renewals have failed for half its ttl, returns idle
   * and drained leases, forgets ended ones. True while anything is left.
   */
  tick(): boolean {
    const now = this.now();
    for (const lease of [...this.leases]) {
      if (lease.ended || (lease.holds === 0 && lease.renewedUntil <= now)) {
        this.forget(lease);
        continue;
      }
      if (lease.renewedUntil - now < this.settings.ttlMs / 2) lease.draining = true;
      if (lease.holds === 0 && (lease.draining || now - lease.lastUsedAt >= this.settings.idleMs)) this.close(lease);
      else if (now - lease.lastSentAt >= this.settings.ttlMs / 4) lease.batcher.renew().catch(() => undefined);
    }
    return this.leases.length > 0 || this.carves.size > 0 || this.opening !== undefined;
  }

  /** Returns every lease without carved holds (a shutdown, after its settles). */
  async closeAll(): Promise<void> {
    for (const lease of this.leases) if (lease.holds === 0) this.close(lease);
    await Promise.allSettled(this.leases.map((l) => l.closing));
  }

  /** A carve needs room, a lease whose last batch reached the actor, known to live half its ttl more. */
  private fits(lease: Lease, amount: number): boolean {
    return lease.confirmed && !lease.draining && !lease.ended && rest(lease.granted, lease.charged, lease.carved) >= amount && lease.renewedUntil - this.now() >= this.settings.ttlMs / 2;
  }

  private carve(lease: Lease, request: ReserveRequest): HoldOutcome {
    const hold: CarvedHold = {
      holdId: request.holdId, amount: request.amount, requestId: request.requestId, model: request.model, profileId: request.profileId, carve: lease.carves++,
      ...(request.spendKeyId !== undefined ? { apiKeyId: request.spendKeyId } : {}),
    };
    lease.carved = plus(lease.carved, request.amount);
    lease.holds += 1;
    lease.lastUsedAt = this.now();
    this.carves.set(request.holdId, { lease, hold });
    return { holdId: request.holdId, state: 'open', amount: request.amount, charged: 0, balance: this.lastBalance };
  }

  /** A carved hold has ended: its amount leaves the carved total, its charge joins the lease's. */
  private ended(carve: Carve, charged: number): void {
    if (this.carves.get(carve.hold.holdId) !== carve) return;
    this.carves.delete(carve.hold.holdId);
    carve.lease.carved = rest(carve.lease.carved, carve.hold.amount);
    carve.lease.charged = plus(carve.lease.charged, charged);
    carve.lease.holds -= 1;
    // Idle counts from the last call's end: a lease is returned only after a quiet idleMs.
    carve.lease.lastUsedAt = this.now();
    if (carve.lease.holds === 0 && carve.lease.draining) this.close(carve.lease);
  }

  /**
   * Drains the leases without room for a hold of `amount` (of those ahead of `until`, when given:
   * the one a call carves from): no new carves, each returned once its holds have ended.
   */
  private drainFull(amount: number, until?: Lease): void {
    for (const l of this.leases) {
      if (l === until) return;
      if (!l.draining && rest(l.granted, l.charged, l.carved) < amount) this.drain(l);
    }
  }

  private drain(lease: Lease): void {
    lease.draining = true;
    if (lease.holds === 0) this.close(lease);
  }

  /**
   * The next lease, asked for before `lease` runs out (LEASE_AHEAD_SHARE): unless one is being
   * asked for, one was refused lately, or another lease still has room. A failure is left to the
   * call that finds no lease (it asks again, and meets the error itself).
   */
  private openAhead(lease: Lease, amount: number): void {
    if (this.opening || this.now() < this.refusedUntil) return;
    if (rest(lease.granted, lease.charged, lease.carved) >= lease.granted * LEASE_AHEAD_SHARE) return;
    if (this.leases.some((l) => l !== lease && this.fits(l, amount))) return;
    this.open(amount).catch(() => undefined);
  }

  /**
   * One lease asked for at a time; everyone waiting for one shares it. The lease, or the available
   * balance the actor answered when it refused one (undefined: not asked, or unreachable).
   */
  private open(amount: number): Promise<Lease | number | undefined> {
    this.opening ??= this.ask(amount).finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async ask(amount: number): Promise<Lease | number | undefined> {
    // Sized after this tick: the demand of calls arriving together counts.
    await Promise.resolve();
    const want = Math.min(this.settings.maxAmount, Math.max(amount * LEASE_MIN_REQUESTS, Math.ceil(this.demand * DEMAND_HEADROOM)));
    const minAmount = amount * LEASE_MIN_GRANT_REQUESTS;
    // Too large a hold for any lease: this call takes a hold of its own (smaller ones still lease).
    if (!Number.isSafeInteger(minAmount) || minAmount > want) return undefined;
    const id = randomUUID();
    const sentAt = this.now();
    // Unreachable (503 actor_unavailable at the actor call timeout): the calls waiting for it fail
    // as their own reserves would have, without a second wait. A late grant expires by itself.
    const outcome = await this.actor.openLease({ leaseId: id, amount: want, minAmount, ttlMs: this.settings.ttlMs });
    this.lastBalance = outcome.balance;
    if (outcome.state !== 'open') {
      this.refused();
      return outcome.available;
    }
    const lease: Lease = {
      id, granted: outcome.amount, charged: outcome.charged, carved: 0, holds: 0, carves: 0,
      renewedUntil: sentAt + this.settings.ttlMs, lastSentAt: sentAt, lastUsedAt: this.now(), confirmed: true, draining: false, ended: false,
      batcher: undefined as unknown as LeaseBatcher,
    };
    lease.batcher = new LeaseBatcher(this.actor, id, this.settings.ttlMs, this.now, {
      sent: (at) => (lease.lastSentAt = at),
      failed: () => (lease.confirmed = false),
      answered: (answer, at) => {
        lease.confirmed = true;
        this.lastBalance = answer.balance;
        if (answer.state === 'open') lease.renewedUntil = Math.max(lease.renewedUntil, at + this.settings.ttlMs);
        else lease.ended = lease.draining = true;
      },
    });
    this.leases.push(lease);
    return lease;
  }

  private refused(): undefined {
    this.refusedUntil = this.now() + LEASE_RETRY_AFTER_MS;
    return undefined;
  }

  private close(lease: Lease): void {
    lease.draining = true;
    if (lease.closing || lease.ended) return;
    lease.closing = lease.batcher.close().then(
      () => this.forget(lease),
      // Not reached: the next tick tries again; its expiry returns it otherwise.
      () => (lease.closing = undefined),
    );
  }

  private forget(lease: Lease): void {
    lease.ended = true;
    const i = this.leases.indexOf(lease);
    if (i >= 0) this.leases.splice(i, 1);
  }

  private noteDemand(amount: number): void {
    const now = this.now();
    this.demand = this.demand * Math.exp(-(now - this.demandAt) / DEMAND_DECAY_MS) + amount;
    this.demandAt = now;
  }
}

/** The refusal the actor's reserve answers (the same code and details). */
function insufficientFunds(required: number, available: number): GatewayError {
  return new GatewayError('insufficient_funds', 'the available balance does not cover the reservation estimate', { extra: { required, available: Math.max(0, available) } });
}
