// The OpenAI chat-completions body as the open chat route accepts it. Limits are checked by
// limits.ts with their own codes; this schema only fixes the shape.

import { z } from 'zod';
import { parseJsonObject } from '../json-object';

const message = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
});

export const chatBodySchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(message).min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
});

export type ChatBody = z.infer<typeof chatBodySchema> & Record<string, unknown>;

/** Fields the gateway owns: never passed through to the provider as given. */
export const GATEWAY_FIELDS = new Set(['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'n']);

export function parseChatBody(body: unknown): ChatBody {
  return parseJsonObject(chatBodySchema, body) as ChatBody;
}
