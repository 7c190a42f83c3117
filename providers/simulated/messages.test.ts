import { rejection } from '../../test/support/errors';
import type { MessagesCall, MessagesStreamEvent, SimDirectives } from '../port';
import { SimulatedChatProvider } from './chat';
import { SimulatedMessagesProvider } from './messages';

const provider = new SimulatedMessagesProvider();
const messages = [{ role: 'user', content: 'héllo' }];
// JSON.stringify({ system: 'be brief', messages }) is 69 UTF-8 bytes ("é" is two): ceil(69 / 4) = 18.
const INPUT_TOKENS = 18;
const EVENTS = ['message_start', 'content_block_start', 'ping'];
const CLOSING = ['content_block_stop', 'message_delta', 'message_stop'];

function call(directives?: SimDirectives, overrides: Partial<MessagesCall> = {}): MessagesCall {
  return { upstreamModel: 'sim-claude', body: { system: 'be brief', messages }, maxTokens: 100, directives, signal: new AbortController().signal, ...overrides };
}

async function collect(events: AsyncIterable<MessagesStreamEvent>, seen: MessagesStreamEvent[] = []): Promise<MessagesStreamEvent[]> {
  for await (const event of events) seen.push(event);
  return seen;
}

describe('SimulatedMessagesProvider.create', () => {
  it('when no directive is given, then it answers 16 numbered words in one text block and ends the turn', async () => {
    const result = await provider.create(call());
    const text = Array.from({ length: 16 }, (_, i) => `tok${i}`).join(' ');
    expect(result.message).toEqual({
      id: expect.stringMatching(/^msg_sim_[0-9a-f]{32}$/),
      type: 'message',
      role: 'assistant',
      model: 'sim-claude',
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: INPUT_TOKENS, output_tokens: 16 },
    });
    expect(result.usage).toEqual({ inputTokens: INPUT_TOKENS, outputTokens: 16 });
  });

  it('when the call has no system prompt, then the input counts the messages alone', async () => {
    const result = await provider.create(call(undefined, { body: { messages } }));
    expect(result.usage.inputTokens).toBe(Math.ceil(Buffer.byteLength(JSON.stringify({ messages })) / 4));
  });

  it('when tokens exceed max_tokens, then the output is cut with stop reason max_tokens', async () => {
    const result = await provider.create(call({ outputTokens: 40 }, { maxTokens: 3 }));
    expect([result.message.content, result.message.stop_reason, result.usage.outputTokens]).toEqual([[{ type: 'text', text: 'tok0 tok1 tok2' }], 'max_tokens', 3]);
  });

  it('when the same call goes to the chat provider, then the words are the same', async () => {
    const chat = await new SimulatedChatProvider().complete({ upstreamModel: 'm', messages, maxTokens: 7, passthrough: {}, directives: { outputTokens: 9 }, signal: new AbortController().signal });
    const result = await provider.create(call({ outputTokens: 9 }, { maxTokens: 7 }));
    expect(result.message.content).toEqual([{ type: 'text', text: chat.content }]);
  });

  it.each([
    [{ reject: true }, 'rejected', 400],
    [{ failBeforeOutput: true }, 'unavailable', 503],
  ])('when the directives are %j, then it fails as %s', async (directives, kind, status) => {
    const error = await rejection(provider.create(call(directives)));
    expect([error.kind, error.upstreamStatus]).toEqual([kind, status]);
  });

  it('when hang is set and the timeout signal fires, then it fails as timeout', async () => {
    const error = await rejection(provider.create(call({ hang: true }, { signal: AbortSignal.timeout(30) })));
    expect(error.kind).toBe('timeout');
  });

  it('when fail-after-chunks falls inside the stream it would have sent, then the call fails as protocol', async () => {
    expect((await rejection(provider.create(call({ outputTokens: 2, failAfterChunks: 7 })))).kind).toBe('protocol');
    await expect(provider.create(call({ outputTokens: 2, failAfterChunks: 8 }))).resolves.toBeDefined();
  });
});

describe('SimulatedMessagesProvider.stream', () => {
  it('when streaming, then it sends Anthropic\'s event sequence with one text delta per word', async () => {
    const events = await collect(await provider.stream(call({ outputTokens: 3 })));
    expect(events.map((e) => e.event)).toEqual([...EVENTS, 'content_block_delta', 'content_block_delta', 'content_block_delta', ...CLOSING]);
    expect(events.every((e) => e.data.type === e.event)).toBe(true);
    expect(events.map((e) => e.outputDelta).join('|')).toBe('|||tok0| tok1| tok2|||');
    const start = events[0].data.message as Record<string, unknown>;
    expect(start).toMatchObject({ type: 'message', role: 'assistant', model: 'sim-claude', content: [], stop_reason: null, usage: { input_tokens: INPUT_TOKENS, output_tokens: 1 } });
    expect(events[1].data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(events[3].data).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'tok0' } });
    expect(events[7].data).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } });
    expect(events.map((e) => e.usage)).toEqual([{ inputTokens: INPUT_TOKENS, outputTokens: 1 }, undefined, undefined, undefined, undefined, undefined, undefined, { inputTokens: INPUT_TOKENS, outputTokens: 3 }, undefined]);
  });

  it('when max_tokens caps the stream, then message_delta says max_tokens', async () => {
    const events = await collect(await provider.stream(call({ outputTokens: 10 }, { maxTokens: 2 })));
    expect(events).toHaveLength(8);
    expect(events[6].data).toMatchObject({ delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 2 } });
  });

  it('when no token is wanted, then the text block is empty and the sequence stays whole', async () => {
    const events = await collect(await provider.stream(call({ outputTokens: 0 })));
    expect(events.map((e) => e.event)).toEqual([...EVENTS, ...CLOSING]);
  });

  it('when fail-after-chunks is 4, then four events arrive and the iterator fails as protocol', async () => {
    const seen: MessagesStreamEvent[] = [];
    const error = await rejection(collect(await provider.stream(call({ failAfterChunks: 4 })), seen));
    expect(seen.map((e) => e.event)).toEqual([...EVENTS, 'content_block_delta']);
    expect(error.kind).toBe('protocol');
  });

  it('when stream-delay is set, then events are spaced by the delay', async () => {
    const started = Date.now();
    await collect(await provider.stream(call({ outputTokens: 1, streamDelayMs: 10 })));
    expect(Date.now() - started).toBeGreaterThanOrEqual(55); // seven events: six gaps of 10 ms
  });

  it('when the signal fires during a slow stream, then the iterator fails as timeout', async () => {
    const stream = await provider.stream(call({ streamDelayMs: 1000 }, { signal: AbortSignal.timeout(30) }));
    const error = await rejection(collect(stream));
    expect(error.kind).toBe('timeout');
  });

  it('when reject is set, then stream() itself rejects before any event', async () => {
    expect((await rejection(provider.stream(call({ reject: true })))).kind).toBe('rejected');
  });
});

describe('SimulatedMessagesProvider.countTokens', () => {
  it('when a prompt is counted, then it is the input its answer would bill, and the directives before output apply', async () => {
    const { maxTokens: _maxTokens, ...counted } = call();
    expect(await provider.countTokens(counted)).toBe(INPUT_TOKENS);
    expect((await provider.create(call())).usage.inputTokens).toBe(INPUT_TOKENS);
    const failing = call({ failBeforeOutput: true });
    await expect(provider.countTokens(failing)).rejects.toMatchObject({ kind: 'unavailable' });
  });
});
