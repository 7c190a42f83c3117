// The plain provider registry: a validated config entry in, a provider out.
// The catalog file's `providers` map ({ "<name>": { "kind": … } }) is checked with
// providerConfigSchema at start-up; each entry becomes one Provider named by its key,
// holding a chat and an images adapter that share the entry's connections.

import { z } from 'zod';
import { OpenAiChatProvider } from './openai/chat';
import { OpenAiClient } from './openai/client';
import { OpenAiImageProvider } from './openai/images';
import type { ChatProvider, ImageProvider } from './port';
import { SimulatedChatProvider } from './simulated/chat';
import { SimulatedImageProvider } from './simulated/images';

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
  /** Extra headers sent on every request (an organisation or project id; never the API key). */
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'a header name'), z.string()).optional()
    .refine((h) => !h || !Object.keys(h).some((k) => k.toLowerCase() === 'authorization'), 'the API key goes in apiKeyEnv, not in headers'),
});

export const providerEntrySchema = z.discriminatedUnion('kind', [simulatedEntry, openAiEntry]);

/** The `providers` map of a catalog file: provider name → config entry. */
export const providerConfigSchema = z.record(z.string().min(1), providerEntrySchema);

export type ProviderEntry = z.infer<typeof providerEntrySchema>;
export type ProviderConfig = ProviderEntry & { name: string };
export type ProviderConfigs = z.infer<typeof providerConfigSchema>;

type Env = Record<string, string | undefined>;

/** One config entry: its adapters by modality, under the entry's name. */
export interface Provider {
  readonly name: string;
  readonly chat: ChatProvider;
  readonly images: ImageProvider;
  /** Frees the entry's kept-alive connections (both adapters'), at shutdown. */
  close(): Promise<void>;
}

export function createProvider(config: ProviderConfig, env: Env = process.env): Provider {
  const { name } = config;
  const limit = config.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  switch (config.kind) {
    case 'simulated': {
      const options = { name, maxBodyBytes: limit };
      return { name, chat: new SimulatedChatProvider(options), images: new SimulatedImageProvider(options), close: async () => undefined };
    }
    case 'openai': {
      const client = new OpenAiClient({
        name,
        baseUrl: config.baseUrl,
        apiKey: apiKey(name, config.apiKeyEnv, env),
        maxBodyBytes: limit,
        connections: config.connections,
        headers: config.headers,
      });
      return { name, chat: new OpenAiChatProvider({ client }), images: new OpenAiImageProvider({ client }), close: () => client.close() };
    }
  }
}

/**
 * Every provider of a catalog's `providers` map, by name. The map is validated here too,
 * so an unchecked map (as read from the file) fails at start-up with every issue named.
 */
export function createProviders(configs: Readonly<Record<string, unknown>>, env: Env = process.env): Map<string, Provider> {
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
