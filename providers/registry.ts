// The plain provider registry: a validated config entry in, an adapter out.
// The catalog file's `providers` map ({ "<name>": { "kind": … } }) is checked with
// providerConfigSchema at start-up; each entry becomes one adapter named by its key.

import { z } from 'zod';
import { OpenAiChatProvider } from './openai/chat';
import type { ChatProvider } from './port';
import { SimulatedChatProvider } from './simulated/chat';

export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

const maxBodyBytes = z.int().positive();

const simulatedEntry = z.strictObject({
  kind: z.literal('simulated'),
  maxBodyBytes: maxBodyBytes.optional(),
});

const openAiEntry = z.strictObject({
  kind: z.literal('openai'),
  /** Origin and prefix including the version, e.g. "https://api.openai.com/v1". */
  baseUrl: z.url({ protocol: /^https?$/ }),
  /** Name of the environment variable that holds the API key (never the key itself). */
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional(),
  maxBodyBytes: maxBodyBytes.optional(),
  /** Most sockets kept open to the upstream. */
  connections: z.int().positive().optional(),
});

export const providerEntrySchema = z.discriminatedUnion('kind', [simulatedEntry, openAiEntry]);

/** The `providers` map of a catalog file: provider name → config entry. */
export const providerConfigSchema = z.record(z.string().min(1), providerEntrySchema);

export type ProviderEntry = z.infer<typeof providerEntrySchema>;
export type ProviderConfig = ProviderEntry & { name: string };
export type ProviderConfigs = z.infer<typeof providerConfigSchema>;

type Env = Record<string, string | undefined>;

export function createProvider(config: ProviderConfig, env: Env = process.env): ChatProvider {
  switch (config.kind) {
    case 'simulated':
      return new SimulatedChatProvider({ name: config.name, maxBodyBytes: config.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES });
    case 'openai':
      return new OpenAiChatProvider({
        name: config.name,
        baseUrl: config.baseUrl,
        apiKey: apiKey(config.name, config.apiKeyEnv, env),
        maxBodyBytes: config.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
        connections: config.connections,
      });
  }
}

/**
 * Every provider of a catalog's `providers` map, by name. The map is validated here too,
 * so an unchecked map (as read from the file) fails at start-up with every issue named.
 */
export function createProviders(configs: Readonly<Record<string, unknown>>, env: Env = process.env): Map<string, ChatProvider> {
  const parsed = providerConfigSchema.safeParse(configs);
  if (!parsed.success) throw new Error(`invalid providers config:\n${z.prettifyError(parsed.error)}`);
  return new Map(Object.entries(parsed.data).map(([name, entry]) => [name, createProvider({ ...entry, name }, env)]));
}

/** A named key variable that is unset is a configuration error, found at start-up, not at the first call. */
function apiKey(name: string, variable: string | undefined, env: Env): string | undefined {
  if (variable === undefined) return undefined;
  const key = env[variable];
  if (!key) throw new Error(`provider "${name}": environment variable ${variable} (apiKeyEnv) is not set`);
  return key;
}
