// One way to turn a request body into a validated value: it must be a JSON object, and the first
// issue the zod schema finds becomes 400 invalid_request naming its field (never clamped).

import type { z } from 'zod';
import { GatewayError } from '../../lib/errors';
import { unknownKeyRefusal } from '../../lib/zod-refusal';

export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'the request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

export function parseJsonObject<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(requireJsonObject(body));
  if (!parsed.success) throw refusalOf(parsed.error, 'body');
  return parsed.data;
}

/**
 * The first issue zod found, as 400 invalid_request naming its field, or the one unknown field or
 * query parameter (zod names it apart from the path: it is the key, not a place in the value).
 */
export function refusalOf(error: z.ZodError, where: 'body' | 'query'): GatewayError {
  const issue = error.issues[0];
  const unknown = unknownKeyRefusal(issue, where);
  if (unknown) return unknown;
  const param = issue?.path.join('.') || undefined;
  return new GatewayError('invalid_request', `${param ?? where}: ${issue?.message ?? 'invalid'}`, { param });
}
