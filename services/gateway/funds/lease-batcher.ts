// The batches of one funds lease: settles, releases and progress records of its carved holds go
// to the FundsHold actor together, one `leaseBatch` call at a time (group commit: what arrives
// while a batch is in flight goes in the next one, so a lone call waits for nothing). A settle's
// promise resolves only once the batch that carries it has committed: a caller's charge is
// durable before its answer. A failed batch rejects its settles and releases (the caller retries
// them: PendingSettlements; every item is idempotent by hold id) and drops its progress records
// (the next record carries the newest count).

import type {
  CarvedProgress,
  CarvedRelease,
  CarvedResult,
  CarvedSettle,
  FundsHoldApi,
  HoldOutcome,
  LeaseBatchRequest,
  LeaseOutcome,
} from '../../../actors/funds-hold/FundsHoldInterface';
import { GatewayError } from '../../../lib/errors';

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

function waiter<T>(): { promise: Promise<T>; waiter: Waiter<T> } {
  let w!: Waiter<T>;
  const promise = new Promise<T>((resolve, reject) => (w = { resolve, reject }));
  return { promise, waiter: w };
}

/** Items per batch: bounds one actor turn's commit. */
export const MAX_BATCH_ITEMS = 500;

/** The refusal of one item, as the error a direct settle or release would have thrown. */
export function itemError(result: CarvedResult): GatewayError {
  const code = GatewayError.isCode(result.error?.code) ? result.error.code : 'hold_state_conflict';
  return new GatewayError(code, result.error?.message ?? `hold ${result.holdId} was refused`);
}

export class LeaseBatcher {
  private settles: { item: CarvedSettle; waiter: Waiter<HoldOutcome> }[] = [];
  private releases: { item: CarvedRelease; waiter: Waiter<HoldOutcome> }[] = [];
  /** Newest record per hold (older ones coalesce into it). */
  private records = new Map<string, { item: CarvedProgress; waiters: Waiter<void>[] }>();
  private renewals: Waiter<LeaseOutcome>[] = [];
  private closing: Waiter<LeaseOutcome>[] = [];
  private inFlight = false;
  private scheduled = false;

  constructor(
    private readonly actor: Pick<FundsHoldApi, 'leaseBatch'>,
    private readonly leaseId: string,
    private readonly ttlMs: number,
    /** The lease owner's clock (a send time is compared with its other times). */
    private readonly now: () => number,
    /** Told when a batch is sent and when the lease's answer comes (renewal, charged, ended). */
    private readonly observe: { sent(at: number): void; answered(lease: LeaseOutcome, sentAt: number): void; failed(): void },
  ) {}

  settle(item: CarvedSettle): Promise<HoldOutcome> {
    const { promise, waiter: w } = waiter<HoldOutcome>();
    this.settles.push({ item, waiter: w });
    this.schedule();
    return promise;
  }

  release(item: CarvedRelease): Promise<HoldOutcome> {
    const { promise, waiter: w } = waiter<HoldOutcome>();
    this.releases.push({ item, waiter: w });
    this.schedule();
    return promise;
  }

  progress(item: CarvedProgress): Promise<void> {
    const { promise, waiter: w } = waiter<void>();
    const queued = this.records.get(item.holdId);
    if (queued) {
      queued.item = item;
      queued.waiters.push(w);
    } else this.records.set(item.holdId, { item, waiters: [w] });
    this.schedule();
    return promise;
  }

  /** Pushes the lease's expiry out (an empty batch, unless one goes anyway). */
  renew(): Promise<LeaseOutcome> {
    const { promise, waiter: w } = waiter<LeaseOutcome>();
    this.renewals.push(w);
    this.schedule();
    return promise;
  }

  /** Ends the lease: its rest returns to the account's available balance. */
  close(): Promise<LeaseOutcome> {
    const { promise, waiter: w } = waiter<LeaseOutcome>();
    this.closing.push(w);
    this.schedule();
    return promise;
  }

  get idle(): boolean {
    return !this.inFlight && this.settles.length === 0 && this.releases.length === 0 && this.records.size === 0;
  }

  private schedule(): void {
    if (this.inFlight || this.scheduled) return;
    this.scheduled = true;
    // After the current tick: what the same tick enqueues rides along.
    queueMicrotask(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.inFlight) return;
    const pending = this.settles.length + this.releases.length + this.records.size + this.renewals.length + this.closing.length;
    if (pending === 0) return;
    this.inFlight = true;
    let room = MAX_BATCH_ITEMS;
    const progress = [...this.records.values()].slice(0, room);
    for (const p of progress) this.records.delete(p.item.holdId);
    room -= progress.length;
    const settles = this.settles.splice(0, room);
    room -= settles.length;
    const releases = this.releases.splice(0, room);
    const renewals = this.renewals.splice(0);
    // Closed only in a batch that carries everything queued (the owner closes an empty lease).
    const close = this.settles.length === 0 && this.releases.length === 0 && this.records.size === 0 ? this.closing.splice(0) : [];
    const request: LeaseBatchRequest = { leaseId: this.leaseId, ttlMs: this.ttlMs };
    if (progress.length > 0) request.progress = progress.map((p) => p.item);
    if (settles.length > 0) request.settle = settles.map((s) => s.item);
    if (releases.length > 0) request.release = releases.map((r) => r.item);
    if (close.length > 0) request.close = true;
    const sentAt = this.now();
    this.observe.sent(sentAt);
    try {
      const outcome = await this.actor.leaseBatch(request);
      this.observe.answered(outcome.lease, sentAt);
      settles.forEach((s, i) => answer(s.waiter, outcome.settled[i]));
      releases.forEach((r, i) => answer(r.waiter, outcome.released[i]));
      for (const p of progress) for (const w of p.waiters) w.resolve();
      for (const w of [...renewals, ...close]) w.resolve(outcome.lease);
    } catch (error) {
      this.observe.failed();
      for (const w of [...settles, ...releases].map((x) => x.waiter)) w.reject(error);
      for (const p of progress) for (const w of p.waiters) w.reject(error);
      for (const w of [...renewals, ...close]) w.reject(error);
    } finally {
      this.inFlight = false;
      this.schedule();
    }
  }
}

function answer(w: Waiter<HoldOutcome>, result: CarvedResult | undefined): void {
  if (result?.outcome) w.resolve(result.outcome);
  else w.reject(result ? itemError(result) : new GatewayError('internal_error', 'the lease batch answered no result for an item'));
}
