// The funds leases of one FundsHold actor (docs/money.md, "Funds leases"): a gateway instance's
// bulk hold, the holds it carves locally settled and released in batches, each carved hold ended
// once through the same checked step as a hold (hold-book.ts), a lease ended by its gateway or by
// its expiry with what its carved holds recorded charged.

import { GatewayError } from '../../lib/errors';
import { fromStored, min, parseAmount, storedAmount, toJsonAmount, toJsonAvailable } from '../../lib/money';
import type { CarvedResult, HoldOutcome, LeaseBatchOutcome, LeaseBatchRequest, LeaseOutcome, OpenLeaseRequest } from './FundsHoldInterface';
import {
  carvedMeta,
  LEASE_KEY_PREFIX,
  LEASE_SHARE_DIVISOR,
  availableIn,
  MAX_BATCH_ITEMS,
  type ClosedHold,
  type ClosedLease,
  type FundsState,
  type OpenLease,
  type ParsedCarved,
} from './funds-state';
import { BatchEndings } from './carve-endings';
import { HoldBook } from './hold-book';
import { StateRecords } from '../runtime/state-record';
import { costed, mergeProgress, recordLines, type RecordedLine } from './usage';
import { checkRoute } from '../../lib/route-record';

export abstract class LeaseBook extends HoldBook {
  /** Each ended lease, kept so a retried call answers the same. */
  private readonly closedLeases = new StateRecords<ClosedLease>(this.ctx.state, LEASE_KEY_PREFIX);

  /**
   * Grants a lease of min(amount, available / 4) when that is at least minAmount, else answers
   * `refused` and changes nothing. Idempotent by leaseId: an open or ended lease answers itself.
   */
  async openLease(request: OpenLeaseRequest): Promise<LeaseOutcome> {
    const amount = parseAmount(request.amount);
    const minAmount = parseAmount(request.minAmount);
    const state = await this.load();
    const existing = state.leases?.[request.leaseId];
    if (existing) return this.leaseOutcome(request.leaseId, 'open', existing, state);
    const closed = await this.closedLeases.get(request.leaseId);
    if (closed) return this.leaseOutcome(request.leaseId, closed.state, closed, state);
    const available = availableIn(state);
    const share = available > 0n ? available / LEASE_SHARE_DIVISOR : 0n;
    const grant = min(amount, share);
    if (grant < minAmount || grant <= 0n) return this.leaseOutcome(request.leaseId, 'refused', { amount: '0', charged: '0' }, state);
    const lease: OpenLease = { amount: storedAmount(grant), charged: '0', expiresAt: this.ctx.now() + request.ttlMs, progress: {}, ended: [] };
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
    const progress = request.progress ?? [];
    const settles = request.settle ?? [];
    const releases = request.release ?? [];
    if (progress.length + settles.length + releases.length > MAX_BATCH_ITEMS) {
      throw new GatewayError('invalid_request', `a lease batch has at most ${MAX_BATCH_ITEMS} items`);
    }
    // Checked before anything changes: an item without its ids refuses the whole batch; an item
    // whose lines are bad is refused alone (a settle's result says so; a progress record is dropped),
    // so one call's bad usage never holds up the settles and renewals riding with it.
    const checked = {
      progress: progress.map((item) => ({ item, meta: carvedMeta(item), lines: checkedLines(item.lines) })).filter((entry): entry is typeof entry & { lines: RecordedLine[] } => !(entry.lines instanceof GatewayError)),
      settle: settles.map((item) => ({ item, meta: carvedMeta(item), lines: checkedLines(item.lines) })),
      release: releases.map((item) => ({ item, meta: carvedMeta(item) })),
    };
    const state = await this.load();
    const lease = state.leases?.[request.leaseId];
    // An item's `closed:` record is read only when the item may have ended: the lease counts its
    // ended carves, so a hold it knows as still open needs no read (on Dapr a round trip to the
    // store per item). The others are read up front, all at once, side by side.
    const endings = new BatchEndings(this.ctx.state, this.closedHolds, request.leaseId, lease, [...checked.progress, ...checked.settle, ...checked.release].map(({ meta }) => meta));
    await endings.preload();
    const ended = lease ? undefined : await this.closedLeases.get(request.leaseId);
    if (!lease && !ended) throw new GatewayError('hold_not_found', `no lease ${request.leaseId}`);
    // The keys this batch may charge: its settles', and on closing the progress records' (endLease).
    await this.keySpend.load([
      ...checked.settle.map(({ meta }) => meta.apiKeyId),
      ...(lease && request.close === true ? Object.values(lease.progress).map((record) => record.apiKeyId) : []),
    ]);
    if (lease) {
      for (const { meta, lines } of checked.progress) {
        const entry = lease.progress[meta.holdId];
        if (entry) entry.lines = mergeProgress(entry.lines, lines);
        // A late record of a hold that has ended records nothing (it would be charged again at expiry).
        else if (lines.length > 0 && !(await endings.of(meta))) {
          lease.progress[meta.holdId] = { amount: storedAmount(meta.amount), requestId: meta.requestId, model: meta.model, profileId: meta.profileId, lines, ...(meta.apiKeyId !== undefined ? { apiKeyId: meta.apiKeyId } : {}) };
        }
      }
      lease.expiresAt = Math.max(lease.expiresAt, this.ctx.now() + request.ttlMs);
    }
    const settled: CarvedResult[] = [];
    for (const { item, meta, lines } of checked.settle) {
      settled.push(await this.carvedResult(meta.holdId, () => {
        if (lines instanceof GatewayError) throw lines;
        return this.settleCarved(state, lease, meta, lines, item.platformBorne === true, item.route, endings);
      }));
    }
    const released: CarvedResult[] = [];
    for (const { item, meta } of checked.release) {
      released.push(await this.carvedResult(meta.holdId, () => this.releaseCarved(state, lease, meta, String(item.reason ?? ''), endings)));
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

  /** One carved settle; a bad route refuses this item alone (before anything changes for it). */
  private async settleCarved(state: FundsState, lease: OpenLease | undefined, meta: ParsedCarved, recorded: RecordedLine[], platformBorne: boolean, rawRoute: unknown, endings: BatchEndings): Promise<HoldOutcome> {
    const route = checkRoute(rawRoute);
    const ended = await endings.of(meta);
    if (ended) return this.onEnded(state, meta.holdId, 'settle', recorded, route, ended);
    if (!lease) return this.settleAfterExpiry(state, meta.holdId, this.expireCarvedUnrecorded(meta), recorded, route);
    const { lines, cost } = costed(recorded);
    const rest = fromStored(lease.amount) - fromStored(lease.charged);
    // Never above the carved hold, never above what the lease has left.
    const charged = platformBorne ? 0n : min(min(cost, meta.amount), rest);
    this.charge(state, charged, meta.apiKeyId);
    lease.charged = storedAmount(fromStored(lease.charged) + charged);
    delete lease.progress[meta.holdId];
    await endings.record(lease, meta, { ...this.endingOf('settle', meta.amount, charged), state: 'settled' });
    this.emitCharge(meta.holdId, meta, lines, charged, { kind: platformBorne ? 'platform_borne' : 'charge', amount: platformBorne ? cost : charged }, route);
    return this.outcome(meta.holdId, 'settled', meta.amount, charged, state);
  }

  private async releaseCarved(state: FundsState, lease: OpenLease | undefined, meta: ParsedCarved, reason: string, endings: BatchEndings): Promise<HoldOutcome> {
    const ended = await endings.of(meta);
    if (ended) return this.onEnded(state, meta.holdId, 'release', [], undefined, ended);
    if (!lease) {
      const closed = this.expireCarvedUnrecorded(meta);
      return this.outcome(meta.holdId, closed.state, meta.amount, 0n, state);
    }
    delete lease.progress[meta.holdId];
    await endings.record(lease, meta, { ...this.endingOf('release', meta.amount, 0n), state: 'released' });
    this.emitRelease(meta, reason);
    return this.outcome(meta.holdId, 'released', meta.amount, 0n, state);
  }

  /** A carved hold of an ended lease, never recorded there: ended as an expired hold without progress. */
  private expireCarvedUnrecorded(meta: ParsedCarved): ClosedHold {
    const closed = this.recordEnded(meta.holdId, 'expire', meta.amount, 0n, { requestId: meta.requestId, model: meta.model, profileId: meta.profileId, lines: [] });
    this.emitRelease(meta, 'expired');
    return closed;
  }

  /** Ends every lease whose time is up (its gateway stopped renewing it); the number ended. */
  protected expireOverdueLeases(state: FundsState, now: number): number {
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
    for (const [holdId, record] of Object.entries(lease.progress)) {
      const amount = fromStored(record.amount);
      const { lines, cost } = costed(record.lines);
      const rest = fromStored(lease.amount) - fromStored(lease.charged);
      const charged = min(min(cost, amount), rest);
      this.charge(state, charged, record.apiKeyId);
      lease.charged = storedAmount(fromStored(lease.charged) + charged);
      this.recordEnded(holdId, 'expire', amount, charged, { requestId: record.requestId, model: record.model, profileId: record.profileId, lines: record.lines });
      this.emitCharge(holdId, record, lines, charged, { kind: 'charge', amount: charged, reference: 'expired_with_progress' });
    }
    lease.progress = {};
    this.closedLeases.set(leaseId, { state: to, amount: lease.amount, charged: lease.charged });
    const { [leaseId]: _gone, ...rest } = state.leases!;
    state.leases = rest;
  }

  private leaseOutcome(leaseId: string, leaseState: LeaseOutcome['state'], lease: { amount: string; charged: string }, state: FundsState): LeaseOutcome {
    const available = availableIn(state);
    return { leaseId, state: leaseState, amount: toJsonAmount(fromStored(lease.amount)), charged: toJsonAmount(fromStored(lease.charged)), balance: toJsonAmount(fromStored(state.balance)), available: toJsonAvailable(available) };
  }
}

/** An item's usage lines as recorded, or the refusal of its bad lines (recordLines). */
function checkedLines(lines: unknown): RecordedLine[] | GatewayError {
  try {
    return recordLines(lines);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}
