// The HTTP side of a use case's answer (./answer.ts): headers and a JSON body, or an event stream
// written frame by frame; and the signal that tells a use case its client has gone.

import type { Response } from 'express';
import type { UseCaseAnswer } from './answer';
import { clientDisconnected } from '../deadline';

const EVENT_STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' };

/** Aborted when the client closes the connection before the answer was written whole. */
export function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(clientDisconnected());
  });
  return controller.signal;
}

/**
 * Node corks a response's socket on a write and uncorks it on the next tick, which waits until
 * the microtask queue is empty: frames that arrived together (and the settle after the last) are
 * written in one such run, so the first frame would leave only with the last. It leaves at once
 * (time to first token); the later frames of one read still leave together, in one write.
 */
function sendNow(res: Response): void {
  const socket = res.socket;
  if (socket && socket.writableCorked > 0) socket.uncork();
}

/** Writes the answer. A stream is read to its end even once the client has gone (its end settles the money). */
export async function respond(res: Response, answer: UseCaseAnswer): Promise<void> {
  if (answer.kind === 'json') {
    // What Express's res.json sends (no ETag: the app has them off), written directly: its
    // send() parses and formats the content type again on every answer, on the chat's path.
    const text = JSON.stringify(answer.body) ?? '';
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    res.statusCode = answer.status ?? 200;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('content-length', Buffer.byteLength(text));
    res.end(text);
    return;
  }
  if (answer.longLived) res.req.socket.setTimeout(0);
  if (!res.destroyed) {
    res.writeHead(200, { ...EVENT_STREAM_HEADERS, ...answer.headers });
    res.flushHeaders();
  }
  // HEAD (which Express routes to GET) has its headers; a long-lived stream without a body would never end.
  if (res.req.method === 'HEAD' && answer.longLived) return void res.end();
  let first = true;
  for await (const frame of answer.frames) {
    if (res.destroyed) continue;
    const sent = frame.sent;
    const flowing = sent ? res.write(frame.text, (error) => error || sent()) : res.write(frame.text);
    if (first) {
      first = false;
      sendNow(res);
    }
    // A long-lived stream (a session's events: its whole log, then whatever comes) takes its next
    // frame only once the client has taken the last: one that does not read would otherwise have
    // every frame kept in the gateway's memory for as long as it stays connected. A model call's
    // stream reads on while its client is behind by less than STREAM_BUFFER_BYTES, then waits for
    // it too: an upstream that ignores max_tokens (or sends on and on) had every frame of it kept
    // for a client that did not read, until the call's deadline (800 MB in 8 seconds).
    // A client that takes nothing for answer.stallMs is cut off: while it does not read, the
    // stream neither reads on nor checks its credential again, and it would hold its connection
    // (and its place in the account's streams) for as long as the client likes. A model call's
    // stream is then read on to its end without it (the client is gone: the call is cut, and its
    // end settles the money).
    if (!flowing && (answer.longLived || res.writableLength > STREAM_BUFFER_BYTES)) await drained(res, answer.stallMs ?? STALLED_STREAM_MS, answer.callSignal);
  }
  if (!res.destroyed) res.end();
}

/** How far a model call's stream may run ahead of its client (bytes written, not yet taken) before it waits for it. */
export const STREAM_BUFFER_BYTES = 1024 * 1024;

/** How long a long-lived stream waits for its client to take what was written before ending it. */
export const STALLED_STREAM_MS = 30_000;

/**
 * Resolves once what was written has gone to the socket, the connection is gone or `stop` is
 * aborted; destroys the connection after `stallMs` without any of them.
 */
function drained(res: Response, stallMs: number, stop?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed || stop?.aborted) return resolve();
    const done = () => {
      clearTimeout(stall);
      res.off('drain', done);
      res.off('close', done);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    const stall = setTimeout(() => {
      res.destroy();
      done();
    }, stallMs);
    res.once('drain', done);
    res.once('close', done);
    stop?.addEventListener('abort', done, { once: true });
  });
}
