// The plain provider registry: a validated config entry in, a provider out.
// The catalog file's `providers` map ({ "<name>": { "kind": … } }) is checked with
// providerConfigSchema at start-up; each entry becomes one Provider named by its key,
// holding the adapters of the wires its kind serves (docs/providers.md), which share the
// entry's connections: simulated serves all four wires, openai the OpenAI chat, images and
// embeddings wires, anthropic the Anthropic Messages wire.

import { z } from 'zod';
import type { WireFormat } from '../catalog/schema';
import { AnthropicMessagesProvider } from './anthropic/messages';
import { OpenAiChatProvider } from './openai/chat';
import { OpenAiClient } from './openai/client';
import { OpenAiEmbeddingsProvider } from './openai/embeddings';
import { OpenAiImageProvider } from './openai/images';
import type { ChatProvider, EmbeddingsProvider, ImageProvider, MessagesProvider } from './port';
import { SimulatedChatProvider } from './simulated/chat';
import { SimulatedEmbeddingsProvider } from './simulated/embeddings';
import { SimulatedImageProvider } from './simulated/images';
import { SimulatedMessagesProvider } from './simulated/messages';
import { HARD_BODY_LIMIT } from '../lib/config';

/** A provider's request-size limit when its catalog entry names none: the gateway's hard limit. */
export const DEFAULT_MAX_BODY_BYTES = HARD_BODY_LIMIT;

const maxBodyBytes = z.int().positive();

const baseUrl = z.url({ protocol: /^https?$/ });

/** Name of the environment variable that holds the API key (never the key itself). */
const apiKeyEnv = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional();

/** Most sockets kept open to the upstream. */
const connections = z.int().positive().optional();

/** Extra headers sent on every request; `reserved` are set by the adapter from the entry's own fields. */
function extraHeaders(reserved: Record<string, string>) {
  return z
    .record(z.string().regex(/^[A-Za-z0-9-]+$/, 'a header name'), z.string())
    .optional()
    .superRefine((headers, ctx) => {
      for (const name of Object.keys(headers ?? {})) {
        const field = reserved[name.toLowerCase()];
        if (field) ctx.addIssue({ code: 'custom', message: `${name} is set from ${field}, not in headers`, path: [name] });
      }
    });
}

const simulatedEntry = z.strictObject({
  kind: z.literal('simulated'),
  maxBodyBytes: maxBodyBytes.optional(),
});

const openAiEntry = z.strictObject({
  kind: z.literal('openai'),
  /** Origin and prefix including the version, e.g. "https://api.openai.com/v1". */
  baseUrl,
  apiKeyEnv,
  maxBodyBytes: maxBodyBytes.optional(),
  connections,
  /** An organisation or project id; never the API key. */
  headers: extraHeaders({ authorization: 'apiKeyEnv' }),
  /**
   * The chat request field that carries the gateway's frozen output bound: max_tokens (every
   * OpenAI-compatible server reads it), or max_completion_tokens (OpenAI's reasoning models
   * refuse max_tokens; its other chat models take either).
   */
  maxTokensField: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
});

const anthropicEntry = z.strictObject({
  kind: z.literal('anthropic'),
  /** Origin and prefix including the version, e.g. "https://api.anthropic.com/v1". */
  baseUrl,
  /** Sent as x-api-key. */
  apiKeyEnv,
  /** The anthropic-version header (default 2023-06-01). */
  anthropicVersion: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a version date, as in 2023-06-01').optional(),
  maxBodyBytes: maxBodyBytes.optional(),
  connections,
  /** anthropic-beta and the like; never the API key. */
  headers: extraHeaders({ 'x-api-key': 'apiKeyEnv', authorization: 'apiKeyEnv', 'anthropic-version': 'anthropicVersion' }),
});

export const providerEntrySchema = z.discriminatedUnion('kind', [simulatedEntry, openAiEntry, anthropicEntry]);

/** The `providers` map of a catalog file: provider name → config entry. */
export const providerConfigSchema = z.record(z.string().min(1), providerEntrySchema);

export type ProviderEntry = z.infer<typeof providerEntrySchema>;
export type ProviderConfig = ProviderEntry & { name: string };
export type ProviderConfigs = z.infer<typeof providerConfigSchema>;

type Env = Record<string, string | undefined>;

/** One config entry: the adapters of the wires it serves, under the entry's name. */
export interface Provider {
  readonly name: string;
  readonly chat?: ChatProvider;
  readonly messages?: MessagesProvider;
  readonly images?: ImageProvider;
  readonly embeddings?: EmbeddingsProvider;
  /** Frees the entry's kept-alive connections (all its adapters'), at shutdown. */
  close(): Promise<void>;
}

/** Whether the provider has an adapter for the wire (a catalog profile's wire_format). */
export function providerServes(provider: Provider, wire: WireFormat): boolean {
  switch (wire) {
    case 'openai-chat':
      return provider.chat !== undefined;
    case 'anthropic-messages':
      return provider.messages !== undefined;
    case 'openai-images':
      return provider.images !== undefined;
    case 'openai-embeddings':
      return provider.embeddings !== undefined;
  }
}

export function createProvider(config: ProviderConfig, env: Env = process.env): Provider {
  const { name } = config;
  const limit = config.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  switch (config.kind) {
    case 'simulated': {
      const options = { name, maxBodyBytes: limit };
      return {
        name,
        chat: new SimulatedChatProvider(options),
        messages: new SimulatedMessagesProvider(options),
        images: new SimulatedImageProvider(options),
        embeddings: new SimulatedEmbeddingsProvider(options),
        close: async () => undefined,
      };
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
      return {
        name,
        chat: new OpenAiChatProvider({ client, ...(config.maxTokensField ? { maxTokensField: config.maxTokensField } : {}) }),
        images: new OpenAiImageProvider({ client }),
        embeddings: new OpenAiEmbeddingsProvider({ client }),
        close: () => client.close(),
      };
    }
    case 'anthropic': {
      const messages = new AnthropicMessagesProvider({
        name,
        baseUrl: config.baseUrl,
        apiKey: apiKey(name, config.apiKeyEnv, env),
        anthropicVersion: config.anthropicVersion,
        maxBodyBytes: limit,
        connections: config.connections,
        headers: config.headers,
      });
      return { name, messages, close: () => messages.close() };
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
