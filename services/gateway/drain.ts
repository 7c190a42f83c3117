// Graceful shutdown of the gateway's calls. On SIGTERM the gateway stops taking requests
// (/readyz answers 503 so a load balancer stops routing), lets the calls in flight finish for
// up to the drain timeout, then aborts the provider calls still running: each aborted call
// settles what it produced or releases its hold in its own request, so no hold is left open
// for its expiry reminder to find. Session runs, which outlive their requests, are calls in
// flight too: the process waits for them (idle) before it closes its actors. So are image
// requests waiting on their provider: at the drain timeout they are answered 503 with their
// taskId (the task stays unresolved and recoverable; its hold stays) instead of holding the exit.

import { shuttingDown } from './deadline';

export class Drain {
  private readonly inflight = new Set<AbortController>();
  private stopping = false;
  private readonly waiting: (() => void)[] = [];

  get draining(): boolean {
    return this.stopping;
  }

  /** A provider call in flight: aborted if the drain times out. Returns its untrack. */
  track(controller: AbortController): () => void {
    this.inflight.add(controller);
    return () => {
      this.inflight.delete(controller);
      if (this.inflight.size === 0) for (const resolve of this.waiting.splice(0)) resolve();
    };
  }

  /**
   * Resolves once nothing is in flight. Session runs outlive their requests, so the server's own
   * close does not wait for them: the shutdown waits here before closing the actors.
   */
  idle(): Promise<void> {
    if (this.inflight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  get size(): number {
    return this.inflight.size;
  }

  begin(): void {
    this.stopping = true;
  }

  /**
   * A request's wait that is not itself a provider call (an image request waiting for its task):
   * `cut` resolves when the drain times out; `end` untracks it once the request is answered.
   */
  wait(): { cut: Promise<'cut'>; end: () => void } {
    const controller = new AbortController();
    const end = this.track(controller);
    const cut = new Promise<'cut'>((resolve) => controller.signal.addEventListener('abort', () => resolve('cut'), { once: true }));
    return { cut, end };
  }

  /** Aborts every call still in flight, with a reason its request reports (gateway_shutting_down). */
  abortAll(): void {
    for (const controller of this.inflight) controller.abort(shuttingDown());
  }
}
