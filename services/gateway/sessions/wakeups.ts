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

  /** Resolves at the next wake-up of the session (true), after `ms` or when `signal` aborts (false), whichever comes first. */
  wait(sessionId: string, ms: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        this.emitter.off(sessionId, onWake);
        signal.removeEventListener('abort', onAbort);
        resolve(woken);
      };
      const onWake = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(onAbort, ms);
      this.emitter.once(sessionId, onWake);
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) done(false);
    });
  }
}
