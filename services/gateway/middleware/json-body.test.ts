import type { AddressInfo } from 'node:net';
import express from 'express';
import { errorResponder } from '../../../lib/error-responder';
import { createLogger } from '../../../lib/logger';
import { decodeJsonText, jsonBody, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, refuseCostlyStructure } from './json-body';

describe('refuseCostlyStructure', () => {
  const refused = (text: string) => {
    try {
      refuseCostlyStructure(text);
      return undefined;
    } catch (error) {
      return (error as { code: string; message: string }).message;
    }
  };
  it('when a body is exactly at the depth limit, or has brackets only inside its strings, then it passes', () => {
    expect(refused(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBeUndefined();
    expect(refused(JSON.stringify({ a: '['.repeat(1000), b: 'x\\"[[[', c: [1, { d: '{{{' }] }))).toBeUndefined();
    expect(refused(JSON.stringify({ input: Array.from({ length: 2048 }, () => [1, 2, 3]) }))).toBeUndefined();
  });
  it('when a body nests one level deeper than the limit, then 400 invalid_request before any parse', () => {
    expect(refused(`{"a":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`)).toBe(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  });
  it('when a body holds more objects and arrays than the limit, however shallow, then 400 invalid_request', () => {
    expect(refused(`[${'{},'.repeat(MAX_JSON_CONTAINERS - 1)}{}]`)).toBe(`request body holds more than ${MAX_JSON_CONTAINERS} objects and arrays`);
    expect(refused(`[${'{},'.repeat(MAX_JSON_CONTAINERS - 2)}{}]`)).toBeUndefined();
  });
  it('when a 32 MiB body is a parser bomb (nested or flat), then it is refused in well under a second, nothing parsed', () => {
    for (const bomb of [`${'['.repeat(16_000_000)}${']'.repeat(16_000_000)}`, `[${'{},'.repeat(10_600_000)}{}]`]) {
      const started = performance.now();
      expect(refused(bomb)).toMatch(/^request body (is nested deeper|holds more)/);
      expect(performance.now() - started).toBeLessThan(500);
    }
  });
});

describe('jsonBody', () => {
  it('when a body of the billed routes\' size is a parser bomb (many small objects, or deep arrays), then it is refused 400 at once, never parsed', async () => {
    const app = express();
    app.post('/', jsonBody(32 * 1024 * 1024), (_req, res) => void res.status(204).end());
    app.use(errorResponder({ logger: createLogger('gateway', 'silent') }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const post = async (body: string) => {
      const started = performance.now();
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code, ms: performance.now() - started };
    };
    try {
      // 4 MiB of "{}," parsed into 1.4 million objects (some 90 MB, half a second) before.
      expect(await post(`[${'{},'.repeat(1_400_000)}{}]`)).toMatchObject({ status: 400, code: 'invalid_request' });
      // 16 MiB of nested arrays: 4 s and 450 MB to parse before, only then refused for its depth.
      const deep = await post(`${'['.repeat(8_000_000)}${']'.repeat(8_000_000)}`);
      expect(deep).toMatchObject({ status: 400, code: 'invalid_request' });
      expect(deep.ms).toBeLessThan(2000);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }, 30_000);
});

describe('decodeJsonText', () => {
  it('when the bytes are valid UTF-8, then they are the text, non-ASCII included', () => {
    expect(decodeJsonText(Buffer.from('{"prompt":"café ☕ 🎨"}'))).toBe('{"prompt":"café ☕ 🎨"}');
  });
  it('when the bytes are not valid UTF-8 (a stray byte, an overlong form, an encoded surrogate, a cut sequence), then 400 invalid_utf8, never a repaired text', () => {
    for (const bytes of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const raw = Buffer.concat([Buffer.from('{"prompt":"'), Buffer.from(bytes), Buffer.from('"}')]);
      expect(() => decodeJsonText(raw)).toThrow(expect.objectContaining({ code: 'invalid_utf8', status: 400 }));
    }
  });
});
