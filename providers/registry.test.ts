import { startUpstream } from '../test/support/upstream';
import { AnthropicMessagesProvider } from './anthropic/messages';
import { OpenAiChatProvider } from './openai/chat';
import { OpenAiImageProvider } from './openai/images';
import type { ChatProvider, ImageProvider, MessagesCall } from './port';
import { createProvider, createProviders, providerConfigSchema, providerServes, type Provider } from './registry';
import { SimulatedChatProvider } from './simulated/chat';
import { SimulatedImageProvider } from './simulated/images';
import { SimulatedMessagesProvider } from './simulated/messages';

function adapter<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('expected the adapter to be there');
  return value;
}

const chatOf = (p: Provider): ChatProvider => adapter(p.chat);
const imagesOf = (p: Provider): ImageProvider => adapter(p.images);

describe('providerConfigSchema', () => {
  it('when the map holds a simulated, an openai and an anthropic entry, then it parses', () => {
    const anthropic = { kind: 'anthropic', baseUrl: 'https://api.anthropic.com/v1', apiKeyEnv: 'ANTHROPIC_API_KEY', anthropicVersion: '2023-06-01', connections: 8, headers: { 'anthropic-beta': 'b1' } };
    const parsed = providerConfigSchema.parse({
      sim: { kind: 'simulated' },
      up: { kind: 'openai', baseUrl: 'http://127.0.0.1:9100/v1', apiKeyEnv: 'UP_KEY', maxBodyBytes: 1024 },
      claude: anthropic,
    });
    expect(parsed.up).toEqual({ kind: 'openai', baseUrl: 'http://127.0.0.1:9100/v1', apiKeyEnv: 'UP_KEY', maxBodyBytes: 1024 });
    expect(parsed.claude).toEqual(anthropic);
  });

  it.each([
    [{ x: { kind: 'azure' } }, ['x', 'kind']],
    [{ x: { kind: 'anthropic' } }, ['x', 'baseUrl']],
    [{ x: { kind: 'anthropic', baseUrl: 'http://h/v1', apiKeyEnv: 'sk-ant-1' } }, ['x', 'apiKeyEnv']],
    [{ x: { kind: 'anthropic', baseUrl: 'http://h/v1', anthropicVersion: 'latest' } }, ['x', 'anthropicVersion']],
    [{ x: { kind: 'anthropic', baseUrl: 'http://h/v1', headers: { 'X-Api-Key': 'sk-ant' } } }, ['x', 'headers', 'X-Api-Key']],
    [{ x: { kind: 'anthropic', baseUrl: 'http://h/v1', headers: { authorization: 'Bearer sk' } } }, ['x', 'headers', 'authorization']],
    [{ x: { kind: 'anthropic', baseUrl: 'http://h/v1', headers: { 'anthropic-version': '2023-01-01' } } }, ['x', 'headers', 'anthropic-version']],
    [{ x: { kind: 'anthropic', baseUrl: 'http://h/v1', connections: 0 } }, ['x', 'connections']],
    [{ x: { kind: 'anthropic', baseUrl: 'http://h/v1', organization: 'o' } }, ['x']],
    [{ x: { kind: 'openai' } }, ['x', 'baseUrl']],
    [{ x: { kind: 'openai', baseUrl: 'ftp://host/v1' } }, ['x', 'baseUrl']],
    [{ x: { kind: 'simulated', maxBodyBytes: 0 } }, ['x', 'maxBodyBytes']],
    [{ x: { kind: 'simulated', maxBodyBytes: 1.5 } }, ['x', 'maxBodyBytes']],
    [{ x: { kind: 'openai', baseUrl: 'http://h/v1', apiKeyEnv: 'sk-123' } }, ['x', 'apiKeyEnv']],
    [{ x: { kind: 'openai', baseUrl: 'http://h/v1', headers: { Authorization: 'Bearer sk' } } }, ['x', 'headers', 'Authorization']],
    [{ x: { kind: 'openai', baseUrl: 'http://h/v1', headers: { 'bad header': 'v' } } }, ['x', 'headers', 'bad header']],
    [{ x: { kind: 'openai', baseUrl: 'http://h/v1', maxTokensField: 'max_output_tokens' } }, ['x', 'maxTokensField']],
    [{ x: { kind: 'anthropic', baseUrl: 'http://h/v1', maxTokensField: 'max_tokens' } }, ['x']],
  ])('when the entry is %j, then it is refused at %j', (input, path) => {
    const result = providerConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].path).toEqual(path);
  });

  it('when an openai entry names max_completion_tokens as its output bound, then its chat calls send the bound in that field', async () => {
    const upstream = await startUpstream();
    try {
      const provider = createProvider({ ...providerConfigSchema.parse({ up: { kind: 'openai', baseUrl: upstream.url, maxTokensField: 'max_completion_tokens' } }).up, name: 'up' });
      try {
        await chatOf(provider).complete({ upstreamModel: 'm', messages: [{ role: 'user', content: 'hi' }], maxTokens: 4, passthrough: {}, signal: AbortSignal.timeout(5000) });
        expect(upstream.lastBody).toMatchObject({ max_completion_tokens: 4 });
        expect(upstream.lastBody).not.toHaveProperty('max_tokens');
      } finally {
        await provider.close();
      }
    } finally {
      await upstream.close();
    }
  });

  it('when an openai entry names extra headers, then every call carries them', async () => {
    const upstream = await startUpstream();
    const provider = createProvider({ name: 'up', kind: 'openai', baseUrl: upstream.url, headers: { 'OpenAI-Organization': 'org-1' } });
    try {
      await imagesOf(provider).generate({ taskId: 't', upstreamModel: 'm', prompt: 'p', responseFormat: 'url', passthrough: {}, sentAt: Date.now(), signal: AbortSignal.timeout(5000) });
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
    const facts = [sim, up].flatMap((p) => [p.name, chatOf(p).name, chatOf(p).maxBodyBytes, imagesOf(p).name, imagesOf(p).maxBodyBytes]);
    expect(facts).toEqual(['sim', 'sim', 33554432, 'sim', 33554432, 'up', 'up', 33554432, 'up', 33554432]);
    await Promise.all([sim.close(), up.close()]);
  });

  it('when an openai entry calls chat, images and embeddings, then the calls share one connection', async () => {
    const upstream = await startUpstream();
    const up = createProvider({ kind: 'openai', name: 'up', baseUrl: upstream.url, connections: 1 }, {});
    const signal = new AbortController().signal;
    await chatOf(up).complete({ upstreamModel: 'm', messages: [{ role: 'user', content: 'hi' }], maxTokens: 1, passthrough: {}, signal });
    const image = { taskId: 't1', upstreamModel: 'm', prompt: 'a cat', responseFormat: 'b64_json' as const, passthrough: {}, sentAt: Date.now(), signal };
    await imagesOf(up).generate(image);
    await adapter(up.embeddings).embed({ upstreamModel: 'm', input: 'a cat', encodingFormat: 'float', passthrough: {}, signal });
    await up.close();
    await upstream.close();
    expect([upstream.requests, upstream.imageRequests, upstream.embeddingsRequests, upstream.connections]).toEqual([1, 1, 1, 1]);
  });

  it('when the provider is closed, then neither adapter can call any more', async () => {
    const upstream = await startUpstream();
    const up = createProvider({ kind: 'openai', name: 'up', baseUrl: upstream.url }, {});
    await up.close();
    const signal = new AbortController().signal;
    const image = imagesOf(up).generate({ taskId: 't', upstreamModel: 'm', prompt: 'p', responseFormat: 'url', passthrough: {}, sentAt: 0, signal });
    await upstream.close();
    await expect(image).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('when the API key variable is unset, then creation fails naming it', () => {
    expect(() => createProvider({ kind: 'openai', name: 'up', baseUrl: 'http://h/v1', apiKeyEnv: 'UP_KEY' }, {})).toThrow(/UP_KEY/);
  });

  it('when a map is given, then each provider is keyed and named by its entry name', () => {
    const providers = createProviders({ a: { kind: 'simulated' }, b: { kind: 'simulated', maxBodyBytes: 10 } });
    expect([...providers.keys()]).toEqual(['a', 'b']);
    const b = adapter(providers.get('b'));
    expect([b.name, chatOf(b).maxBodyBytes, adapter(b.messages).maxBodyBytes, imagesOf(b).maxBodyBytes]).toEqual(['b', 10, 10, 10]);
  });

  it('when the map is invalid, then creation fails naming the entry', () => {
    expect(() => createProviders({ up: { kind: 'openai' } })).toThrow(/invalid providers config[\s\S]*up\.baseUrl/);
  });
});

const messagesCall = (): MessagesCall => ({ upstreamModel: 'claude-x', body: { messages: [{ role: 'user', content: 'hi' }] }, maxTokens: 2, signal: AbortSignal.timeout(5000) });

describe('anthropic entries', () => {
  it('when an anthropic entry is created, then it has a Messages adapter only, named and limited by the entry', async () => {
    const claude = createProvider({ kind: 'anthropic', name: 'claude', baseUrl: 'http://127.0.0.1:1/v1', maxBodyBytes: 2048 }, {});
    expect(claude.messages).toBeInstanceOf(AnthropicMessagesProvider);
    expect([claude.chat, claude.images]).toEqual([undefined, undefined]);
    expect([adapter(claude.messages).name, adapter(claude.messages).maxBodyBytes]).toEqual(['claude', 2048]);
    await claude.close();
  });

  it('when the API key variable is unset or empty, then creation fails naming it', () => {
    const entry = { kind: 'anthropic' as const, name: 'claude', baseUrl: 'http://h/v1', apiKeyEnv: 'CLAUDE_KEY' };
    expect(() => createProvider(entry, {})).toThrow(/provider "claude": environment variable CLAUDE_KEY/);
    expect(() => createProvider(entry, { CLAUDE_KEY: '' })).toThrow(/CLAUDE_KEY/);
  });

  it('when an anthropic entry calls upstream, then the key, version and extra headers travel with it', async () => {
    const upstream = await startUpstream();
    const claude = createProvider({ kind: 'anthropic', name: 'claude', baseUrl: upstream.url, apiKeyEnv: 'CLAUDE_KEY', anthropicVersion: '2024-10-22', headers: { 'anthropic-beta': 'b1' } }, { CLAUDE_KEY: 'sk-ant-1' });
    try {
      await adapter(claude.messages).create(messagesCall());
      const headers = upstream.lastMessagesHeaders;
      expect([headers?.['x-api-key'], headers?.['anthropic-version'], headers?.['anthropic-beta'], headers?.authorization]).toEqual(['sk-ant-1', '2024-10-22', 'b1', undefined]);
    } finally {
      await claude.close();
      await upstream.close();
    }
  });

  it('when no version is configured, then anthropic-version is 2023-06-01', async () => {
    const upstream = await startUpstream();
    const claude = createProvider({ kind: 'anthropic', name: 'claude', baseUrl: upstream.url }, {});
    try {
      await adapter(claude.messages).create(messagesCall());
      expect(upstream.lastMessagesHeaders?.['anthropic-version']).toBe('2023-06-01');
      expect(upstream.lastMessagesHeaders?.['x-api-key']).toBeUndefined();
    } finally {
      await claude.close();
      await upstream.close();
    }
  });

  it('when the provider is closed, then its Messages adapter can call no more', async () => {
    const upstream = await startUpstream();
    const claude = createProvider({ kind: 'anthropic', name: 'claude', baseUrl: upstream.url }, {});
    await claude.close();
    const pending = adapter(claude.messages).create(messagesCall());
    await upstream.close();
    await expect(pending).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('when a simulated entry is created, then it serves Messages too', () => {
    expect(createProvider({ kind: 'simulated', name: 'sim' }).messages).toBeInstanceOf(SimulatedMessagesProvider);
  });
});

describe('providerServes', () => {
  it.each([
    ['simulated', { kind: 'simulated' as const }, [true, true, true, true]],
    ['openai', { kind: 'openai' as const, baseUrl: 'http://127.0.0.1:1/v1' }, [true, false, true, true]],
    ['anthropic', { kind: 'anthropic' as const, baseUrl: 'http://127.0.0.1:1/v1' }, [false, true, false, false]],
  ])('when the entry is %s, then it serves the wires it has adapters for', async (name, entry, serves) => {
    const provider = createProvider({ ...entry, name }, {});
    const wires = ['openai-chat', 'anthropic-messages', 'openai-images', 'openai-embeddings'] as const;
    expect(wires.map((wire) => providerServes(provider, wire))).toEqual(serves);
    await provider.close();
  });
});
