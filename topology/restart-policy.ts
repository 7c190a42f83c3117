// When a crashed process of the topology is started again: exponential backoff as Kubernetes
// does for a crashing container (0.5 s, 1 s, 2 s, … up to 30 s), back to the first delay once a
// run has stayed up long enough to count as healthy. A process that keeps crashing keeps being
// retried at the cap: the rest of the topology goes on serving meanwhile.

export interface RestartPolicy {
  /** Delay before the first restart after a healthy run (ms). */
  initialDelayMs: number;
  /** The longest delay between restarts (ms). */
  maxDelayMs: number;
  /** A run that lasted this long resets the delay to initialDelayMs (ms). */
  resetAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 30_000, resetAfterMs: 60_000 };

/** The restart delays of one process: call `nextDelay` at each crash with how long its run lasted. */
export class RestartBackoff {
  private crashesInARow = 0;

  constructor(private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY) {
    if (!(policy.initialDelayMs > 0 && policy.maxDelayMs >= policy.initialDelayMs && policy.resetAfterMs >= 0)) {
      throw new Error(`invalid restart policy ${JSON.stringify(policy)}`);
    }
  }

  /** The delay before restarting a process whose last run lasted `uptimeMs`. */
  nextDelay(uptimeMs: number): number {
    if (uptimeMs >= this.policy.resetAfterMs) this.crashesInARow = 0;
    const exponent = Math.min(this.crashesInARow, 30);
    this.crashesInARow += 1;
    return Math.min(this.policy.initialDelayMs * 2 ** exponent, this.policy.maxDelayMs);
  }
}
