import { rejection } from '../../test/support/errors';
import { startUpstream, type Upstream } from '../../test/support/upstream';
import { OpenAiChatProvider } from '../openai/chat';
import type { ChatCall, ChatCompletion, ChatStreamChunk, MessagesStreamEvent } from '../port';
import { SimulatedChatProvider } from '../simulated/chat';
import { chunksToMessagesEvents, completionToMessagesResult } from './chat-answer';

const sim = new SimulatedChatProvider();

function chatCall(overrides: Partial<ChatCall> = {}): ChatCall {
  return { upstreamModel: 'gpt-up', messages: [{ role: 'user', content: 'hi' }], maxTokens: 100, passthrough: {}, signal: new AbortController().signal, ...overrides };
}

async function collect<T>(items: AsyncIterable<T>, seen: T[] = []): Promise<T[]> {
  for await (const item of items) seen.push(item);
  return seen;
}

async function* from(chunks: ChatStreamChunk[]): AsyncGenerator<ChatStreamChunk> {
  yield* chunks;
}

const chunk = (choices: unknown[], outputDelta = '', usage?: ChatStreamChunk['usage']): ChatStreamChunk => ({ chunk: { id: 'chatcmpl-xyz', choices }, outputDelta, ...(usage ? { usage } : {}) });
const textChunk = (t: string) => chunk([{ index: 0, delta: { content: t }, finish_reason: null }], t);
const finishChunk = (reason: string) => chunk([{ index: 0, delta: {}, finish_reason: reason }]);

const completion: ChatCompletion = { id: 'chatcmpl-xyz', content: 'Hello', finishReason: 'stop', usage: { inputTokens: 7, outputTokens: 1 }, created: 1 };

describe('completionToMessagesResult', () => {
  it('when a completion is translated, then it is an Anthropic message with one text block', () => {
    expect(completionToMessagesResult(completion, 'gpt-up')).toEqual({
      message: { id: 'msg_xyz', type: 'message', role: 'assistant', model: 'gpt-up', content: [{ type: 'text', text: 'Hello' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 7, output_tokens: 1 } },
      usage: { inputTokens: 7, outputTokens: 1 },
    });
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['something_new', 'end_turn'],
  ])('when the finish reason is %s, then the stop reason is %s', (finishReason, stopReason) => {
    expect(completionToMessagesResult({ ...completion, finishReason }, 'm').message.stop_reason).toBe(stopReason);
  });
});

describe('chunksToMessagesEvents', () => {
  it('when a whole stream is translated, then it is Anthropic\'s full event sequence with the usage on message_delta', async () => {
    const events = await collect(chunksToMessagesEvents(await sim.stream(chatCall({ directives: { outputTokens: 2 } })), 'gpt-up'));
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events.every((e) => e.data.type === e.event)).toBe(true);
    expect(events.map((e) => e.outputDelta).join('|')).toBe('|||tok0| tok1|||');
    expect(events[0].data.message).toEqual({ id: expect.stringMatching(/^msg_sim-/), type: 'message', role: 'assistant', model: 'gpt-up', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } });
    expect(events[3].data).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'tok0' } });
    const input = Math.ceil(JSON.stringify([{ role: 'user', content: 'hi' }]).length / 4);
    expect(events[6].data).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: input, output_tokens: 2 } });
    expect(events.map((e) => e.usage)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined, { inputTokens: input, outputTokens: 2 }, undefined]);
  });

  it('when max_tokens cut the answer, then message_delta says max_tokens', async () => {
    const events = await collect(chunksToMessagesEvents(await sim.stream(chatCall({ maxTokens: 1 })), 'm'));
    expect(events.find((e) => e.event === 'message_delta')?.data.delta).toEqual({ stop_reason: 'max_tokens', stop_sequence: null });
  });

  it('when the answer is empty, then the text block is empty and the sequence whole', async () => {
    const events = await collect(chunksToMessagesEvents(await sim.stream(chatCall({ directives: { outputTokens: 0 } })), 'm'));
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_stop', 'message_delta', 'message_stop']);
  });

  it('when the upstream sends no usage, then message_delta counts the text deltas and carries no usage for the gateway', async () => {
    const events = await collect(chunksToMessagesEvents(from([textChunk('a'), textChunk('b'), finishChunk('stop')]), 'm'));
    const delta = events.find((e) => e.event === 'message_delta');
    expect(delta?.data.usage).toEqual({ input_tokens: 0, output_tokens: 2 });
    expect(delta?.usage).toBeUndefined();
  });

  it('when the usage comes after the finish reason, then message_delta carries it at once, before the upstream ends', async () => {
    const usage = { inputTokens: 9, outputTokens: 2 };
    let ended = false;
    async function* open(): AsyncGenerator<ChatStreamChunk> {
      yield textChunk('a');
      yield textChunk('b');
      yield finishChunk('stop');
      yield chunk([], '', usage);
      // The upstream has not ended yet ([DONE] still to come).
      await new Promise((resolve) => setTimeout(resolve, 20));
      ended = true;
    }
    const seen: MessagesStreamEvent[] = [];
    for await (const event of chunksToMessagesEvents(open(), 'm')) {
      seen.push(event);
      if (event.event === 'message_delta') expect(ended).toBe(false);
    }
    expect(seen.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(seen[6]).toMatchObject({ data: { usage: { input_tokens: 9, output_tokens: 2 } }, usage });
  });

  it('when the upstream sends anything after its final count (a usage repeated, a stray text), then it is passed over: the sequence stays Anthropic\'s, the first final count stands', async () => {
    const usage = { inputTokens: 9, outputTokens: 2 };
    const events = await collect(chunksToMessagesEvents(from([textChunk('a'), finishChunk('stop'), chunk([], '', usage), textChunk('late'), chunk([], '', { inputTokens: 9, outputTokens: 7 })]), 'm'));
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events[5].usage).toEqual(usage);
  });

  it('when the usage comes before the finish reason (on an earlier chunk), then message_delta waits for the end and carries the last usage', async () => {
    const early = { inputTokens: 9, outputTokens: 1 };
    const late = { inputTokens: 9, outputTokens: 2 };
    const events = await collect(chunksToMessagesEvents(from([chunk([{ index: 0, delta: { content: 'a' }, finish_reason: null }], 'a', early), textChunk('b'), finishChunk('stop'), chunk([], '', late)]), 'm'));
    expect(events.filter((e) => e.event === 'message_delta').map((e) => e.usage)).toEqual([late]);
  });

  it('when a chunk carries an empty tool_calls list, then it is text as usual', async () => {
    const events = await collect(chunksToMessagesEvents(from([chunk([{ index: 0, delta: { content: 'a', tool_calls: [] }, finish_reason: null }], 'a'), finishChunk('stop')]), 'm'));
    expect(events.map((e) => e.outputDelta).join('')).toBe('a');
  });

  it.each([
    ['the source is empty', []],
    ['the source ends before the finish reason', [textChunk('a')]],
    ['a tool call is streamed', [chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c' }] }, finish_reason: null }]), finishChunk('tool_calls')]],
  ])('when %s, then it is a protocol error', async (_what, chunks) => {
    const error = await rejection(collect(chunksToMessagesEvents(from(chunks), 'm')));
    expect(error.kind).toBe('protocol');
  });

  it('when the source fails mid-stream, then the events before it arrive and its error passes through', async () => {
    const seen: MessagesStreamEvent[] = [];
    const error = await rejection(collect(chunksToMessagesEvents(await sim.stream(chatCall({ directives: { failAfterChunks: 1 } })), 'm'), seen));
    expect(seen.map((e) => e.outputDelta).join('')).toBe('tok0');
    expect(error.kind).toBe('protocol');
  });
});

describe('chunksToMessagesEvents over a real upstream', () => {
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

  it('when the upstream streams, then the final message_delta carries its usage', async () => {
    const p = new OpenAiChatProvider({ name: 'up', baseUrl: upstream.url, maxBodyBytes: 1 << 20 });
    const events = await collect(chunksToMessagesEvents(await p.stream(chatCall({ maxTokens: 2 })), 'gpt-up'));
    await p.close();
    const delta = events.find((e) => e.event === 'message_delta');
    expect(delta?.usage?.outputTokens).toBe(2);
    expect(delta?.data.delta).toEqual({ stop_reason: 'max_tokens', stop_sequence: null });
    expect(events.at(-1)?.event).toBe('message_stop');
  });

  it.each([
    ['after reading some', async (events: AsyncIterable<MessagesStreamEvent>) => {
      for await (const event of events) if (event.outputDelta === ' tok1') break;
    }],
    ['before reading anything', async (events: AsyncIterable<MessagesStreamEvent>) => {
      await events[Symbol.asyncIterator]().return?.();
    }],
  ])('when the consumer gives up %s, then the upstream sees the disconnect', async (_when, giveUp) => {
    const p = new OpenAiChatProvider({ name: 'up', baseUrl: upstream.url, maxBodyBytes: 1 << 20, headers: { 'x-upstream-behaviour': 'chunk-delay=20', 'x-upstream-tokens': '50' } });
    const aborts = upstream.clientAborts;
    await giveUp(chunksToMessagesEvents(await p.stream(chatCall({ maxTokens: 50 })), 'm'));
    await until(() => upstream.clientAborts === aborts + 1);
    await p.close();
  });
});
