// The OpenAI chat-completions body as the open chat route accepts it. Limits are checked by
// limits.ts with their own codes; this schema only fixes the shape.

import { z } from 'zod';
import { GatewayError } from '../../../lib/errors';

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
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'the request body must be a JSON object');
  }
  const parsed = chatBodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue?.path.join('.') || undefined;
    throw new GatewayError('invalid_request', `${param ?? 'body'}: ${issue?.message ?? 'invalid'}`, { param });
  }
  return parsed.data as ChatBody;
}
