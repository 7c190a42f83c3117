import type { EmbeddingsCall } from '../port';
import { SIM_EMBEDDING_DIMENSIONS, SIM_MAX_EMBEDDING_DIMENSIONS, SimulatedEmbeddingsProvider } from './embeddings';

const provider = new SimulatedEmbeddingsProvider();

function call(overrides: Partial<EmbeddingsCall> = {}): EmbeddingsCall {
  return { upstreamModel: 'sim-embed-1', input: 'hello', encodingFormat: 'float', passthrough: {}, signal: new AbortController().signal, ...overrides };
}

/** A base64 vector's float32 values (little-endian). */
function decoded(vector: number[] | string): number[] {
  const bytes = Buffer.from(vector as string, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

describe('SimulatedEmbeddingsProvider.embed', () => {
  it('when one text is embedded, then one unit vector of the default length comes back, its tokens ceil(bytes / 4)', async () => {
    const result = await provider.embed(call({ input: 'héllo wörld' }));
    expect(result.vectors).toHaveLength(1);
    const vector = result.vectors[0] as number[];
    expect(vector).toHaveLength(SIM_EMBEDDING_DIMENSIONS);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    // 13 UTF-8 bytes (two 2-byte letters).
    expect(result.usage).toEqual({ inputTokens: 4, outputTokens: 0 });
  });

  it('when texts and token arrays are embedded, then each item gets its own vector, the same item always the same', async () => {
    const texts = await provider.embed(call({ input: ['a', 'bb', 'a'] }));
    expect(texts.vectors[0]).toEqual(texts.vectors[2]);
    expect(texts.vectors[0]).not.toEqual(texts.vectors[1]);
    expect(texts.usage.inputTokens).toBe(3);
    const tokens = await provider.embed(call({ input: [[1, 2, 3], [4]] }));
    expect(tokens.vectors).toHaveLength(2);
    expect(tokens.usage.inputTokens).toBe(4);
    const one = await provider.embed(call({ input: [1, 2, 3] }));
    expect([one.vectors, one.usage.inputTokens]).toEqual([[tokens.vectors[0]], 3]);
  });

  it('when base64 is asked, then each vector is its float32 values little-endian, the same numbers as the float answer', async () => {
    const floats = await provider.embed(call({ input: ['x', 'y'], dimensions: 5 }));
    const base64 = await provider.embed(call({ input: ['x', 'y'], dimensions: 5, encodingFormat: 'base64' }));
    expect(base64.vectors.every((v) => typeof v === 'string')).toBe(true);
    expect(base64.vectors.map(decoded)).toEqual(floats.vectors);
  });

  it('when more dimensions than the simulated model has are asked, then it rejects as OpenAI does (400)', async () => {
    await expect(provider.embed(call({ dimensions: SIM_MAX_EMBEDDING_DIMENSIONS + 1 }))).rejects.toMatchObject({ kind: 'rejected', upstreamStatus: 400 });
    expect((await provider.embed(call({ dimensions: SIM_MAX_EMBEDDING_DIMENSIONS }))).vectors[0]).toHaveLength(SIM_MAX_EMBEDDING_DIMENSIONS);
  });

  it.each([
    [{ reject: true }, 'rejected'],
    [{ failBeforeOutput: true }, 'unavailable'],
  ] as const)('when the directive is %j, then it fails %s before any vector', async (directives, kind) => {
    await expect(provider.embed(call({ directives }))).rejects.toMatchObject({ kind });
  });

  it('when it hangs, then the call fails once its signal fires', async () => {
    await expect(provider.embed(call({ directives: { hang: true }, signal: AbortSignal.timeout(20) }))).rejects.toMatchObject({ kind: 'timeout' });
  });
});
