// Settlements that could not land at once (the actors host unreachable: a restarting actors
// app, a sidecar timeout). A call whose answer was delivered must be charged, so its settle is
// retried with backoff until it lands; meanwhile its hold is renewed (FundsHold.progress), so
// the hold stays open under the pending settle. A release is retried the same way, without the
// renewals. A refusal (4xx: the hold ended otherwise) is final and logged. A graceful shutdown
// waits for what is pending, up to the drain timeout.

import type { Logger } from 'pino';
import { GatewayError } from '../../../lib/errors';
import { exponentialBackoff, retry } from '../../../lib/retry';

export interface SettlementRetry {
  /** The first retry's delay; doubled each time up to maxDelayMs. */
  firstDelayMs: number;
  maxDelayMs: number;
}

const DEFAULT_RETRY: SettlementRetry = { firstDelayMs: 200, maxDelayMs: 5000 };

/** An error worth retrying: the actor was not reached or failed, not a refusal of the request. */
export function retryable(error: unknown): boolean {
  return !(error instanceof GatewayError) || error.status >= 500;
}

export class PendingSettlements {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly logger: Logger, private readonly retry: SettlementRetry = DEFAULT_RETRY) {}

  get size(): number {
    return this.pending.size;
  }

  /**
   * Runs `settle` until it lands (or is refused: that error is thrown). Before each retry the
   * hold is renewed by `renew` (its failure is only logged: the retry will tell).
   */
  run<T>(holdId: string, settle: () => Promise<T>, renew: () => Promise<unknown>): Promise<T> {
    return this.track(holdId, 'settle did not land; retrying (the hold is renewed meanwhile)', async (n) => {
      if (n > 1) await renew().catch(() => undefined);
      return settle();
    });
  }

  /**
   * Runs `release` until it lands (or is refused: the hold ended otherwise, and that error is
   * thrown). Nothing is renewed meanwhile: a hold being released has nothing more to charge. A
   * release must land even so: a carved hold's lease is renewed while the hold is open, so a
   * release given up would keep the rest of that lease from the account for good.
   */
  release<T>(holdId: string, release: () => Promise<T>): Promise<T> {
    return this.track(holdId, 'release did not land; retrying', () => release());
  }

  private track<T>(holdId: string, retrying: string, attempt: (n: number) => Promise<T>): Promise<T> {
    const { firstDelayMs, maxDelayMs } = this.retry;
    const attempts = retry(attempt, {
      delayMs: exponentialBackoff(firstDelayMs, maxDelayMs),
      retryable,
      onRetry: (error, { attempt: n, delayMs }) => this.logger.warn({ err: error, holdId, attempt: n, retryInMs: delayMs }, retrying),
    });
    this.pending.add(attempts);
    const forget = () => void this.pending.delete(attempts);
    attempts.then(forget, forget);
    return attempts;
  }

  /** Resolves once nothing is pending, or after timeoutMs (what is left is logged: its hold expires by itself). */
  async idle(timeoutMs: number): Promise<void> {
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const settled = Promise.allSettled([...this.pending]).then(() => 'done' as const);
    const outcome = await Promise.race([settled, timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout' && this.pending.size > 0) {
      this.logger.error({ pending: this.pending.size }, 'shutting down with settlements still pending: their holds expire and charge the progress recorded');
    }
  }
}
