import { OpenAiChatProvider } from './openai/chat';
import { createProvider, createProviders, providerConfigSchema } from './registry';
import { SimulatedChatProvider } from './simulated/chat';

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
  ])('when the entry is %j, then it is refused at %j', (input, path) => {
    const result = providerConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].path).toEqual(path);
  });

  it('when an entry has an unknown field, then it is refused', () => {
    expect(providerConfigSchema.safeParse({ x: { kind: 'simulated', latency: 5 } }).success).toBe(false);
  });
});

describe('createProvider', () => {
  it('when no limit is given, then both kinds default to 32 MiB and take the name', async () => {
    const sim = createProvider({ kind: 'simulated', name: 'sim' });
    const up = createProvider({ kind: 'openai', name: 'up', baseUrl: 'http://127.0.0.1:1/v1' }, {});
    expect(sim).toBeInstanceOf(SimulatedChatProvider);
    expect(up).toBeInstanceOf(OpenAiChatProvider);
    expect([sim.name, sim.maxBodyBytes, up.name, up.maxBodyBytes]).toEqual(['sim', 33554432, 'up', 33554432]);
    await up.close?.();
  });

  it('when the API key variable is unset, then creation fails naming it', () => {
    expect(() => createProvider({ kind: 'openai', name: 'up', baseUrl: 'http://h/v1', apiKeyEnv: 'UP_KEY' }, {})).toThrow(/UP_KEY/);
  });

  it('when a map is given, then each provider is keyed and named by its entry name', () => {
    const providers = createProviders({ a: { kind: 'simulated' }, b: { kind: 'simulated', maxBodyBytes: 10 } });
    expect([...providers.keys()]).toEqual(['a', 'b']);
    expect([providers.get('b')?.name, providers.get('b')?.maxBodyBytes]).toEqual(['b', 10]);
  });

  it('when the map is invalid, then creation fails naming the entry', () => {
    expect(() => createProviders({ up: { kind: 'openai' } })).toThrow(/invalid providers config[\s\S]*up\.baseUrl/);
  });
});
