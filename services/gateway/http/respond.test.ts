import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import type { StreamFrame } from './answer';
import { clientGone, respond } from './respond';

let server: Server;
let base: string;
const seen = { sent: 0, readToEnd: false, gone: false, pulled: 0, stalledGone: false };

/** A long-lived stream with much to send at once (a session's whole event log): 1,000 frames of 64 KiB. */
async function* backlog(): AsyncGenerator<StreamFrame> {
  const text = `data: ${'x'.repeat(64 * 1024)}\n\n`;
  for (let i = 0; i < 1000; i++) {
    seen.pulled += text.length;
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
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

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
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    socket.write('GET /backlog HTTP/1.1\r\nhost: x\r\n\r\n');
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
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    const opened = Date.now();
    socket.write('GET /stalled HTTP/1.1\r\nhost: x\r\n\r\n');
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
