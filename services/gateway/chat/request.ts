// The chat bodies the gateway accepts, one schema per inbound wire. Limits are checked by
// limits.ts with their own codes; these schemas only fix the shape.

import { z } from 'zod';
import { parseJsonObject } from '../json-object';

const openAiMessage = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
});

export const chatBodySchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(openAiMessage).min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
});

export type ChatBody = z.infer<typeof chatBodySchema> & Record<string, unknown>;

const anthropicMessage = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(z.unknown())]),
});

export const messagesBodySchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(anthropicMessage).min(1),
  system: z.union([z.string(), z.array(z.unknown())]).optional(),
  stream: z.boolean().optional(),
});

export type MessagesBody = z.infer<typeof messagesBodySchema> & Record<string, unknown>;

/** Fields the gateway owns on either wire: never passed through to the provider as given. */
export const GATEWAY_FIELDS = new Set(['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'n']);

export function parseChatBody(body: unknown): ChatBody {
  return parseJsonObject(chatBodySchema, body) as ChatBody;
}

export function parseMessagesBody(body: unknown): MessagesBody {
  return parseJsonObject(messagesBodySchema, body) as MessagesBody;
}

/** The body without the gateway's own fields: what goes to the provider unchanged. */
export function passthroughOf(body: Record<string, unknown>): Record<string, unknown> {
  const passthrough: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!GATEWAY_FIELDS.has(key)) passthrough[key] = value;
  return passthrough;
}
