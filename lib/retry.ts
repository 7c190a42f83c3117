// One way to retry an operation that failed: a bounded (or unbounded) number of attempts, a
// delay before each retry, and a test of which errors are worth another attempt. Hand-written:
// no retry library is in the dependency tree (p-retry is not), and this is the whole of it.

import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Most attempts, the first included (default: no limit). */
  attempts?: number;
  /** The wait before retry `n` (1 for the first retry), in ms. */
  delayMs: (n: number) => number;
  /** Whether this error is worth another attempt (default: every error); a false answer rethrows it at once. */
  retryable?: (error: unknown) => boolean;
  /** Told of each failure that will be retried, before the wait (to log it). */
  onRetry?: (error: unknown, retry: { attempt: number; delayMs: number }) => void;
}

/**
 * Runs `attempt` (given its number, from 1) until it resolves, and resolves with its value.
 * Rejects with the error of an attempt that is not retryable, or of the last allowed one.
 */
export async function retry<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const attempts = options.attempts ?? Infinity;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (n >= attempts || (options.retryable && !options.retryable(error))) throw error;
      const delayMs = options.delayMs(n);
      options.onRetry?.(error, { attempt: n, delayMs });
      await sleep(delayMs);
    }
  }
}

/** Delays doubling from `firstMs` up to `maxMs`. */
export function exponentialBackoff(firstMs: number, maxMs: number): (n: number) => number {
  return (n) => Math.min(firstMs * 2 ** Math.min(n - 1, 52), maxMs);
}

/** Delays growing by `stepMs` each retry: stepMs, 2 × stepMs, … */
export function linearBackoff(stepMs: number): (n: number) => number {
  return (n) => stepMs * n;
}
