// The simulated embeddings provider: deterministic unit vectors, no network.
//
// Each input item (a text, or an array of token ids) gets a vector of `dimensions` numbers
// (default 16, at most 3072, as OpenAI's largest model): SHA-256 of `<block>:<item JSON>` read as
// little-endian uint32s mapped to [-1, 1], normalised to length 1, each rounded to float32 so the
// float and base64 answers carry the same numbers. The same item always gets the same vector.
// Prompt tokens: a text counts ceil(UTF-8 bytes / 4), a token array its length; the request counts
// the sum. Never more than the gateway's bound (bytes and array lengths), as a real tokenizer.
// Directives: reject, fail-before-output and hang, as for chat (docs/simulated-provider.md).

import { createHash } from 'node:crypto';
import { embeddingItems, ProviderError, type EmbeddingsCall, type EmbeddingsProvider, type EmbeddingsResult } from '../port';
import { SimulatedAdapter } from './adapter';
import { beforeOutput } from './output';

export const SIM_EMBEDDING_DIMENSIONS = 16;
export const SIM_MAX_EMBEDDING_DIMENSIONS = 3072;

export class SimulatedEmbeddingsProvider extends SimulatedAdapter implements EmbeddingsProvider {
  async embed(call: EmbeddingsCall): Promise<EmbeddingsResult> {
    await beforeOutput(call);
    const dimensions = call.dimensions ?? SIM_EMBEDDING_DIMENSIONS;
    if (dimensions > SIM_MAX_EMBEDDING_DIMENSIONS) {
      const reason = `dimensions: at most ${SIM_MAX_EMBEDDING_DIMENSIONS} for ${call.upstreamModel}`;
      throw new ProviderError('rejected', reason, 400, undefined, { detail: reason });
    }
    const items = embeddingItems(call.input);
    const vectors = items.map((item) => simVector(item, dimensions));
    return {
      vectors: call.encodingFormat === 'base64' ? vectors.map(float32Base64) : vectors,
      usage: { inputTokens: items.reduce((sum, item) => sum + simItemTokens(item), 0), outputTokens: 0 },
    };
  }
}

/** A text: ceil(UTF-8 bytes / 4); token ids: one token each. */
export function simItemTokens(item: string | number[]): number {
  return typeof item === 'string' ? Math.ceil(Buffer.byteLength(item, 'utf8') / 4) : item.length;
}

export function simVector(item: string | number[], dimensions: number): number[] {
  const seed = JSON.stringify(item);
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${seed}`).digest();
    for (let at = 0; at < digest.length && values.length < dimensions; at += 4) values.push((digest.readUInt32LE(at) / 0xffffffff) * 2 - 1);
  }
  const length = Math.sqrt(values.reduce((sum, v) => sum + v * v, 0)) || 1;
  return values.map((v) => Math.fround(v / length));
}

/** OpenAI's base64 encoding of a vector: its float32 values, little-endian, in base64. */
export function float32Base64(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}
