// One way to turn a request body into a validated value: it must be a JSON object, and the first
// issue the zod schema finds becomes 400 invalid_request naming its field (never clamped).

import type { z } from 'zod';
import { GatewayError } from '../../lib/errors';

export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'the request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

export function parseJsonObject<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(requireJsonObject(body));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue?.path.join('.') || undefined;
    throw new GatewayError('invalid_request', `${param ?? 'body'}: ${issue?.message ?? 'invalid'}`, { param });
  }
  return parsed.data;
}
