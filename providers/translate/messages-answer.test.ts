import { rejection } from '../../test/support/errors';
import { startUpstream, type Upstream } from '../../test/support/upstream';
import { AnthropicMessagesProvider } from '../anthropic/messages';
import type { ChatStreamChunk, MessagesCall, MessagesResult, MessagesStreamEvent } from '../port';
import { SimulatedMessagesProvider } from '../simulated/messages';
import { messagesEventsToChunks, messagesResultToCompletion } from './messages-answer';

const sim = new SimulatedMessagesProvider();

function messagesCall(overrides: Partial<MessagesCall> = {}): MessagesCall {
  return { upstreamModel: 'claude-up', body: { messages: [{ role: 'user', content: 'hi' }] }, maxTokens: 100, signal: new AbortController().signal, ...overrides };
}

function result(message: Record<string, unknown>): MessagesResult {
  return { message: { id: 'msg_01abc', type: 'message', role: 'assistant', content: [], stop_reason: 'end_turn', ...message }, usage: { inputTokens: 5, outputTokens: 2 } };
}

async function collect<T>(items: AsyncIterable<T>, seen: T[] = []): Promise<T[]> {
  for await (const item of items) seen.push(item);
  return seen;
}

async function* from(events: Array<Partial<MessagesStreamEvent> & { event: string }>): AsyncGenerator<MessagesStreamEvent> {
  for (const e of events) yield { data: { type: e.event }, outputDelta: '', ...e };
}

const start = { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_01abc' } } };
const text = (t: string) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } }, outputDelta: t });
const stopWith = (stop_reason: string) => ({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason } }, usage: { inputTokens: 5, outputTokens: 1 } });

describe('messagesResultToCompletion', () => {
  it('when the message holds text blocks, then their text is concatenated and the usage kept', () => {
    const completion = messagesResultToCompletion(result({ content: [{ type: 'text', text: 'Hello' }, { type: 'text', text: ', world' }] }));
    expect(completion).toEqual({ id: 'chatcmpl-01abc', content: 'Hello, world', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 2 }, created: expect.any(Number) });
    expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(5);
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'stop'],
    [null, 'stop'],
  ])('when the stop reason is %s, then the finish reason is %s', (stopReason, finishReason) => {
    expect(messagesResultToCompletion(result({ stop_reason: stopReason })).finishReason).toBe(finishReason);
  });

  it.each([
    [{ type: 'tool_use', id: 't', name: 'f', input: {} }],
    [{ type: 'thinking', thinking: 'hm', signature: 's' }],
  ])('when the message holds a %j block, then it is a protocol error', (block) => {
    let error: unknown;
    try {
      messagesResultToCompletion(result({ content: [{ type: 'text', text: 'x' }, block] }));
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ name: 'ProviderError', kind: 'protocol' });
  });

  it('when the simulated provider answers, then the completion says the same words', async () => {
    const completion = messagesResultToCompletion(await sim.create(messagesCall({ directives: { outputTokens: 3 }, maxTokens: 2 })));
    expect([completion.content, completion.finishReason, completion.usage.outputTokens]).toEqual(['tok0 tok1', 'length', 2]);
    expect(completion.id).toMatch(/^chatcmpl-sim_/);
  });
});

describe('messagesEventsToChunks', () => {
  it('when a whole stream is translated, then it is OpenAI\'s chunk sequence: role, one chunk per text delta, finish, usage', async () => {
    const source = await sim.stream(messagesCall({ directives: { outputTokens: 3 } }));
    const chunks = await collect(messagesEventsToChunks(source, 'claude-up'));
    expect(chunks.map((c) => c.outputDelta)).toEqual(['', 'tok0', ' tok1', ' tok2', '', '']);
    const [first, , , , finish, usage] = chunks.map((c) => c.chunk as Record<string, unknown> & { choices: unknown[] });
    expect(first).toEqual({ id: expect.stringMatching(/^chatcmpl-sim_/), object: 'chat.completion.chunk', created: expect.any(Number), model: 'claude-up', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    expect(chunks[1].chunk.choices).toEqual([{ index: 0, delta: { content: 'tok0' }, finish_reason: null }]);
    expect(finish.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    const input = Math.ceil(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }).length / 4);
    expect(usage).toMatchObject({ choices: [], usage: { prompt_tokens: input, completion_tokens: 3, total_tokens: input + 3 } });
    // The final count from message_delta rides the finish chunk too, for a stream cut before message_stop.
    expect(chunks.map((c) => c.usage)).toEqual([undefined, undefined, undefined, undefined, { inputTokens: input, outputTokens: 3 }, { inputTokens: input, outputTokens: 3 }]);
    // The prompt message_start stated rides on the role chunk apart from `usage` (no usage chunk is relayed for it).
    expect(chunks.map((c) => c.statedPrompt?.inputTokens)).toEqual([input, undefined, undefined, undefined, undefined, undefined]);
    expect(new Set(chunks.map((c) => c.chunk.id)).size).toBe(1);
  });

  it('when max_tokens cut the answer, then the finish reason is length', async () => {
    const chunks = await collect(messagesEventsToChunks(await sim.stream(messagesCall({ maxTokens: 1 })), 'm'));
    expect(chunks[2].chunk.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'length' }]);
  });

  it('when the source ends after the stop reason without message_stop, then the usage chunk still closes the stream', async () => {
    const chunks = await collect(messagesEventsToChunks(from([start, text('a'), stopWith('end_turn')]), 'm'));
    expect(chunks.map((c) => c.outputDelta)).toEqual(['', 'a', '', '']);
    expect(chunks[3].usage).toEqual({ inputTokens: 5, outputTokens: 1 });
  });

  it('when the stop reason comes with the final usage, then the finish chunk carries that usage for the gateway (not in its JSON), before the usage chunk', async () => {
    const chunks = await collect(messagesEventsToChunks(from([start, text('a'), stopWith('end_turn'), { event: 'message_stop' }]), 'm'));
    expect(chunks[2]).toMatchObject({ chunk: { choices: [{ finish_reason: 'stop' }] }, usage: { inputTokens: 5, outputTokens: 1 } });
    expect('usage' in chunks[2].chunk).toBe(false);
    expect(chunks[3].usage).toEqual({ inputTokens: 5, outputTokens: 1 });
  });

  it.each([
    ['the source ends before the stop reason', [start, text('a')]],
    ['message_stop comes before the stop reason', [start, text('a'), { event: 'message_stop' }]],
    ['a text delta comes before message_start', [text('a')]],
    ['a tool_use block starts', [start, { event: 'content_block_start', data: { type: 'content_block_start', content_block: { type: 'tool_use' } } }]],
    ['a thinking delta arrives', [start, { event: 'content_block_delta', data: { type: 'content_block_delta', delta: { type: 'thinking_delta', thinking: 'hm' } } }]],
    ['the stop reason comes without usage', [start, { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn' } } }, { event: 'message_stop' }]],
    ['an invalid_request_error event arrives', [start, { event: 'error', data: { type: 'error', error: { type: 'invalid_request_error', message: 'x' } } }]],
  ])('when %s, then it is a protocol error', async (_what, events) => {
    const error = await rejection(collect(messagesEventsToChunks(from(events), 'm')));
    expect(error.kind).toBe('protocol');
  });

  it('when an overloaded_error event arrives, then the upstream is unavailable', async () => {
    const events = [start, text('a'), { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }];
    const seen: ChatStreamChunk[] = [];
    const error = await rejection(collect(messagesEventsToChunks(from(events), 'm'), seen));
    expect([error.kind, seen.length]).toEqual(['unavailable', 2]);
  });

  it('when pings and events unknown to the translation arrive, then they are passed over', async () => {
    const events = [start, { event: 'ping' }, text('a'), { event: 'content_block_stop' }, { event: 'future_event' }, stopWith('end_turn'), { event: 'message_stop' }];
    expect((await collect(messagesEventsToChunks(from(events), 'm'))).map((c) => c.outputDelta)).toEqual(['', 'a', '', '']);
  });
});

describe('messagesEventsToChunks over a real upstream', () => {
  let upstream: Upstream;

  beforeAll(async () => {
    upstream = await startUpstream();
  });

  afterAll(() => upstream.close());

  async function until(condition: () => boolean, ms = 2000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it('when the upstream streams, then the translated stream ends with its usage', async () => {
    const p = new AnthropicMessagesProvider({ name: 'claude', baseUrl: upstream.url, maxBodyBytes: 1 << 20 });
    const chunks = await collect(messagesEventsToChunks(await p.stream(messagesCall({ maxTokens: 2 })), 'claude-up'));
    await p.close();
    expect(chunks.map((c) => c.outputDelta)).toEqual(['', 'tok0', ' tok1', '', '']);
    expect(chunks[3].chunk.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'length' }]);
    expect(chunks[4].usage?.outputTokens).toBe(2);
  });

  it.each([
    ['after reading some', async (chunks: AsyncIterable<ChatStreamChunk>) => {
      for await (const chunk of chunks) if (chunk.outputDelta === ' tok1') break;
    }],
    ['before reading anything', async (chunks: AsyncIterable<ChatStreamChunk>) => {
      await chunks[Symbol.asyncIterator]().return?.();
    }],
  ])('when the consumer gives up %s, then the upstream sees the disconnect', async (_when, giveUp) => {
    const p = new AnthropicMessagesProvider({ name: 'claude', baseUrl: upstream.url, maxBodyBytes: 1 << 20, headers: { 'x-upstream-behaviour': 'chunk-delay=20', 'x-upstream-tokens': '50' } });
    const aborts = upstream.messagesClientAborts;
    await giveUp(messagesEventsToChunks(await p.stream(messagesCall({ maxTokens: 50 })), 'm'));
    await until(() => upstream.messagesClientAborts === aborts + 1);
    await p.close();
  });
});
