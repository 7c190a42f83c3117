// The image generation request as the open image route accepts it (OpenAI images wire, one
// image), and the Idempotency-Key rules of docs/images.md: required, canonical UUID, scoped to the
// (account, API key) pair. The task id is derived from that scope, so a retry finds its task.

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { GatewayError } from '../../../lib/errors';
import { isCanonicalUuid } from '../../../lib/uuid';
import { parseJsonObject, requireJsonObject } from '../json-object';
import type { SimDirectives } from '../../../providers/port';

/** A prompt longer than this is refused before anything is held (OpenAI's own largest bound). */
export const MAX_PROMPT_CHARS = 32_000;

export const imageBodySchema = z.looseObject({
  model: z.string().optional(),
  prompt: z.string().min(1, 'must not be empty').max(MAX_PROMPT_CHARS, `must be at most ${MAX_PROMPT_CHARS} characters`),
  response_format: z.enum(['url', 'b64_json']).optional(),
});

export type ImageBody = z.infer<typeof imageBodySchema> & Record<string, unknown>;

/** Fields the gateway owns: never passed through to the provider as given. */
const GATEWAY_FIELDS = new Set(['model', 'prompt', 'n', 'response_format', 'stream']);

export interface ImageRequest {
  prompt: string;
  responseFormat: 'url' | 'b64_json';
  passthrough: Record<string, unknown>;
}

export function parseImageBody(body: unknown): ImageRequest {
  const record = requireJsonObject(body);
  if ('n' in record && record.n !== 1) {
    throw new GatewayError('n_unsupported', 'the image route generates exactly one image per request (n must be 1)', { param: 'n' });
  }
  if ('stream' in record && record.stream !== false) {
    throw new GatewayError('invalid_request', 'image generation is not streamed on this route', { param: 'stream' });
  }
  const parsed = parseJsonObject(imageBodySchema, record);
  const passthrough: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) if (!GATEWAY_FIELDS.has(key)) passthrough[key] = value;
  return { prompt: parsed.prompt, responseFormat: parsed.response_format ?? 'url', passthrough };
}

/**
 * The Idempotency-Key header: a canonical UUID (lowercase 8-4-4-4-12 hex), or the same value as
 * a structured-field string (`"…"`, RFC 8941). Anything else is refused, before anything is held.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) {
    throw new GatewayError('idempotency_key_required', 'the Idempotency-Key header is required: a UUID, reused for every retry of the same request', { param: 'Idempotency-Key' });
  }
  const raw = Array.isArray(header) ? (header.length === 1 ? header[0] : undefined) : header;
  const text = raw?.trim();
  const value = text && text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
  if (value === undefined || !isCanonicalUuid(value)) {
    throw new GatewayError('idempotency_key_invalid', 'Idempotency-Key must be one canonical UUID: lowercase 8-4-4-4-12 hex, optionally as a quoted string', { param: 'Idempotency-Key' });
  }
  return value;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The task of an Idempotency-Key within its scope (account, API key): a UUID (version 8, name-based). */
export function imageTaskId(accountId: string, apiKeyId: string, idempotencyKey: string): string {
  const bytes = sha256(`image-task\u0000${accountId}\u0000${apiKeyId}\u0000${idempotencyKey}`).subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** JSON with object keys sorted at every level: equal payloads have one text whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What "the same payload" means: the model asked for in the path, the body, and the sim directives. */
export function requestFingerprint(modelId: string, body: unknown, directives: SimDirectives | undefined): string {
  return sha256(canonicalJson({ model: modelId, body, directives: directives ?? {} })).toString('hex');
}
