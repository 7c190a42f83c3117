import { startUpstream } from '../test/support/upstream';
import { OpenAiChatProvider } from './openai/chat';
import { OpenAiImageProvider } from './openai/images';
import { createProvider, createProviders, providerConfigSchema } from './registry';
import { SimulatedChatProvider } from './simulated/chat';
import { SimulatedImageProvider } from './simulated/images';

describe('providerConfigSchema', () => {
  it('when the map holds a simulated and an openai entry, then it parses', () => {
    const parsed = providerConfigSchema.parse({
      sim: { kind: 'simulated' },
      up: { kind: 'openai', baseUrl: 'http://127.0.0.1:9100/v1', apiKeyEnv: 'UP_KEY', maxBodyBytes: 1024 },
    });
    expect(parsed.up).toEqual({ kind: 'openai', baseUrl: 'http://127.0.0.1:9100/v1', apiKeyEnv: 'UP_KEY', maxBodyBytes: 1024 });
  });

  it.each([
    [{ x: { kind: 'anthropic' } }, ['x', 'kind']],
    [{ x: { kind: 'openai' } }, ['x', 'baseUrl']],
    [{ x: { kind: 'openai', baseUrl: 'ftp://host/v1' } }, ['x', 'baseUrl']],
    [{ x: { kind: 'simulated', maxBodyBytes: 0 } }, ['x', 'maxBodyBytes']],
    [{ x: { kind: 'simulated', maxBodyBytes: 1.5 } }, ['x', 'maxBodyBytes']],
    [{ x: { kind: 'openai', baseUrl: 'http://h/v1', apiKeyEnv: 'sk-123' } }, ['x', 'apiKeyEnv']],
    [{ x: { kind: 'openai', baseUrl: 'http://h/v1', headers: { Authorization: 'Bearer sk' } } }, ['x', 'headers']],
    [{ x: { kind: 'openai', baseUrl: 'http://h/v1', headers: { 'bad header': 'v' } } }, ['x', 'headers', 'bad header']],
  ])('when the entry is %j, then it is refused at %j', (input, path) => {
    const result = providerConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].path).toEqual(path);
  });

  it('when an openai entry names extra headers, then every call carries them', async () => {
    const upstream = await startUpstream();
    const provider = createProvider({ name: 'up', kind: 'openai', baseUrl: upstream.url, headers: { 'OpenAI-Organization': 'org-1' } });
    try {
      await provider.images.generate({ taskId: 't', upstreamModel: 'm', prompt: 'p', responseFormat: 'url', passthrough: {}, sentAt: Date.now(), signal: AbortSignal.timeout(5000) });
      expect(upstream.lastImageHeaders?.['openai-organization']).toBe('org-1');
    } finally {
      await provider.close();
      await upstream.close();
    }
  });

  it('when an entry has an unknown field, then it is refused', () => {
    expect(providerConfigSchema.safeParse({ x: { kind: 'simulated', latency: 5 } }).success).toBe(false);
  });
});

describe('createProvider', () => {
  it('when no limit is given, then both kinds default to 32 MiB and every adapter takes the name', async () => {
    const sim = createProvider({ kind: 'simulated', name: 'sim' });
    const up = createProvider({ kind: 'openai', name: 'up', baseUrl: 'http://127.0.0.1:1/v1' }, {});
    expect(sim.chat).toBeInstanceOf(SimulatedChatProvider);
    expect(sim.images).toBeInstanceOf(SimulatedImageProvider);
    expect(up.chat).toBeInstanceOf(OpenAiChatProvider);
    expect(up.images).toBeInstanceOf(OpenAiImageProvider);
    const facts = [sim, up].flatMap((p) => [p.name, p.chat.name, p.chat.maxBodyBytes, p.images.name, p.images.maxBodyBytes]);
    expect(facts).toEqual(['sim', 'sim', 33554432, 'sim', 33554432, 'up', 'up', 33554432, 'up', 33554432]);
    await Promise.all([sim.close(), up.close()]);
  });

  it('when an openai entry calls chat and then images, then both calls share one connection', async () => {
    const upstream = await startUpstream();
    const up = createProvider({ kind: 'openai', name: 'up', baseUrl: upstream.url, connections: 1 }, {});
    const signal = new AbortController().signal;
    await up.chat.complete({ upstreamModel: 'm', messages: [{ role: 'user', content: 'hi' }], maxTokens: 1, passthrough: {}, signal });
    const image = { taskId: 't1', upstreamModel: 'm', prompt: 'a cat', responseFormat: 'b64_json' as const, passthrough: {}, sentAt: Date.now(), signal };
    await up.images.generate(image);
    await up.close();
    await upstream.close();
    expect([upstream.requests, upstream.imageRequests, upstream.connections]).toEqual([1, 1, 1]);
  });

  it('when the provider is closed, then neither adapter can call any more', async () => {
    const upstream = await startUpstream();
    const up = createProvider({ kind: 'openai', name: 'up', baseUrl: upstream.url }, {});
    await up.close();
    const signal = new AbortController().signal;
    const image = up.images.generate({ taskId: 't', upstreamModel: 'm', prompt: 'p', responseFormat: 'url', passthrough: {}, sentAt: 0, signal });
    await upstream.close();
    await expect(image).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('when the API key variable is unset, then creation fails naming it', () => {
    expect(() => createProvider({ kind: 'openai', name: 'up', baseUrl: 'http://h/v1', apiKeyEnv: 'UP_KEY' }, {})).toThrow(/UP_KEY/);
  });

  it('when a map is given, then each provider is keyed and named by its entry name', () => {
    const providers = createProviders({ a: { kind: 'simulated' }, b: { kind: 'simulated', maxBodyBytes: 10 } });
    expect([...providers.keys()]).toEqual(['a', 'b']);
    expect([providers.get('b')?.name, providers.get('b')?.chat.maxBodyBytes, providers.get('b')?.images.maxBodyBytes]).toEqual(['b', 10, 10]);
  });

  it('when the map is invalid, then creation fails naming the entry', () => {
    expect(() => createProviders({ up: { kind: 'openai' } })).toThrow(/invalid providers config[\s\S]*up\.baseUrl/);
  });
});
