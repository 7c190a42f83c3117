// OpenAI-compatible embeddings adapter: POST {baseUrl}/embeddings through the HTTP client of its
// provider entry (./client.ts, shared with the chat and images adapters: same pool, same failure
// mapping). The input goes as the request gave it, with the encoding asked for, so a base64
// answer is relayed without being decoded.
//
// The answer is read strictly: one vector per input item, each in the encoding asked for (an
// array of finite numbers, or base64 of whole float32 values), all of one length (the length
// asked for, when the request named one), and `usage.prompt_tokens`, a non-negative integer,
// which is what the call is billed; anything else is a 'protocol' error.

import { embeddingItems, ProviderError, type EmbeddingsCall, type EmbeddingsProvider, type EmbeddingsResult } from '../port';
import { OpenAiAdapter, readJsonObject, type OpenAiAdapterOptions } from './client';
import { asArray, asObject, badShape, usageCount, type Json } from './shape';

/** Own connection settings, or the client shared with the entry's other adapters. */
export type OpenAiEmbeddingsProviderOptions = OpenAiAdapterOptions;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class OpenAiEmbeddingsProvider extends OpenAiAdapter implements EmbeddingsProvider {
  async embed(call: EmbeddingsCall): Promise<EmbeddingsResult> {
    const payload = {
      ...call.passthrough,
      model: call.upstreamModel,
      input: call.input,
      encoding_format: call.encodingFormat,
      ...(call.dimensions !== undefined ? { dimensions: call.dimensions } : {}),
    };
    const { body } = await this.client.post('/embeddings', payload, call.signal, 'json');
    return toResult(await readJsonObject(body, call.signal), call);
  }
}

function toResult(json: Json, call: EmbeddingsCall): EmbeddingsResult {
  const expected = embeddingItems(call.input).length;
  const data = asArray(json.data, 'data');
  if (data.length !== expected) throw new ProviderError('protocol', `upstream answered ${data.length} embeddings for ${expected} inputs`);
  const vectors: (number[] | string)[] = new Array(expected);
  let length: number | undefined = call.dimensions;
  data.forEach((entry, at) => {
    const item = asObject(entry, `data[${at}]`);
    const index = item.index ?? at;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected || vectors[index] !== undefined) badShape(`data[${at}].index`);
    const { vector, dimensions } = vectorOf(item.embedding, call.encodingFormat, `data[${at}].embedding`);
    if (dimensions === 0 || (length !== undefined && dimensions !== length)) badShape(`data[${at}].embedding (length ${dimensions})`);
    length = dimensions;
    vectors[index] = vector;
  });
  const promptTokens = asObject(json.usage, 'usage').prompt_tokens;
  if (typeof promptTokens !== 'number') badShape('usage.prompt_tokens');
  return { vectors, usage: { inputTokens: usageCount(promptTokens, 'usage.prompt_tokens'), outputTokens: 0 } };
}

/** One vector in the encoding asked for, and its number of dimensions. */
function vectorOf(value: unknown, format: EmbeddingsCall['encodingFormat'], what: string): { vector: number[] | string; dimensions: number } {
  if (format === 'float') {
    const numbers = asArray(value, what);
    if (!numbers.every((v) => typeof v === 'number' && Number.isFinite(v))) badShape(what);
    return { vector: numbers as number[], dimensions: numbers.length };
  }
  if (typeof value !== 'string' || value.length % 4 !== 0 || !BASE64.test(value)) badShape(what);
  const bytes = Buffer.byteLength(value, 'base64');
  if (bytes % 4 !== 0) badShape(what);
  return { vector: value, dimensions: bytes / 4 };
}
