import { createServer, type Server } from 'node:net';
import { rejection } from '../../test/support/errors';
import { startUpstream, type Upstream } from '../../test/support/upstream';
import type { MessagesCall, MessagesStreamEvent } from '../port';
import { AnthropicMessagesProvider, type AnthropicMessagesProviderOptions } from './messages';

let upstream: Upstream;
let provider: AnthropicMessagesProvider;

beforeAll(async () => {
  upstream = await startUpstream();
  provider = new AnthropicMessagesProvider({ name: 'claude', baseUrl: upstream.url, apiKey: 'sk-ant-test', maxBodyBytes: 1024 * 1024 });
});

afterAll(async () => {
  await provider.close();
  await upstream.close();
});

const messages = [{ role: 'user', content: 'hello' }];
const INPUT_TOKENS = Math.ceil(JSON.stringify({ system: 'be brief', messages }).length / 4);

/** The upstream's behaviours are request headers, so each behaviour gets its own provider. */
function providerWith(headers: Record<string, string>, options: Partial<AnthropicMessagesProviderOptions> = {}): AnthropicMessagesProvider {
  return new AnthropicMessagesProvider({ name: 'claude', baseUrl: upstream.url, maxBodyBytes: 1024 * 1024, headers, ...options });
}

function call(overrides: Partial<MessagesCall> = {}): MessagesCall {
  return { upstreamModel: 'claude-up', body: { system: 'be brief', messages, temperature: 0.5 }, maxTokens: 5, signal: new AbortController().signal, ...overrides };
}

async function collect(stream: AsyncIterable<MessagesStreamEvent>, seen: MessagesStreamEvent[] = []): Promise<MessagesStreamEvent[]> {
  for await (const event of stream) seen.push(event);
  return seen;
}

async function until(condition: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The usage the adapter reads from an answer whose usage object is `usage`. */
async function usageOfAnswer(usage: unknown): Promise<unknown> {
  const server = await rawServer(jsonReply({ id: 'msg_1', type: 'message', content: [], usage }));
  const p = rawProvider(server);
  try {
    return (await p.create(call())).usage;
  } finally {
    await p.close();
    server.close();
  }
}

describe('AnthropicMessagesProvider.create', () => {
  it('when the upstream answers JSON, then the message comes back as received with its usage', async () => {
    const result = await provider.create(call());
    expect(result.message).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-up', content: [{ type: 'text', text: 'tok0 tok1 tok2 tok3 tok4' }], stop_reason: 'max_tokens' });
    expect(result.usage).toEqual({ inputTokens: INPUT_TOKENS, outputTokens: 5 });
    expect(upstream.lastMessagesBody).toEqual({ system: 'be brief', messages, temperature: 0.5, model: 'claude-up', max_tokens: 5 });
  });

  it('when a call is sent, then it carries the key, the version and a JSON content type, and no bearer token', async () => {
    await provider.create(call());
    const headers = upstream.lastMessagesHeaders;
    expect([headers?.['x-api-key'], headers?.['anthropic-version'], headers?.['content-type'], headers?.authorization]).toEqual(['sk-ant-test', '2023-06-01', 'application/json', undefined]);
  });

  it('when a version is configured, then it is sent instead of the default', async () => {
    const p = providerWith({}, { anthropicVersion: '2024-01-01' });
    await p.create(call());
    await p.close();
    expect(upstream.lastMessagesHeaders?.['anthropic-version']).toBe('2024-01-01');
  });

  it('when the body says stream, then create still asks for JSON', async () => {
    await provider.create(call({ body: { messages, stream: true } }));
    expect(upstream.lastMessagesBody).toEqual({ messages, model: 'claude-up', max_tokens: 5 });
  });

  it('when the usage holds cache counts, then they are part of the input and said apart (a write without its lifetime split is of the default lifetime)', async () => {
    const usage = { input_tokens: 3, cache_creation_input_tokens: 10, cache_read_input_tokens: 100, output_tokens: 2 };
    expect(await usageOfAnswer(usage)).toEqual({ inputTokens: 113, outputTokens: 2, cacheReadTokens: 100, cacheWriteTokens: 10 });
  });

  it('when a 200 answer is not a message (an error body, no content blocks, content as a string, a block without its type), then it is a protocol error: never relayed nor charged', async () => {
    const usage = { input_tokens: 3, output_tokens: 2 };
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ id: 'msg_1', type: 'message', usage }, 'content'],
      [{ id: 'msg_1', type: 'message', content: 'hi', usage }, 'content'],
      [{ id: 'msg_1', type: 'message', content: [{ text: 'hi' }], usage }, 'content[0].type'],
      [{ type: 'error', error: { type: 'api_error', message: 'x' }, usage }, 'type'],
    ];
    for (const [answer, field] of bad) {
      const server = await rawServer(jsonReply(answer));
      const p = rawProvider(server);
      const error = await rejection(p.create(call()));
      await p.close();
      server.close();
      expect([answer, error.kind, error.message.includes(field)]).toEqual([answer, 'protocol', true]);
    }
  });

  it('when the usage splits its cache writes by lifetime, then the one-hour writes are said apart; null counts are none', async () => {
    const usage = { input_tokens: 5, cache_creation_input_tokens: 30, cache_read_input_tokens: null, cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 }, output_tokens: 1 };
    expect(await usageOfAnswer(usage)).toEqual({ inputTokens: 35, outputTokens: 1, cacheWriteTokens: 10, cacheWrite1hTokens: 20 });
  });

  it('when a usage count is negative, not whole, or beyond any call (the stream\'s message_start too), then it is a protocol error naming it, never a count to price', async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ input_tokens: 1e15, output_tokens: 2 }, 'usage.input_tokens'],
      [{ input_tokens: 3, output_tokens: -5 }, 'usage.output_tokens'],
      [{ input_tokens: 3, output_tokens: 2.5 }, 'usage.output_tokens'],
      [{ input_tokens: 3, cache_read_input_tokens: -1, output_tokens: 2 }, 'usage.cache_read_input_tokens'],
      [{ input_tokens: 3, cache_creation: { ephemeral_1h_input_tokens: 2_000_000_000 }, output_tokens: 2 }, 'usage.cache_creation.ephemeral_1h_input_tokens'],
      // Strings are malformed, never read as none (the cached tokens would vanish from the bill).
      [{ input_tokens: 3, cache_read_input_tokens: '100', output_tokens: 2 }, 'usage.cache_read_input_tokens'],
      [{ input_tokens: 3, cache_creation_input_tokens: '50', output_tokens: 2 }, 'usage.cache_creation_input_tokens'],
    ];
    for (const [usage, field] of bad) {
      const error = await rejection(usageOfAnswer(usage));
      expect([usage, error.kind, error.message.includes(field)]).toEqual([usage, 'protocol', true]);
    }
    expect(await usageOfAnswer({ input_tokens: 1_000_000_000, output_tokens: 0 })).toEqual({ inputTokens: 1_000_000_000, outputTokens: 0 });
    const start = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', usage: { input_tokens: 1e15, output_tokens: 1 } } };
    const server = await rawServer(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nevent: message_start\ndata: ${JSON.stringify(start)}\n\n`);
    const p = rawProvider(server);
    const error = await rejection((async () => collect(await p.stream(call())))());
    await p.close();
    server.close();
    expect([error.kind, error.message.includes('usage.input_tokens')]).toEqual(['protocol', true]);
  });

  it('when the answer has no usage, then it is a protocol error', async () => {
    const server = await rawServer(jsonReply({ id: 'msg_1', type: 'message', content: [] }));
    const p = rawProvider(server);
    const error = await rejection(p.create(call()));
    await p.close();
    server.close();
    expect(error.kind).toBe('protocol');
    expect(error.message).toContain('usage');
  });

  it('when the answer is not JSON, then it is a protocol error', async () => {
    const server = await rawServer('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\n{oops');
    const p = rawProvider(server);
    const error = await rejection(p.create(call()));
    await p.close();
    server.close();
    expect(error.kind).toBe('protocol');
  });

  it('when the upstream refuses the request, then the call is rejected with Anthropic\'s message', async () => {
    const error = await rejection(provider.create(call({ body: { system: 'no messages' } })));
    expect([error.kind, error.upstreamStatus]).toEqual(['rejected', 400]);
    expect(error.message).toContain('messages: Field required');
  });

  it.each([529, 503])('when the upstream answers %i, then the upstream is unavailable', async (status) => {
    const p = providerWith({ 'x-upstream-behaviour': `status=${status}` });
    const error = await rejection(p.create(call()));
    await p.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['unavailable', status]);
  });

  it('when nothing listens on the port, then the upstream is unavailable', async () => {
    const closed = await startUpstream();
    await closed.close();
    const p = new AnthropicMessagesProvider({ name: 'gone', baseUrl: closed.url, maxBodyBytes: 1024 });
    const error = await rejection(p.create(call()));
    await p.close();
    expect(error.kind).toBe('unavailable');
  });

  it('when the request body exceeds maxBodyBytes, then it is rejected with 413 before sending', async () => {
    const before = upstream.messagesRequests;
    const p = new AnthropicMessagesProvider({ name: 'tiny', baseUrl: upstream.url, maxBodyBytes: 10 });
    const error = await rejection(p.create(call()));
    await p.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['rejected', 413]);
    expect(upstream.messagesRequests).toBe(before);
  });

  it('when the timeout signal fires while the upstream hangs, then it is a timeout and the upstream sees the disconnect', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'hang' });
    const aborts = upstream.messagesClientAborts;
    const error = await rejection(p.create(call({ signal: AbortSignal.timeout(50) })));
    expect(error.kind).toBe('timeout');
    await until(() => upstream.messagesClientAborts === aborts + 1);
    await p.close();
  });
});

describe('AnthropicMessagesProvider.stream', () => {
  it('when streaming, then every upstream event arrives with its text and the usage known so far', async () => {
    const events = await collect(await provider.stream(call({ maxTokens: 3 })));
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events.map((e) => e.outputDelta).join('|')).toBe('|||tok0| tok1| tok2|||');
    expect(events[0].usage).toEqual({ inputTokens: INPUT_TOKENS, outputTokens: 1 });
    expect(events[7].usage).toEqual({ inputTokens: INPUT_TOKENS, outputTokens: 3 });
    expect(events.filter((e) => e.usage).length).toBe(2);
    expect(events[7].data).toEqual({ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 3 } });
    expect(upstream.lastMessagesBody).toMatchObject({ stream: true, max_tokens: 3, model: 'claude-up' });
  });

  it('when message_delta states the input itself, then its count is used', async () => {
    const server = await rawServer(sseReply([start(7), delta('hi'), messageDelta({ input_tokens: 9, cache_read_input_tokens: 1, output_tokens: 4 }), { type: 'message_stop' }]));
    const p = rawProvider(server);
    const events = await collect(await p.stream(call()));
    await p.close();
    server.close();
    expect(events.map((e) => e.usage)).toEqual([{ inputTokens: 7, outputTokens: 1 }, undefined, { inputTokens: 10, outputTokens: 4, cacheReadTokens: 1 }, undefined]);
  });

  it('when message_delta restates the prompt without the cache writes\' split by lifetime, or with null cache counts, then message_start\'s counts and split are kept', async () => {
    const cached = { input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 50, cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 30 }, output_tokens: 1 };
    const opening = { type: 'message_start', message: { id: 'msg_raw', type: 'message', role: 'assistant', content: [], usage: cached } };
    const whole = { inputTokens: 155, outputTokens: 4, cacheReadTokens: 100, cacheWriteTokens: 20, cacheWrite1hTokens: 30 };
    const restatements: Array<[Record<string, unknown>, Record<string, number>]> = [
      // As Anthropic's MessageDeltaUsage: the totals again, no split.
      [{ input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 50, output_tokens: 4 }, whole],
      // Null: unchanged.
      [{ input_tokens: 5, cache_read_input_tokens: null, cache_creation_input_tokens: null, output_tokens: 4 }, whole],
      // A changed write total keeps the one-hour part; the difference is of the default lifetime.
      [{ cache_creation_input_tokens: 60, output_tokens: 4 }, { ...whole, inputTokens: 165, cacheWriteTokens: 30 }],
    ];
    for (const [restated, expected] of restatements) {
      const server = await rawServer(sseReply([opening, delta('hi'), messageDelta(restated), { type: 'message_stop' }]));
      const p = rawProvider(server);
      const events = await collect(await p.stream(call()));
      await p.close();
      server.close();
      expect([restated, events[2].usage]).toEqual([restated, expected]);
    }
  });

  it.each([
    ['overloaded_error', 'unavailable'],
    ['api_error', 'unavailable'],
    ['invalid_request_error', 'protocol'],
  ])('when the stream sends an %s error event, then the iterator fails as %s after the events before it', async (type, kind) => {
    const server = await rawServer(sseReply([start(7), delta('hi'), { type: 'error', error: { type, message: 'busy' } }]));
    const p = rawProvider(server);
    const seen: MessagesStreamEvent[] = [];
    const error = await rejection(collect(await p.stream(call()), seen));
    await p.close();
    server.close();
    expect(seen.map((e) => e.event)).toEqual(['message_start', 'content_block_delta']);
    expect(error.kind).toBe(kind);
    expect(error.message).toContain(type);
  });

  it('when the stream ends after the stop reason but without message_stop, then it still completes, with the message_stop its client expects', async () => {
    const server = await rawServer(sseReply([start(7), delta('hi'), messageDelta({ output_tokens: 1 })]));
    const p = rawProvider(server);
    const events = await collect(await p.stream(call()));
    await p.close();
    server.close();
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_delta', 'message_delta', 'message_stop']);
    expect(events.at(-1)).toMatchObject({ data: { type: 'message_stop' }, outputDelta: '' });
  });

  it('when the stream ends cleanly before the stop reason, then it is a protocol error', async () => {
    const server = await rawServer(sseReply([start(7), delta('hi')]));
    const p = rawProvider(server);
    const error = await rejection(collect(await p.stream(call())));
    await p.close();
    server.close();
    expect(error.kind).toBe('protocol');
  });

  it('when a message_delta has no output count, then it is a protocol error', async () => {
    const server = await rawServer(sseReply([start(7), { type: 'message_delta', delta: { stop_reason: 'end_turn' } }, { type: 'message_stop' }]));
    const p = rawProvider(server);
    const error = await rejection(collect(await p.stream(call())));
    await p.close();
    server.close();
    expect(error.kind).toBe('protocol');
  });

  it('when an event is not JSON, then it is a protocol error', async () => {
    const server = await rawServer(`${SSE_HEAD}event: ping\ndata: {oops\n\n`);
    const p = rawProvider(server);
    const error = await rejection(collect(await p.stream(call())));
    await p.close();
    server.close();
    expect(error.kind).toBe('protocol');
  });

  it('when the upstream answers a stream with JSON, then it is a protocol error', async () => {
    const server = await rawServer(jsonReply({ id: 'msg_1' }));
    const p = rawProvider(server);
    const error = await rejection(p.stream(call()));
    await p.close();
    server.close();
    expect(error.kind).toBe('protocol');
  });

  it('when the upstream answers 529 to a stream, then stream() rejects as unavailable', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'status=529' });
    const error = await rejection(p.stream(call()));
    await p.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['unavailable', 529]);
  });

  it('when the upstream breaks after 4 events, then 4 events arrive and the iterator fails as protocol', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'break-after=4' });
    const seen: MessagesStreamEvent[] = [];
    const error = await rejection(collect(await p.stream(call()), seen));
    await p.close();
    expect(seen.map((e) => e.outputDelta)).toEqual(['', '', '', 'tok0']);
    expect(error.kind).toBe('protocol');
  });

  it('when the consumer stops early, then the upstream sees the disconnect', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'chunk-delay=20', 'x-upstream-tokens': '50' });
    const aborts = upstream.messagesClientAborts;
    for await (const event of await p.stream(call({ maxTokens: 50 }))) if (event.outputDelta === ' tok1') break;
    await until(() => upstream.messagesClientAborts === aborts + 1);
    await p.close();
  });

  it('when the consumer gives up before reading anything, then the upstream sees the disconnect', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'chunk-delay=20', 'x-upstream-tokens': '50' });
    const aborts = upstream.messagesClientAborts;
    const iterator = (await p.stream(call({ maxTokens: 50 })))[Symbol.asyncIterator]();
    await iterator.return?.();
    await until(() => upstream.messagesClientAborts === aborts + 1);
    await p.close();
  });

  it('when the caller aborts mid-stream, then the iterator fails as protocol and the upstream sees the disconnect', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'chunk-delay=20', 'x-upstream-tokens': '50' });
    const aborts = upstream.messagesClientAborts;
    const controller = new AbortController();
    const seen: MessagesStreamEvent[] = [];
    const stream = await p.stream(call({ maxTokens: 50, signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('client gone')), 70);
    const error = await rejection(collect(stream, seen));
    expect(error.kind).toBe('protocol');
    expect(seen.length).toBeGreaterThan(0);
    await until(() => upstream.messagesClientAborts === aborts + 1);
    await p.close();
  });

  it('when the signal fires mid-stream, then the iterator fails as timeout', async () => {
    const server = await rawServer(`${SSE_HEAD}${sseEvent(start(7))}`, false);
    const p = rawProvider(server);
    const seen: MessagesStreamEvent[] = [];
    const error = await rejection(collect(await p.stream(call({ signal: AbortSignal.timeout(50) })), seen));
    await p.close();
    server.close();
    expect(seen.map((e) => e.event)).toEqual(['message_start']);
    expect(error.kind).toBe('timeout');
  });

  it('when calls run one after another, then the pool reuses one keep-alive socket', async () => {
    const own = await startUpstream();
    const p = new AnthropicMessagesProvider({ name: 'reuse', baseUrl: own.url, maxBodyBytes: 1024 * 1024 });
    for (let i = 0; i < 5; i++) {
      // undici frees a socket a tick after its body ends: without the pause a second one opens.
      await collect(await p.stream(call()));
      await new Promise((resolve) => setImmediate(resolve));
      await p.create(call());
      await new Promise((resolve) => setImmediate(resolve));
    }
    await p.close();
    await own.close();
    expect([own.messagesRequests, own.connections]).toEqual([10, 1]);
  });
});

const SSE_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n';

function start(input: number): Record<string, unknown> {
  return { type: 'message_start', message: { id: 'msg_raw', type: 'message', role: 'assistant', content: [], usage: { input_tokens: input, output_tokens: 1 } } };
}

function delta(text: string): Record<string, unknown> {
  return { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } };
}

function messageDelta(usage: Record<string, unknown>): Record<string, unknown> {
  return { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage };
}

function sseEvent(data: Record<string, unknown>): string {
  return `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
}

function sseReply(events: Array<Record<string, unknown>>): string {
  return SSE_HEAD + events.map(sseEvent).join('');
}

function jsonReply(json: unknown): string {
  const text = JSON.stringify(json);
  return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

/** A TCP server that answers each connection's first bytes with `reply`, verbatim, then closes it (unless `end` is false). */
async function rawServer(reply: string, end = true): Promise<Server> {
  const server = createServer((socket) => {
    socket.once('data', () => (end ? socket.end(reply) : socket.write(reply)));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function rawProvider(server: Server): AnthropicMessagesProvider {
  return new AnthropicMessagesProvider({ name: 'raw', baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, maxBodyBytes: 1024 * 1024 });
}

describe('AnthropicMessagesProvider.countTokens', () => {
  it('when a prompt is counted, then only the fields count_tokens takes are sent, and its input_tokens is the count', async () => {
    const { maxTokens: _maxTokens, ...counted } = call({ body: { system: 'be brief', messages, temperature: 0.5, tools: [], metadata: { user_id: 'u' } } });
    expect(await provider.countTokens(counted)).toBe(INPUT_TOKENS);
    expect(upstream.lastCountTokensBody).toEqual({ model: 'claude-up', system: 'be brief', messages, tools: [] });
  });

  it('when the upstream refuses or fails, then the count fails as the other calls do', async () => {
    const { maxTokens: _maxTokens, ...counted } = call();
    await expect(providerWith({ 'x-upstream-behaviour': 'status=400' }).countTokens(counted)).rejects.toMatchObject({ kind: 'rejected', upstreamStatus: 400 });
    await expect(providerWith({ 'x-upstream-behaviour': 'status=529' }).countTokens(counted)).rejects.toMatchObject({ kind: 'unavailable' });
  });
});
