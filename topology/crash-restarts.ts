// Restarts of crashed processes, each after its own backoff (topology/restart-policy.ts). The
// topology decides what a crash is (an exit nobody asked for); this only keeps the timers, so a
// stop of the whole topology or an explicit restart cancels a restart that is still waiting.

import { RestartBackoff, type RestartPolicy } from './restart-policy';

export class CrashRestarts {
  private readonly backoffs = new Map<string, RestartBackoff>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly policy: RestartPolicy,
    /** Starts the named process again (called once its delay has passed, unless cancelled). */
    private readonly relaunch: (name: string) => void,
  ) {}

  /** A process crashed after running `uptimeMs`: schedules its restart; returns the delay (ms). */
  schedule(name: string, uptimeMs: number): number | undefined {
    if (this.closed) return undefined;
    let backoff = this.backoffs.get(name);
    if (!backoff) this.backoffs.set(name, (backoff = new RestartBackoff(this.policy)));
    const delayMs = backoff.nextDelay(uptimeMs);
    this.cancel(name);
    this.timers.set(name, setTimeout(() => {
      this.timers.delete(name);
      if (!this.closed) this.relaunch(name);
    }, delayMs));
    return delayMs;
  }

  /** Drops a waiting restart (the process is being restarted or stopped on purpose). */
  cancel(name: string): void {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
  }

  /** No more restarts: the topology stops. */
  close(): void {
    this.closed = true;
    for (const name of [...this.timers.keys()]) this.cancel(name);
  }
}
