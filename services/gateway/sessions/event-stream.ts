// GET /v1/sessions/{id}/events as Server-Sent Events (docs/sessions.md). The stream reads from the
// Session actor, never from this process's memory, so a reader on any gateway instance sees every
// event: it polls the actor every pollMs and reads at once when this process appended (a local
// wake-up). An actor turn never waits for a reader. Each event carries its id; a reader resumes
// strictly after the id it names; events evicted from the bounded log are announced as a gap.

import type { Logger } from 'pino';
import { MAX_READ } from '../../../actors/session/event-log';
import type { ReadResult, SessionApi, SessionEvent, SessionOwner } from '../../../actors/session/SessionInterface';
import { GatewayError } from '../../../lib/errors';
import type { Drain } from '../drain';
import type { StreamAnswer, StreamFrame } from '../http/answer';
import type { SessionWakeups } from './wakeups';

/** A comment line this often while nothing happens: proxies and clients keep the stream open. */
export const KEEPALIVE_MS = 15_000;
/** What an EventSource waits before it reconnects (with Last-Event-ID) after the stream ends. */
const RETRY_MS = 1000;
/**
 * How often an open stream checks its credential again. The stream outlives the request that
 * opened it: a key revoked, expired or past its rotation grace, or an account suspended, ends it
 * within this much after a new request with the key would be refused (the key lookup's own
 * staleness, at most a second), so it cannot go on reading the session's later runs.
 */
export const RECHECK_MS = 250;

export interface EventStreamDeps {
  pollMs: number;
  wakeups: SessionWakeups;
  logger: Logger;
  /** While the gateway drains, streams end so the server can close; readers resume elsewhere. */
  drain?: Drain;
}

export interface EventStreamRequest {
  session: SessionApi;
  sessionId: string;
  owner: SessionOwner;
  after: number;
  /** Throws when the stream's credential would now be refused (see RECHECK_MS). */
  recheckCredential?: () => Promise<void>;
}

/** One event as an SSE frame: `id`, `event` (its kind), and its JSON (id, kind, at and its data). */
export function eventFrame(event: SessionEvent): string {
  return `id: ${event.id}\nevent: ${event.kind}\ndata: ${JSON.stringify({ id: event.id, kind: event.kind, at: event.at, ...event.data })}\n\n`;
}

/** Not an event of the session (no id): ids up to first_retained_id − 1 after `after` were evicted. */
function gapFrame(after: number, read: ReadResult): string {
  return `event: stream.gap\ndata: ${JSON.stringify({ after, first_retained_id: read.firstRetainedId, message: 'events after this id were evicted from the bounded log' })}\n\n`;
}

/**
 * The session's events as a stream answer. The first read happens here, so a refusal (404, 400)
 * is thrown before anything is sent; the frames then follow the log until the client leaves
 * (`signal`) or the gateway drains.
 */
export async function sessionEventStream(deps: EventStreamDeps, request: EventStreamRequest, signal: AbortSignal): Promise<StreamAnswer> {
  const read = (after: number) => request.session.readEvents({ owner: request.owner, after, limit: MAX_READ });
  const first = await read(request.after);
  return { kind: 'stream', headers: {}, longLived: true, frames: follow(deps, request, signal, first, read) };
}

async function* follow(deps: EventStreamDeps, request: EventStreamRequest, signal: AbortSignal, first: ReadResult, read: (after: number) => Promise<ReadResult>): AsyncGenerator<StreamFrame> {
  yield { text: `retry: ${RETRY_MS}\n\n` };
  let result: ReadResult | undefined = first;
  let cursor = request.after;
  let lastWrite = Date.now();
  let lastRead = Date.now();
  while (!signal.aborted && !deps.drain?.draining) {
    if (result) {
      if (result.gap) yield { text: gapFrame(cursor, result) };
      for (const event of result.events) yield { text: eventFrame(event) };
      if (result.events.length > 0) {
        cursor = result.events[result.events.length - 1].id;
        lastWrite = Date.now();
      }
    }
    // Behind by a full read: read on at once; caught up: wait for a wake-up or the next poll,
    // checking the credential at least every RECHECK_MS meanwhile.
    if (!result || result.events.length < MAX_READ) {
      let due = false;
      while (!due && !signal.aborted) {
        if (Date.now() - lastWrite >= KEEPALIVE_MS) {
          yield { text: ': keep-alive\n\n' };
          lastWrite = Date.now();
        }
        const woken = await deps.wakeups.wait(request.sessionId, Math.min(deps.pollMs - (Date.now() - lastRead), RECHECK_MS), signal);
        if (signal.aborted || !(await stillAllowed(deps, request))) return;
        due = woken || Date.now() - lastRead >= deps.pollMs;
      }
      if (signal.aborted) break;
    } else if (!(await stillAllowed(deps, request))) return;
    try {
      lastRead = Date.now();
      result = await read(cursor);
    } catch (error) {
      // A refusal will not change; anything else (an actor host restarting) is waited out.
      if (error instanceof GatewayError && error.status < 500) break;
      deps.logger.debug({ err: error, sessionId: request.sessionId }, 'session read failed; retrying');
      result = undefined;
    }
  }
}

/** False once the stream's credential is refused (the stream ends; a reconnect is answered with the refusal). */
async function stillAllowed(deps: EventStreamDeps, request: EventStreamRequest): Promise<boolean> {
  try {
    await request.recheckCredential?.();
    return true;
  } catch (error) {
    // Refused (401, 403): the stream ends. A lookup that failed (the store unreachable) is not a
    // refusal: the stream goes on, and the next check asks again.
    if (error instanceof GatewayError && error.status < 500) {
      deps.logger.info({ sessionId: request.sessionId, code: error.code }, 'session event stream ended: its credential is refused now');
      return false;
    }
    return true;
  }
}
