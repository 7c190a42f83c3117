import { rejection } from '../../test/support/errors';
import type { ChatCall, ChatStreamChunk, SimDirectives } from '../port';
import { SimulatedChatProvider } from './chat';

const provider = new SimulatedChatProvider();
const messages = [{ role: 'user', content: 'héllo' }];
// JSON.stringify(messages) is 35 UTF-8 bytes ("é" is two): ceil(35 / 4) = 9.
const INPUT_TOKENS = 9;

function call(directives?: SimDirectives, overrides: Partial<ChatCall> = {}): ChatCall {
  return { upstreamModel: 'sim-model', messages, maxTokens: 100, passthrough: {}, directives, signal: new AbortController().signal, ...overrides };
}

async function collect(chunks: AsyncIterable<ChatStreamChunk>): Promise<ChatStreamChunk[]> {
  const all: ChatStreamChunk[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return all;
}

describe('SimulatedChatProvider.complete', () => {
  it('when no directive is given, then it answers 16 numbered words and stops', async () => {
    const answer = await provider.complete(call());
    expect(answer.content).toBe(Array.from({ length: 16 }, (_, i) => `tok${i}`).join(' '));
    expect(answer.finishReason).toBe('stop');
    expect(answer.usage).toEqual({ inputTokens: INPUT_TOKENS, outputTokens: 16 });
    expect(answer.id).toMatch(/^chatcmpl-sim-/);
    expect(provider.name).toBe('sim');
  });

  it('when tokens exceed max_tokens, then the output is cut to max_tokens with finish "length"', async () => {
    const answer = await provider.complete(call({ outputTokens: 40 }, { maxTokens: 3 }));
    expect(answer.content).toBe('tok0 tok1 tok2');
    expect(answer.finishReason).toBe('length');
    expect(answer.usage.outputTokens).toBe(3);
  });

  it('when tokens equal max_tokens, then the finish reason is "stop"', async () => {
    const answer = await provider.complete(call({ outputTokens: 5 }, { maxTokens: 5 }));
    expect(answer.usage.outputTokens).toBe(5);
    expect(answer.finishReason).toBe('stop');
  });

  it('when reject is set, then it fails as rejected with 400', async () => {
    const error = await rejection(provider.complete(call({ reject: true })));
    expect([error.kind, error.upstreamStatus]).toEqual(['rejected', 400]);
  });

  it('when fail-before-output is set, then it fails as unavailable', async () => {
    const error = await rejection(provider.complete(call({ failBeforeOutput: true })));
    expect(error.kind).toBe('unavailable');
  });

  it('when hang is set and the timeout signal fires, then it fails as timeout', async () => {
    const started = Date.now();
    const error = await rejection(provider.complete(call({ hang: true }, { signal: AbortSignal.timeout(30) })));
    expect(error.kind).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('when hang is set and the caller aborts for another reason, then it fails as protocol', async () => {
    const controller = new AbortController();
    const pending = provider.complete(call({ hang: true }, { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('client went away')), 5);
    const error = await rejection(pending);
    expect(error.kind).toBe('protocol');
    expect(error.message).toContain('client went away');
  });

  it('when fail-after-chunks falls inside the answer, then the call fails as protocol', async () => {
    const error = await rejection(provider.complete(call({ failAfterChunks: 2 })));
    expect(error.kind).toBe('protocol');
  });
});

describe('SimulatedChatProvider.stream', () => {
  it('when streaming, then it yields one chunk per word, a finish chunk and a usage chunk', async () => {
    const chunks = await collect(await provider.stream(call({ outputTokens: 3 })));
    expect(chunks.map((c) => c.outputDelta)).toEqual(['tok0', ' tok1', ' tok2', '', '']);
    const first = chunks[0].chunk as { object: string; model: string; id: string; choices: Array<{ delta: unknown; finish_reason: unknown }> };
    expect(first.object).toBe('chat.completion.chunk');
    expect(first.model).toBe('sim-model');
    expect(first.choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: 'tok0' }, finish_reason: null });
    expect((chunks[1].chunk as typeof first).choices[0].delta).toEqual({ content: ' tok1' });
    expect((chunks[3].chunk as typeof first).choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
    expect(chunks[4].chunk).toMatchObject({ choices: [], usage: { prompt_tokens: INPUT_TOKENS, completion_tokens: 3, total_tokens: INPUT_TOKENS + 3 } });
    expect(chunks[4].usage).toEqual({ inputTokens: INPUT_TOKENS, outputTokens: 3 });
    expect(chunks.slice(0, 4).every((c) => c.usage === undefined)).toBe(true);
    expect(new Set(chunks.map((c) => (c.chunk as { id: string }).id)).size).toBe(1);
  });

  it('when max_tokens caps the stream, then the finish chunk says "length"', async () => {
    const chunks = await collect(await provider.stream(call({ outputTokens: 10 }, { maxTokens: 2 })));
    expect(chunks).toHaveLength(4);
    expect(chunks[2].chunk).toMatchObject({ choices: [{ finish_reason: 'length' }] });
  });

  it('when fail-after-chunks is 2, then two chunks arrive and the iterator fails as protocol', async () => {
    const seen: string[] = [];
    const stream = await provider.stream(call({ failAfterChunks: 2 }));
    const error = await rejection(
      (async () => {
        for await (const chunk of stream) seen.push(chunk.outputDelta);
      })(),
    );
    expect(seen).toEqual(['tok0', ' tok1']);
    expect(error.kind).toBe('protocol');
  });

  it('when stream-delay is set, then chunks are spaced by the delay', async () => {
    const started = Date.now();
    const chunks = await collect(await provider.stream(call({ outputTokens: 2, streamDelayMs: 20 })));
    expect(chunks).toHaveLength(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55); // three gaps of 20 ms
  });

  it('when the signal fires during a slow stream, then the iterator fails as timeout', async () => {
    const stream = await provider.stream(call({ streamDelayMs: 1000 }, { signal: AbortSignal.timeout(30) }));
    const started = Date.now();
    const error = await rejection(collect(stream));
    expect(error.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('when reject is set, then stream() itself rejects before any chunk', async () => {
    const error = await rejection(provider.stream(call({ reject: true })));
    expect(error.kind).toBe('rejected');
  });

  it('when no delay is set, then a 1000-token stream takes well under 100 ms', async () => {
    const started = process.hrtime.bigint();
    const chunks = await collect(await provider.stream(call({ outputTokens: 1000 }, { maxTokens: 1000 })));
    expect(chunks).toHaveLength(1002);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(100);
  });
});
