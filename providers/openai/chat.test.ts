import { createServer, type Server, type Socket } from 'node:net';
import { rejection } from '../../test/support/errors';
import { startUpstream, type Upstream } from '../../test/support/upstream';
import type { ChatCall, ChatStreamChunk, ProviderError } from '../port';
import { OpenAiChatProvider } from './chat';
import { FINISHED_BODY_DRAIN_MS } from './client';

let upstream: Upstream;
let provider: OpenAiChatProvider;

beforeAll(async () => {
  upstream = await startUpstream();
  provider = new OpenAiChatProvider({ name: 'local', baseUrl: upstream.url, apiKey: 'sk-test', maxBodyBytes: 1024 * 1024 });
});

afterAll(async () => {
  await provider.close();
  await upstream.close();
});

const messages = [{ role: 'user', content: 'hello' }];

/** The upstream's behaviours are request headers, so each behaviour gets its own provider. */
function providerWith(headers: Record<string, string>): OpenAiChatProvider {
  return new OpenAiChatProvider({ name: 'local', baseUrl: upstream.url, maxBodyBytes: 1024 * 1024, headers });
}

function call(overrides: Partial<ChatCall> = {}): ChatCall {
  return { upstreamModel: 'up-model', messages, maxTokens: 5, passthrough: { temperature: 0.5 }, signal: new AbortController().signal, ...overrides };
}

async function until(condition: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('OpenAiChatProvider.complete', () => {
  it('when the upstream answers JSON, then content, finish reason and usage come back', async () => {
    const answer = await provider.complete(call());
    expect(answer.content).toBe('tok0 tok1 tok2 tok3 tok4');
    expect(answer.finishReason).toBe('length');
    expect(answer.usage).toEqual({ inputTokens: Math.ceil(JSON.stringify(messages).length / 4), outputTokens: 5 });
    expect(answer.id).toMatch(/^chatcmpl-up-/);
    expect(upstream.lastBody).toEqual({ temperature: 0.5, model: 'up-model', messages, max_tokens: 5 });
  });

  it('when the entry names max_completion_tokens as its output bound, then the frozen bound goes in that field alone, on JSON and on streams', async () => {
    const reasoning = new OpenAiChatProvider({ name: 'local', baseUrl: upstream.url, maxBodyBytes: 1024 * 1024, maxTokensField: 'max_completion_tokens' });
    try {
      const answer = await reasoning.complete(call({ maxTokens: 3 }));
      expect(upstream.lastBody).toEqual({ temperature: 0.5, model: 'up-model', messages, max_completion_tokens: 3 });
      expect(answer.usage.outputTokens).toBe(3);
      const chunks: ChatStreamChunk[] = [];
      for await (const chunk of await reasoning.stream(call({ maxTokens: 2 }))) chunks.push(chunk);
      expect(upstream.lastBody).toMatchObject({ max_completion_tokens: 2, stream: true });
      expect(upstream.lastBody).not.toHaveProperty('max_tokens');
      expect(chunks.at(-1)?.usage?.outputTokens).toBe(2);
    } finally {
      await reasoning.close();
    }
  });

  it('when the upstream answers a tool call with logprobs, then its message, logprobs and fingerprint come back whole', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const answer = await provider.complete(call({ passthrough: { tools, logprobs: true } }));
    expect(answer.finishReason).toBe('tool_calls');
    expect(answer.message).toEqual({ role: 'assistant', content: null, refusal: null, tool_calls: [{ id: expect.stringMatching(/^call_up_/), type: 'function', function: { name: 'get_weather', arguments: '{}' } }] });
    expect(answer.logprobs).toEqual({ content: expect.arrayContaining([expect.objectContaining({ token: 'tok0', logprob: -0.5 })]) });
    expect(answer.systemFingerprint).toBe('fp_up');
    expect(upstream.lastBody).toMatchObject({ tools, logprobs: true });
  });

  it('when the upstream read part of the prompt from its cache, then that part is said apart, on JSON and on streams', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'cache-read=40' });
    const prompt = Math.ceil(JSON.stringify(messages).length / 4) + 40;
    expect((await p.complete(call())).usage).toEqual({ inputTokens: prompt, outputTokens: 5, cacheReadTokens: 40 });
    const chunks: ChatStreamChunk[] = [];
    for await (const chunk of await p.stream(call({ maxTokens: 2 }))) chunks.push(chunk);
    expect(chunks.at(-1)!.usage).toEqual({ inputTokens: prompt, outputTokens: 2, cacheReadTokens: 40 });
    await p.close();
  });

  it('when the upstream answers 400, then the call is rejected with its status and message', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'status=400' });
    const error = await rejection(p.complete(call()));
    await p.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['rejected', 400]);
    expect(error.message).toContain('simulated status 400');
  });

  it('when the upstream answers 503, then the upstream is unavailable', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'status=503' });
    const error = await rejection(p.stream(call()));
    await p.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['unavailable', 503]);
  });

  it('when nothing listens on the port, then the upstream is unavailable', async () => {
    const closed = await startUpstream();
    await closed.close();
    const p = new OpenAiChatProvider({ name: 'gone', baseUrl: closed.url, maxBodyBytes: 1024 });
    const error = await rejection(p.complete(call()));
    await p.close();
    expect(error.kind).toBe('unavailable');
  });

  it('when the answer is not JSON, then it is a protocol error', async () => {
    const server = await rawServer('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\n{oops');
    const p = new OpenAiChatProvider({ name: 'raw', baseUrl: `http://127.0.0.1:${port(server)}/v1`, maxBodyBytes: 1024 });
    const error = await rejection(p.complete(call()));
    await p.close();
    server.close();
    expect(error.kind).toBe('protocol');
  });

  it('when a usage count is negative, not whole, or beyond any call, then it is a protocol error naming it, never a count to price', async () => {
    const answer = (usage: unknown) => {
      const text = JSON.stringify({ id: 'chatcmpl-1', created: 1, choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage });
      return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
    };
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ prompt_tokens: 10, completion_tokens: -5 }, 'usage.completion_tokens'],
      [{ prompt_tokens: 10, completion_tokens: 2.5 }, 'usage.completion_tokens'],
      [{ prompt_tokens: 1e15, completion_tokens: 5 }, 'usage.prompt_tokens'],
      [{ prompt_tokens: -1000, completion_tokens: 5 }, 'usage.prompt_tokens'],
      [{ prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: -3 } }, 'cached_tokens'],
      [{ prompt_tokens: 10, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 1.5 } }, 'reasoning_tokens'],
      // A count sent as a string is malformed, never read as none (the prompt would be priced uncached).
      [{ prompt_tokens: 50, completion_tokens: 5, prompt_tokens_details: { cached_tokens: '40' } }, 'cached_tokens'],
      [{ prompt_tokens: 50, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: '2' } }, 'reasoning_tokens'],
    ];
    for (const [usage, field] of bad) {
      const server = await rawServer(answer(usage));
      const p = new OpenAiChatProvider({ name: 'raw', baseUrl: `http://127.0.0.1:${port(server)}/v1`, maxBodyBytes: 1024 });
      const error = await rejection(p.complete(call()));
      await p.close();
      server.close();
      expect([usage, error.kind, error.message.includes(field)]).toEqual([usage, 'protocol', true]);
    }
  });

  it('when a stream\'s usage chunk states a count as a string, then the stream fails there as a protocol error naming it, never ends as if no usage came', async () => {
    const events = [
      { choices: [{ index: 0, delta: { content: 'a' }, finish_reason: 'stop' }] },
      { choices: [], usage: { prompt_tokens: '5', completion_tokens: 1 } },
    ];
    const { seen, failure } = await streamFailure(events, 'data: [DONE]\n\n');
    expect([seen.map((chunk) => chunk.outputDelta), failure.kind, failure.message.includes('usage.prompt_tokens')]).toEqual([['a'], 'protocol', true]);
  });

  it('when the request body exceeds maxBodyBytes, then it is rejected with 413 before sending', async () => {
    const before = upstream.requests;
    const p = new OpenAiChatProvider({ name: 'tiny', baseUrl: upstream.url, maxBodyBytes: 10 });
    const error = await rejection(p.complete(call()));
    await p.close();
    expect([error.kind, error.upstreamStatus]).toEqual(['rejected', 413]);
    expect(upstream.requests).toBe(before);
  });

  it('when the timeout signal fires while the upstream hangs, then it is a timeout and the upstream sees the disconnect', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'hang' });
    const aborts = upstream.clientAborts;
    const error = await rejection(p.complete(call({ signal: AbortSignal.timeout(50) })));
    expect(error.kind).toBe('timeout');
    await until(() => upstream.clientAborts === aborts + 1);
    await p.close();
  });

  it('when the caller aborts for another reason, then it is a protocol error', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'hang' });
    const controller = new AbortController();
    const pending = p.complete(call({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('client gone')), 20);
    const error = await rejection(pending);
    await p.close();
    expect(error.kind).toBe('protocol');
  });
});

describe('OpenAiChatProvider.stream', () => {
  it('when streaming, then chunks arrive one per word with a usage chunk last', async () => {
    const chunks: ChatStreamChunk[] = [];
    for await (const chunk of await provider.stream(call({ maxTokens: 3 }))) chunks.push(chunk);
    expect(chunks.map((c) => c.outputDelta)).toEqual(['tok0', ' tok1', ' tok2', '', '']);
    expect(chunks[0].chunk).toMatchObject({ object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant' } }] });
    expect(chunks[3].chunk).toMatchObject({ choices: [{ finish_reason: 'length' }] }); // 16 words asked, 3 allowed
    expect(chunks[4].usage).toEqual({ inputTokens: Math.ceil(JSON.stringify(messages).length / 4), outputTokens: 3 });
    expect(upstream.lastBody).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_tokens: 3 });
  });

  it('when the upstream breaks after 3 chunks, then 3 chunks arrive and the iterator fails as protocol', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'break-after=3' });
    const seen: string[] = [];
    const stream = await p.stream(call());
    const error = await rejection(
      (async () => {
        for await (const chunk of stream) seen.push(chunk.outputDelta);
      })(),
    );
    await p.close();
    expect(seen).toEqual(['tok0', ' tok1', ' tok2']);
    expect(error.kind).toBe('protocol');
  });

  it('when the consumer stops early, then the upstream sees the disconnect', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'chunk-delay=20', 'x-upstream-tokens': '50' });
    const aborts = upstream.clientAborts;
    const stream = await p.stream(call({ maxTokens: 50 }));
    for await (const chunk of stream) if (chunk.outputDelta === ' tok1') break;
    await until(() => upstream.clientAborts === aborts + 1);
    await p.close();
  });

  it('when the consumer gives up before reading anything, then the upstream sees the disconnect', async () => {
    const p = providerWith({ 'x-upstream-behaviour': 'chunk-delay=20', 'x-upstream-tokens': '50' });
    const aborts = upstream.clientAborts;
    const iterator = (await p.stream(call({ maxTokens: 50 })))[Symbol.asyncIterator]();
    await iterator.return?.();
    await until(() => upstream.clientAborts === aborts + 1);
    await p.close();
  });

  it('when the upstream answers a stream request with 200 and a body that is not an event stream, then it fails as protocol and the body is closed without an unhandled error', async () => {
    // An HTML page still arriving: closing it makes undici report an abort on the body.
    const server = await rawServer('HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\n6\r\n<html>\r\n');
    const p = new OpenAiChatProvider({ name: 'raw', baseUrl: `http://127.0.0.1:${port(server)}/v1`, maxBodyBytes: 1024 });
    const unhandled: unknown[] = [];
    const record = (error: unknown) => unhandled.push(error);
    process.prependListener('uncaughtException', record);
    try {
      expect((await rejection(p.stream(call()))).kind).toBe('protocol');
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      process.removeListener('uncaughtException', record);
      await p.close();
      server.close();
    }
    expect(unhandled).toEqual([]);
  });

  it('when the stream sends an error object (first, or after output), then the iterator fails as unavailable there: the error is never a chunk to relay', async () => {
    const error = { error: { message: 'Incorrect API key provided: sk-plat****wxyz at http://10.1.2.3:9000/v1', type: 'invalid_request_error' } };
    for (const events of [[error], [{ choices: [{ index: 0, delta: { content: 'a' } }] }, error]]) {
      const { seen, failure } = await streamFailure(events);
      expect([seen.length, failure.kind]).toEqual([events.length - 1, 'unavailable']);
    }
  });

  it('when the signal fires mid-stream, then the iterator fails as timeout', async () => {
    const server = await rawServer('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {"choices":[{"delta":{"content":"a"}}]}\n\n');
    const p = new OpenAiChatProvider({ name: 'raw', baseUrl: `http://127.0.0.1:${port(server)}/v1`, maxBodyBytes: 1024 });
    const stream = await p.stream(call({ signal: AbortSignal.timeout(50) }));
    const seen: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of stream) seen.push(chunk.outputDelta);
      })(),
    );
    await p.close();
    server.close();
    expect(seen).toEqual(['a']);
    expect(error.kind).toBe('timeout');
  });

  it('when the upstream sends [DONE] but never ends its body, then the stream is whole and the connection is closed soon after, not kept', async () => {
    const chunked = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    const events = ['{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}', '[DONE]'].map((data) => `data: ${data}\n\n`).join('');
    const server = await rawServer(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${chunked(events)}`);
    let closed = 0;
    const sockets: Socket[] = [];
    server.on('connection', (socket) => {
      sockets.push(socket);
      socket.on('close', () => (closed += 1));
    });
    const p = new OpenAiChatProvider({ name: 'raw', baseUrl: `http://127.0.0.1:${port(server)}/v1`, maxBodyBytes: 1024 });
    try {
      const seen: string[] = [];
      for await (const chunk of await p.stream(call())) seen.push(chunk.outputDelta);
      expect(seen).toEqual(['a']);
      await until(() => closed === 1, FINISHED_BODY_DRAIN_MS + 1000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await p.close();
      server.close();
    }
  });

  it('when calls run one after another, then the pool reuses one keep-alive socket', async () => {
    const own = await startUpstream();
    const p = new OpenAiChatProvider({ name: 'reuse', baseUrl: own.url, maxBodyBytes: 1024 * 1024 });
    for (let i = 0; i < 5; i++) {
      // undici frees a socket a tick after its body ends: without the pause a second one opens.
      for await (const chunk of await p.stream(call())) void chunk;
      await new Promise((resolve) => setImmediate(resolve));
      await p.complete(call());
      await new Promise((resolve) => setImmediate(resolve));
    }
    await p.close();
    await own.close();
    expect([own.requests, own.connections]).toEqual([10, 1]);
  });
});

/** A stream of `events` (then `tail`, verbatim) read until it fails: the chunks read before, and the failure. */
async function streamFailure(events: unknown[], tail = ''): Promise<{ seen: ChatStreamChunk[]; failure: ProviderError }> {
  const server = await rawServer(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}${tail}`);
  const p = new OpenAiChatProvider({ name: 'raw', baseUrl: `http://127.0.0.1:${port(server)}/v1`, maxBodyBytes: 1024 });
  const seen: ChatStreamChunk[] = [];
  const failure = await rejection(
    (async () => {
      for await (const chunk of await p.stream(call())) seen.push(chunk);
    })(),
  );
  await p.close();
  server.close();
  return { seen, failure };
}

/** A TCP server that answers the first bytes of each connection with `reply`, verbatim. */
async function rawServer(reply: string): Promise<Server> {
  const server = createServer((socket) => {
    socket.once('data', () => socket.write(reply));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function port(server: Server): number {
  return (server.address() as { port: number }).port;
}
