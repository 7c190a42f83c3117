import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import express from 'express';
import type { StreamFrame } from './answer';
import { clientGone, respond, STREAM_BUFFER_BYTES } from './respond';

let server: Server;
let base: string;
const seen = { sent: 0, readToEnd: false, gone: false, pulled: 0, stalledGone: false, modelPulled: 0, modelGone: false, callEndedAt: 0, callGone: false };
const aborting = new AbortController();

/** A stream with much to send at once (a session's whole event log; an upstream sending on and on): 1,000 frames of 64 KiB. */
async function* backlog(counter: 'pulled' | 'modelPulled' = 'pulled'): AsyncGenerator<StreamFrame> {
  const text = `data: ${'x'.repeat(64 * 1024)}\n\n`;
  for (let i = 0; i < 1000; i++) {
    seen[counter] += text.length;
    yield { text };
  }
}

/** Frames every 20 ms; the last two come after the client of /leaving has gone. */
async function* frames(count: number): AsyncGenerator<StreamFrame> {
  for (let i = 0; i < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    yield { text: `data: ${i}\n\n`, sent: () => seen.sent++ };
  }
  seen.readToEnd = true;
}

/** A model call's stream: 64 KiB frames until its call is aborted, then its end (the charge, the error frame). */
async function* call(signal: AbortSignal): AsyncGenerator<StreamFrame> {
  const text = `data: ${'x'.repeat(64 * 1024)}\n\n`;
  while (!signal.aborted) yield { text };
  yield { text: 'data: end\n\n' };
  seen.callEndedAt = Date.now();
}

beforeAll(async () => {
  const app = express();
  app.get('/json', (_req, res) => void respond(res, { kind: 'json', status: 201, headers: { 'x-payg-charged': '42' }, body: { ok: true } }));
  app.get('/stream', (_req, res) => void respond(res, { kind: 'stream', headers: { 'x-payg-capabilities': 'signing' }, frames: frames(3) }));
  app.get('/leaving', (_req, res) => {
    clientGone(res).addEventListener('abort', () => (seen.gone = true));
    void respond(res, { kind: 'stream', headers: {}, frames: frames(8) });
  });
  app.get('/backlog', (_req, res) => void respond(res, { kind: 'stream', headers: {}, longLived: true, frames: backlog() }));
  app.get('/stalled', (_req, res) => {
    clientGone(res).addEventListener('abort', () => (seen.stalledGone = true));
    void respond(res, { kind: 'stream', headers: {}, longLived: true, stallMs: 300, frames: backlog() });
  });
  app.get('/model-backlog', (_req, res) => {
    clientGone(res).addEventListener('abort', () => (seen.modelGone = true));
    void respond(res, { kind: 'stream', headers: {}, stallMs: 500, frames: backlog('modelPulled') });
  });
  app.get('/aborted-call', (_req, res) => {
    clientGone(res).addEventListener('abort', () => (seen.callGone = true));
    void respond(res, { kind: 'stream', headers: {}, stallMs: 10_000, callSignal: aborting.signal, frames: call(aborting.signal) });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

/** A client that asks for `path` and reads nothing of the answer until it resumes. */
function pausedClient(path: string): Socket {
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.pause();
  socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`);
  return socket;
}

describe('respond: a use case answer over HTTP', () => {
  it('when the answer is JSON, then its status, headers and body are sent', async () => {
    const res = await fetch(`${base}/json`);
    expect(res.status).toBe(201);
    expect(res.headers.get('x-payg-charged')).toBe('42');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-length')).toBe(String('{"ok":true}'.length));
    expect(await res.json()).toEqual({ ok: true });
  });

  it('when the answer is a stream, then it is an event stream of its frames, each output frame reported as sent', async () => {
    seen.sent = 0;
    const res = await fetch(`${base}/stream`);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-payg-capabilities')).toBe('signing');
    expect(await res.text()).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
    expect(seen.sent).toBe(3);
  });

  it('when the client of a long-lived stream does not read, then its frames are taken only as fast as it reads, not all kept in memory', async () => {
    seen.pulled = 0;
    const socket = pausedClient('/backlog');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // What the sockets' kernel buffers hold, at most: without backpressure all 64 MiB were taken.
    expect(seen.pulled).toBeLessThan(16 * 1024 * 1024);
    // Read by the client, the stream goes on to its end.
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.resume();
    const all = 1000 * (64 * 1024 + 8);
    for (let waited = 0; received < all && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.pulled).toBe(all);
    expect(received).toBeGreaterThan(all);
    socket.destroy();
  });

  it('when the client of a long-lived stream takes nothing for its stall bound, then the server ends the stream and the use case hears it', async () => {
    const opened = Date.now();
    const socket = pausedClient('/stalled');
    for (let waited = 0; !seen.stalledGone && waited < 3000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    if (!seen.stalledGone) socket.destroy();
    expect(seen.stalledGone).toBe(true);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(300);
    // What the client then reads is what was written before the end, not the rest of the stream.
    let received = 0;
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.resume();
    await closed;
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(1000 * (64 * 1024 + 8));
  });

  it('when the client of a model call\'s stream does not read, then the stream runs at most its buffer ahead of it; cut off at its stall bound, the stream is read on to its end', async () => {
    const socket = pausedClient('/model-backlog');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The buffer and what the sockets' kernel buffers hold: without a bound all 64 MiB were taken.
    expect(seen.modelPulled).toBeLessThan(STREAM_BUFFER_BYTES + 8 * 1024 * 1024);
    expect(seen.modelGone).toBe(false);
    for (let waited = 0; !seen.modelGone && waited < 3000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.modelGone).toBe(true);
    const all = 1000 * (64 * 1024 + 8);
    for (let waited = 0; seen.modelPulled < all && waited < 3000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.modelPulled).toBe(all);
    socket.destroy();
  });

  it('when a model call waiting for a client that does not read is aborted (its deadline, the drain), then its end is taken at once, not after the stall bound', async () => {
    const socket = pausedClient('/aborted-call');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen.callEndedAt).toBe(0);
    const abortedAt = Date.now();
    aborting.abort();
    for (let waited = 0; seen.callEndedAt === 0 && waited < 3000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.callEndedAt).toBeGreaterThan(0);
    expect(seen.callEndedAt - abortedAt).toBeLessThan(1000);
    expect(seen.callGone).toBe(false);
    socket.destroy();
  });

  it('when the client leaves mid-stream, then the use case hears it and the frames are still read to their end (the end settles the money)', async () => {
    seen.readToEnd = false;
    const controller = new AbortController();
    const res = await fetch(`${base}/leaving`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(seen.gone).toBe(true);
    expect(seen.readToEnd).toBe(true);
  });
});
