import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startUpstream, type Upstream } from '../../test/support/upstream';
import { OpenAiChatProvider } from './chat';
import { MAX_ANSWER_BYTES, OpenAiClient, readJsonObject, retryAfterMs } from './client';
import { OpenAiImageProvider } from './images';

let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
});

afterAll(() => upstream.close());

const signal = (): AbortSignal => new AbortController().signal;
const chatCall = () => ({ upstreamModel: 'm', messages: [{ role: 'user', content: 'hi' }], maxTokens: 2, passthrough: {}, signal: signal() });
const imageCall = () => ({ taskId: 't', upstreamModel: 'm', prompt: 'p', responseFormat: 'url' as const, passthrough: {}, sentAt: Date.now(), signal: signal() });

describe('OpenAiClient shared by adapters', () => {
  it('when adapters are built on a client, then they take its name and limit', async () => {
    const client = new OpenAiClient({ name: 'shared', baseUrl: upstream.url, maxBodyBytes: 4096 });
    const chat = new OpenAiChatProvider({ client });
    const images = new OpenAiImageProvider({ client });
    expect([chat.name, chat.maxBodyBytes, images.name, images.maxBodyBytes]).toEqual(['shared', 4096, 'shared', 4096]);
    await client.close();
  });

  it('when an adapter on a shared client is closed, then the client and its sibling keep working', async () => {
    const client = new OpenAiClient({ name: 'shared', baseUrl: upstream.url, maxBodyBytes: 4096 });
    const chat = new OpenAiChatProvider({ client });
    await new OpenAiImageProvider({ client }).close();
    await expect(chat.complete(chatCall())).resolves.toMatchObject({ content: 'tok0 tok1' });
    await client.close();
  });

  it('when an adapter built from settings is closed, then its own pool refuses further calls', async () => {
    const images = new OpenAiImageProvider({ name: 'own', baseUrl: upstream.url, maxBodyBytes: 4096 });
    await images.close();
    await expect(images.generate(imageCall())).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('when the client is built, then its pool has no header or body timeout of its own: only the call\'s deadline (its signal) cuts a call', async () => {
    const client = new OpenAiClient({ name: 'patient', baseUrl: upstream.url, maxBodyBytes: 4096 });
    // undici keeps a pool's options under its own symbol; its default would cut a silent upstream at 300 s.
    const pool = (client as unknown as { pool: object }).pool as Record<symbol, unknown>;
    const options = Object.getOwnPropertySymbols(pool).map((symbol) => pool[symbol]).find((value): value is Record<string, unknown> => typeof value === 'object' && value !== null && 'headersTimeout' in value);
    expect(options).toMatchObject({ headersTimeout: 0, bodyTimeout: 0 });
    await client.close();
  });

  it('when the client is closed again, during and after the first close, then every close resolves', async () => {
    const client = new OpenAiClient({ name: 'twice', baseUrl: upstream.url, maxBodyBytes: 4096 });
    await expect(Promise.all([client.close(), client.close()])).resolves.toEqual([undefined, undefined]);
    await expect(client.close()).resolves.toBeUndefined();
  });
});

describe('how long an answer asks to be left alone (Retry-After)', () => {
  const now = Date.parse('2026-11-26T07:00:00Z');
  it('when retry-after-ms is given, then it wins; else retry-after in seconds, or as an HTTP date', () => {
    expect(retryAfterMs({ 'retry-after-ms': '1500', 'retry-after': '9' }, now)).toBe(1500);
    expect(retryAfterMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': '0.25' }, now)).toBe(250);
    expect(retryAfterMs({ 'retry-after': 'Thu, 26 Nov 2026 07:00:30 GMT' }, now)).toBe(30_000);
  });
  it('when it is absent, negative or not a time, then there is none', () => {
    expect(retryAfterMs({}, now)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': '-3' }, now)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after-ms': 'x', 'retry-after': '1' }, now)).toBe(1000);
  });
});

describe('how much of a JSON answer is read', () => {
  /** An upstream answering 200 with `start`, then (`endless`) 64 KiB pieces of spaces, 16 MiB of them unless it is cut off first. */
  async function jsonUpstream(start: string, endless: boolean) {
    let closed = 0;
    const piece = Buffer.alloc(64 * 1024, ' ');
    const server = createServer((req, res) => {
      req.resume();
      res.on('close', () => (closed += 1));
      res.writeHead(200, { 'content-type': 'application/json' });
      if (!endless) return void res.end(start);
      res.write(start);
      let left = 256;
      const more = (): void => {
        if (res.destroyed) return;
        if (left === 0) return void res.end();
        left -= 1;
        if (res.write(piece)) setImmediate(more);
        else res.once('drain', more);
      };
      more();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new OpenAiClient({ name: 'json', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxBodyBytes: 4096 });
    const answer = () => client.post('/chat/completions', {}, signal(), 'json');
    const close = async () => {
      await client.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
    return { answer, closed: () => closed, close };
  }

  it('when an upstream sends a body far over the limit, then the read stops at the limit with a protocol error and the connection is closed', async () => {
    const upstream = await jsonUpstream('{"choices":[', true);
    try {
      const { body } = await upstream.answer();
      await expect(readJsonObject(body, signal(), 1024 * 1024)).rejects.toMatchObject({ kind: 'protocol', message: expect.stringContaining('1048576-byte limit') });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(upstream.closed()).toBe(1);
    } finally {
      await upstream.close();
    }
  });

  it('when an answer is within the limit (a byte order mark before it), then it is read whole', async () => {
    const upstream = await jsonUpstream('\ufeff{"id":"x","choices":[]}', false);
    try {
      const { body } = await upstream.answer();
      await expect(readJsonObject(body, signal(), 1024)).resolves.toEqual({ id: 'x', choices: [] });
    } finally {
      await upstream.close();
    }
  });

  it('when no limit is given, then it is the documented 256 MiB', () => {
    expect(MAX_ANSWER_BYTES).toBe(256 * 1024 * 1024);
  });
});
