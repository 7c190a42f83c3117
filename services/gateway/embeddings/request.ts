// The embeddings body the gateway accepts (OpenAI's POST /v1/embeddings): model, input (a text,
// texts, an array of token ids, or arrays of token ids), encoding_format, dimensions, user. Any
// other field is refused: the gateway sends upstream only what it can bound the cost of. Each
// refusal is 400 invalid_request naming the field, before anything is held.

import { z } from 'zod';
import { GatewayError } from '../../../lib/errors';
import { embeddingItems, type EmbeddingsEncoding, type EmbeddingsInput } from '../../../providers/port';
import { parseJsonObject, requireJsonObject } from '../json-object';

/** OpenAI's limit of items in one request. */
export const MAX_EMBEDDING_INPUTS = 2048;

const text = z.string().min(1, 'must not be an empty string');
const tokenIds = z.array(z.int().min(0).max(2 ** 31 - 1)).min(1, 'must not be an empty token array');
const items = <T extends z.ZodType>(item: T) => z.array(item).min(1, 'must not be empty').max(MAX_EMBEDDING_INPUTS, `at most ${MAX_EMBEDDING_INPUTS} inputs per request`);

/** Every accepted form of `input` (the OpenAPI document's schema). */
export const embeddingsInputSchema = z.union([text, items(text), tokenIds, items(tokenIds)]);

/** The one form `input` claims to be, by its first element, so that a refusal names the exact item. */
function inputSchemaOf(input: unknown): z.ZodType {
  if (!Array.isArray(input)) return text;
  if (typeof input[0] === 'number') return tokenIds;
  return items(Array.isArray(input[0]) ? tokenIds : text);
}

export const embeddingsBodySchema = z.strictObject({
  model: z.string().min(1),
  input: z.unknown().refine((input) => input !== undefined, 'required'),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.int().min(1).optional(),
  user: z.string().optional(),
});

export interface EmbeddingsRequest {
  input: EmbeddingsInput;
  encodingFormat: EmbeddingsEncoding;
  dimensions?: number;
  passthrough: Record<string, unknown>;
}

export function parseEmbeddingsBody(body: unknown): EmbeddingsRequest {
  const unknown = Object.keys(requireJsonObject(body)).find((key) => !(key in embeddingsBodySchema.shape));
  if (unknown !== undefined) {
    throw new GatewayError('invalid_request', `${unknown}: not supported on this gateway's embeddings route`, { param: unknown });
  }
  const parsed = parseJsonObject(embeddingsBodySchema, body);
  const input = parseJsonObject(z.object({ input: inputSchemaOf(parsed.input) }), { input: parsed.input }).input as EmbeddingsInput;
  return {
    input,
    encodingFormat: parsed.encoding_format ?? 'float',
    ...(parsed.dimensions !== undefined ? { dimensions: parsed.dimensions } : {}),
    passthrough: parsed.user !== undefined ? { user: parsed.user } : {},
  };
}

/**
 * The most prompt tokens the input can be, without a tokenizer: a text's UTF-8 bytes (byte-level
 * BPE never makes more tokens than bytes) and a token array's length.
 */
export function inputTokenBound(input: EmbeddingsInput): number {
  return embeddingItems(input).reduce((sum, item) => sum + (typeof item === 'string' ? Buffer.byteLength(item, 'utf8') : item.length), 0);
}
