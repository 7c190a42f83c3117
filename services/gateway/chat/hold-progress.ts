// A stream's progress on its hold: every few hundred output tokens or few seconds (whichever
// first) the usage delivered so far is recorded on the hold and its expiry pushed out
// (FundsHold.progress), so that a crash of this process charges what was delivered up to the
// last record, and a long call never outlives its hold. Off the relay path: `delivered` only
// notes the count; at most one record is in flight per stream, newer counts coalesce into the next.

import type { Logger } from 'pino';
import type { FundsHoldApi, UsageLine } from '../../../actors/funds-hold/FundsHoldInterface';
import type { TokenUsage } from '../../../providers/port';

export interface ProgressEvery {
  everyTokens: number;
  everyMs: number;
}

export const DEFAULT_PROGRESS: ProgressEvery = { everyTokens: 256, everyMs: 2000 };

export class HoldProgress {
  /** The output delivered so far, and the usage it makes (computed only when recorded). */
  private latest: { outputTokens: number; usageOf: (outputTokens: number) => TokenUsage | Promise<TokenUsage> } | undefined;
  private recordedTokens = 0;
  private inFlight: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly funds: FundsHoldApi,
    private readonly holdId: string,
    private readonly lines: (usage: TokenUsage) => UsageLine[],
    private readonly ttlMs: number,
    private readonly every: ProgressEvery,
    private readonly logger: Logger,
  ) {
    // A renewal (or the latest count) every interval, even while the provider is silent.
    this.timer = setInterval(() => this.record(), every.everyMs);
    this.timer.unref();
  }

  /**
   * The output delivered to the client so far (never more than it was sent), and how it makes a
   * usage: called only when a record is sent. Cheap: no await, nothing counted.
   */
  delivered(outputTokens: number, usageOf: (outputTokens: number) => TokenUsage | Promise<TokenUsage>): void {
    this.latest = { outputTokens, usageOf };
    if (outputTokens - this.recordedTokens >= this.every.everyTokens) this.record();
  }

  /** Renews the hold now (a pending settle keeps its hold open with this). */
  renew(): Promise<void> {
    return this.send();
  }

  /** No more records: the call is ending (its settle or release follows). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private record(): void {
    if (this.stopped || this.inFlight) return;
    this.inFlight = this.send().finally(() => (this.inFlight = undefined));
  }

  private async send(): Promise<void> {
    const latest = this.latest;
    try {
      // Computed here, inside the try: a record that cannot be made is logged like one not landed,
      // never a rejection nobody handles (which would end the process and every call in it).
      const lines = latest && latest.outputTokens > 0 ? this.lines(await latest.usageOf(latest.outputTokens)) : [];
      await this.funds.progress({ holdId: this.holdId, lines, ttlMs: this.ttlMs });
      if (latest) this.recordedTokens = Math.max(this.recordedTokens, latest.outputTokens);
    } catch (error) {
      this.logger.warn({ err: error, holdId: this.holdId }, 'progress not recorded on the hold; the next record carries it');
    }
  }
}
