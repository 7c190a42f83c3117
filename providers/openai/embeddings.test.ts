import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startUpstream, type Upstream } from '../../test/support/upstream';
import type { EmbeddingsCall } from '../port';
import { simVector } from '../simulated/embeddings';
import { OpenAiEmbeddingsProvider } from './embeddings';

let upstream: Upstream;
/** One adapter per upstream behaviour (a header of its entry), closed at the end. */
const adapters = new Map<string, OpenAiEmbeddingsProvider>();

beforeAll(async () => {
  upstream = await startUpstream();
});

afterAll(async () => {
  await Promise.all([...adapters.values()].map((a) => a.close()));
  await upstream.close();
});

function adapter(behaviour = ''): OpenAiEmbeddingsProvider {
  let made = adapters.get(behaviour);
  if (!made) {
    made = new OpenAiEmbeddingsProvider({ name: 'local', baseUrl: upstream.url, apiKey: 'sk-test', maxBodyBytes: 1024 * 1024, headers: { 'x-upstream-behaviour': behaviour } });
    adapters.set(behaviour, made);
  }
  return made;
}

function call(overrides: Partial<EmbeddingsCall> = {}): EmbeddingsCall {
  return { upstreamModel: 'up-embed', input: ['hello', 'world'], encodingFormat: 'float', passthrough: { user: 'u-1' }, signal: new AbortController().signal, ...overrides };
}

/** A one-off server answering every request with `json`. */
async function answering(json: unknown): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(json));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

describe('OpenAiEmbeddingsProvider.embed', () => {
  it('when floats are asked, then the vectors come back in input order and usage.prompt_tokens is the count', async () => {
    const result = await adapter().embed(call({ dimensions: 4 }));
    expect(upstream.lastEmbeddingsBody).toEqual({ user: 'u-1', model: 'up-embed', input: ['hello', 'world'], encoding_format: 'float', dimensions: 4 });
    expect(result).toEqual({ vectors: [simVector('hello', 4), simVector('world', 4)], usage: { inputTokens: 4, outputTokens: 0 } });
  });

  it('when base64 is asked, then the upstream\'s strings are relayed as they came', async () => {
    const result = await adapter().embed(call({ input: [[1, 2], [3]], encodingFormat: 'base64' }));
    expect(upstream.lastEmbeddingsBody).toMatchObject({ input: [[1, 2], [3]], encoding_format: 'base64' });
    expect(result.vectors.every((v) => typeof v === 'string' && Buffer.from(v, 'base64').length === 8 * 4)).toBe(true);
    expect(result.usage.inputTokens).toBe(3);
  });

  it('when the upstream answers the other encoding, then it is a protocol error', async () => {
    await expect(adapter('wrong-format').embed(call())).rejects.toMatchObject({ kind: 'protocol' });
  });

  it.each([
    ['status=400', 'rejected'],
    ['status=429', 'rate_limited'],
    ['status=503', 'unavailable'],
    ['break-after=10', 'protocol'],
  ])('when the upstream behaves %s, then the call fails %s', async (behaviour, kind) => {
    await expect(adapter(behaviour).embed(call())).rejects.toMatchObject({ kind });
  });

  it('when the upstream hangs past the signal, then the call fails as a timeout', async () => {
    await expect(adapter('hang').embed(call({ signal: AbortSignal.timeout(50) }))).rejects.toMatchObject({ kind: 'timeout' });
  });

  it.each([
    ['no usage', { data: [{ index: 0, embedding: [0.1] }] }],
    ['a negative prompt count', { data: [{ index: 0, embedding: [0.1] }], usage: { prompt_tokens: -1 } }],
    ['two vectors for one input', { data: [{ index: 0, embedding: [0.1] }, { index: 1, embedding: [0.2] }], usage: { prompt_tokens: 1 } }],
    ['a vector that is not numbers', { data: [{ index: 0, embedding: ['0.1'] }], usage: { prompt_tokens: 1 } }],
    ['an index out of range', { data: [{ index: 3, embedding: [0.1] }], usage: { prompt_tokens: 1 } }],
    ['a length other than asked', { data: [{ index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 1 } }],
  ])('when the answer has %s, then it is a protocol error', async (_what, json) => {
    const { url, server } = await answering(json);
    try {
      const p = new OpenAiEmbeddingsProvider({ name: 'odd', baseUrl: url, maxBodyBytes: 1024 });
      await expect(p.embed(call({ input: 'one', dimensions: 1 }))).rejects.toMatchObject({ kind: 'protocol' });
      await p.close();
    } finally {
      server.close();
    }
  });

  it('when the upstream lists the vectors out of order, then they are put back in input order by index', async () => {
    const { url, server } = await answering({ data: [{ index: 1, embedding: [2] }, { index: 0, embedding: [1] }], usage: { prompt_tokens: 2 } });
    try {
      const p = new OpenAiEmbeddingsProvider({ name: 'odd', baseUrl: url, maxBodyBytes: 1024 });
      expect((await p.embed(call())).vectors).toEqual([[1], [2]]);
      await p.close();
    } finally {
      server.close();
    }
  });
});
