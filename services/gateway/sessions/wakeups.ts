// Local wake-ups of session readers: when this process appended to a session, its readers here
// read at once instead of at their next poll. Readers on another gateway instance rely on
// polling the actor; this only shortens the wait where the append happened.

import { EventEmitter } from 'node:events';

export class SessionWakeups {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  /** This process appended to the session. */
  wake(sessionId: string): void {
    this.emitter.emit(sessionId);
  }

  /** Resolves at the next wake-up of the session, after `ms`, or when `signal` aborts, whichever comes first. */
  wait(sessionId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off(sessionId, done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.emitter.once(sessionId, done);
      signal.addEventListener('abort', done, { once: true });
      if (signal.aborted) done();
    });
  }
}
