import { request } from 'node:http';
import { sseData, sseEvents } from './sse';
import { startUpstream, type Upstream } from './upstream';

let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
});

afterAll(() => upstream.close());

interface Reply {
  status: number;
  type: string | undefined;
  text: string;
}

async function post(body: unknown, headers: Record<string, string> = {}, path = '/chat/completions'): Promise<Reply> {
  const response = await fetch(`${upstream.url}${path}`, { method: 'POST', body: JSON.stringify(body), headers });
  return { status: response.status, type: response.headers.get('content-type') ?? undefined, text: await response.text() };
}

const events = sseData;

const messages = [{ role: 'user', content: 'hi' }];

describe('startUpstream', () => {
  it('when asked without stream, then it answers a chat.completion of min(max_tokens, x-upstream-tokens) words', async () => {
    const reply = await post({ model: 'm', messages, max_tokens: 5 }, { 'x-upstream-tokens': '3' });
    const json = JSON.parse(reply.text);
    expect(reply.status).toBe(200);
    expect(json).toMatchObject({ object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'tok0 tok1 tok2' }, finish_reason: 'stop' }] });
    expect(json.usage).toEqual({ prompt_tokens: Math.ceil(JSON.stringify(messages).length / 4), completion_tokens: 3, total_tokens: json.usage.prompt_tokens + 3 });
    expect(upstream.lastBody).toEqual({ model: 'm', messages, max_tokens: 5 });
  });

  it('when max_tokens is below the tokens wanted, then the finish reason is "length"', async () => {
    const json = JSON.parse((await post({ model: 'm', messages, max_tokens: 2 })).text);
    expect([json.choices[0].message.content, json.choices[0].finish_reason]).toEqual(['tok0 tok1', 'length']);
  });

  it('when the behaviour is ignore-max-tokens, then it answers every word asked for, past max_tokens, as an upstream that ignores it', async () => {
    const json = JSON.parse((await post({ model: 'm', messages, max_tokens: 2 }, { 'x-upstream-behaviour': 'ignore-max-tokens', 'x-upstream-tokens': '5' })).text);
    expect([json.choices[0].message.content, json.choices[0].finish_reason, json.usage.completion_tokens]).toEqual(['tok0 tok1 tok2 tok3 tok4', 'stop', 5]);
    const streamed = events((await post({ model: 'm', messages, max_tokens: 2, stream: true }, { 'x-upstream-behaviour': 'ignore-max-tokens', 'x-upstream-tokens': '5' })).text);
    expect(streamed.filter((e) => e !== '[DONE]' && JSON.parse(e).choices[0].delta.content)).toHaveLength(5);
  });

  it('when asked to stream with usage, then it sends one event per word, a finish, a usage and [DONE]', async () => {
    const reply = await post({ model: 'm', messages, max_tokens: 2, stream: true, stream_options: { include_usage: true } });
    const all = events(reply.text);
    expect(reply.type).toBe('text/event-stream');
    expect(all).toHaveLength(5);
    expect(JSON.parse(all[0]).choices[0].delta).toEqual({ role: 'assistant', content: 'tok0' });
    expect(JSON.parse(all[1]).choices[0].delta).toEqual({ content: ' tok1' });
    expect(JSON.parse(all[2]).choices[0].finish_reason).toBe('length');
    expect(JSON.parse(all[3])).toMatchObject({ choices: [], usage: { completion_tokens: 2 } });
    expect(all[4]).toBe('[DONE]');
  });

  it('when the behaviour is tokenizer=o200k_base, then the prompt is counted as OpenAI counts it, cache reads part of it', async () => {
    const hello = [{ role: 'user', content: 'hello' }];
    const counted = JSON.parse((await post({ model: 'm', messages: hello, max_tokens: 1 }, { 'x-upstream-behaviour': 'tokenizer=o200k_base' })).text);
    expect(counted.usage).toEqual({ prompt_tokens: 8, completion_tokens: 1, total_tokens: 9 });
    const cached = JSON.parse((await post({ model: 'm', messages: hello, max_tokens: 1 }, { 'x-upstream-behaviour': 'tokenizer=o200k_base,cache-read=5' })).text);
    expect(cached.usage).toMatchObject({ prompt_tokens: 8, prompt_tokens_details: { cached_tokens: 5 } });
    expect((await post({ model: 'm', messages: hello }, { 'x-upstream-behaviour': 'tokenizer=p99' })).status).toBe(400);
  });

  it('when streaming without include_usage, then no usage event is sent', async () => {
    const all = events((await post({ model: 'm', messages, max_tokens: 1, stream: true })).text);
    expect(all).toHaveLength(3);
  });

  it.each([400, 503])('when the behaviour is status=%i, then it answers that status with an OpenAI error body', async (status) => {
    const reply = await post({ model: 'm', messages }, { 'x-upstream-behaviour': `status=${status}` });
    expect(reply.status).toBe(status);
    expect(JSON.parse(reply.text).error).toMatchObject({ message: `simulated status ${status}`, type: expect.any(String), code: expect.any(String) });
  });

  it('when the behaviour is delay=60, then the answer comes no sooner', async () => {
    const started = Date.now();
    expect((await post({ model: 'm', messages }, { 'x-upstream-behaviour': 'delay=60' })).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
  });

  it('when the behaviour is unknown, then it answers 400 naming it', async () => {
    const reply = await post({ model: 'm', messages }, { 'x-upstream-behaviour': 'explode' });
    expect([reply.status, JSON.parse(reply.text).error.message]).toEqual([400, 'unknown x-upstream-behaviour "explode"']);
  });

  it('when the path is not the chat route, then it answers 404 and counts nothing', async () => {
    const before = upstream.requests;
    expect((await post({}, {}, '/models')).status).toBe(404);
    expect(upstream.requests).toBe(before);
  });

  it('when break-after=2 is set, then two events arrive and the connection breaks', async () => {
    const response = await fetch(`${upstream.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages, stream: true }),
      headers: { 'x-upstream-behaviour': 'break-after=2' },
    });
    const aborts = upstream.clientAborts;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readAll = async (): Promise<void> => {
      for (let step = await reader.read(); !step.done; step = await reader.read()) text += decoder.decode(step.value);
    };
    await expect(readAll()).rejects.toThrow();
    expect(events(text)).toHaveLength(2);
    expect(upstream.clientAborts).toBe(aborts);
  });

  it('when the client leaves a hanging request, then the upstream counts a client abort', async () => {
    const aborts = upstream.clientAborts;
    const req = request(`${upstream.url}/chat/completions`, { method: 'POST', headers: { 'x-upstream-behaviour': 'hang' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ model: 'm', messages }));
    await new Promise((resolve) => setTimeout(resolve, 30));
    req.destroy();
    const deadline = Date.now() + 2000;
    while (upstream.clientAborts === aborts && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(upstream.clientAborts).toBe(aborts + 1);
  });
});

const image = { model: 'img', prompt: 'a kite' };
const imageError = async (body: unknown, headers: Record<string, string> = {}): Promise<[number, string]> => {
  const reply = await post(body, headers, '/images/generations');
  return [reply.status, JSON.parse(reply.text).error.message];
};

describe('startUpstream images', () => {
  it('when no response_format is given, then it answers one URL it serves as a PNG', async () => {
    const reply = await post(image, { 'idempotency-key': 'task-9' }, '/images/generations');
    const json = JSON.parse(reply.text);
    expect(reply.status).toBe(200);
    expect(json).toEqual({ created: expect.any(Number), data: [{ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/files\/\d+\.png$/) }] });
    expect(upstream.lastImageHeaders?.['idempotency-key']).toBe('task-9');
    expect(upstream.lastImageBody).toEqual(image);
    const file = await fetch(json.data[0].url);
    expect(Buffer.from(await file.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
  });

  it('when b64_json is asked, then it answers the base64 of a PNG', async () => {
    const json = JSON.parse((await post({ ...image, response_format: 'b64_json', n: 1 }, {}, '/images/generations')).text);
    expect(Object.keys(json.data[0])).toEqual(['b64_json']);
    expect(Buffer.from(json.data[0].b64_json, 'base64').subarray(1, 4).toString()).toBe('PNG');
  });

  it('when images are asked for, then they are counted apart from chat requests', async () => {
    const [chats, images] = [upstream.requests, upstream.imageRequests];
    await post(image, {}, '/images/generations');
    expect([upstream.requests, upstream.imageRequests]).toEqual([chats, images + 1]);
  });

  it.each([
    [{ ...image, n: 2 }, 'n must be 1, got 2'],
    [{ model: 'img' }, 'prompt is required'],
    [{ ...image, response_format: 'png' }, 'response_format must be "url" or "b64_json", got "png"'],
  ])('when the request is %j, then it is refused with 400', async (body, message) => {
    expect(await imageError(body)).toEqual([400, message]);
  });

  it('when the behaviour is status=503, then it answers 503 with an OpenAI error body', async () => {
    expect(await imageError(image, { 'x-upstream-behaviour': 'status=503' })).toEqual([503, 'simulated status 503']);
  });

  it('when the behaviour is wrong-format, then it answers b64_json for url', async () => {
    const json = JSON.parse((await post(image, { 'x-upstream-behaviour': 'wrong-format' }, '/images/generations')).text);
    expect(Object.keys(json.data[0])).toEqual(['b64_json']);
  });

  it('when a behaviour belongs to the other route, then it is refused with 400', async () => {
    expect(await imageError(image, { 'x-upstream-behaviour': 'chunk-delay=5' })).toEqual([400, 'x-upstream-behaviour "chunk-delay" does not apply to images']);
    const reply = await post({ model: 'm', messages }, { 'x-upstream-behaviour': 'wrong-format' });
    expect(JSON.parse(reply.text).error.message).toBe('x-upstream-behaviour "wrong-format" does not apply to chat');
  });
});

function anthropicEvents(text: string): Array<{ event: string | undefined; data: Record<string, unknown> }> {
  return sseEvents(text).map((e) => ({ event: e.event, data: JSON.parse(e.data) }));
}

const claude = { model: 'claude-x', system: 'be brief', messages, max_tokens: 5 };
const claudeInput = Math.ceil(JSON.stringify({ system: 'be brief', messages }).length / 4);

describe('startUpstream embeddings', () => {
  it('when dimensions are asked above the largest model\'s, then 400 naming them, and the upstream answers the next request', async () => {
    for (const dimensions of [3073, 1_999_779_458, 0, 1.5, '8']) {
      const refused = await post({ model: 'e', input: 'hello', dimensions }, {}, '/embeddings');
      expect([dimensions, refused.status, refused.text]).toEqual([dimensions, 400, expect.stringContaining('dimensions must be a whole number from 1 to 3072')]);
    }
    const served = await post({ model: 'e', input: 'hello', dimensions: 3072 }, {}, '/embeddings');
    expect([served.status, JSON.parse(served.text).data[0].embedding.length]).toEqual([200, 3072]);
  });
});

describe('startUpstream messages', () => {
  it('when asked without stream, then it answers an Anthropic message of min(max_tokens, x-upstream-tokens) words', async () => {
    const reply = await post(claude, { 'x-upstream-tokens': '3', 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' }, '/messages');
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [{ type: 'text', text: 'tok0 tok1 tok2' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: claudeInput, output_tokens: 3 },
    });
    expect(upstream.lastMessagesBody).toEqual(claude);
    expect([upstream.lastMessagesHeaders?.['x-api-key'], upstream.lastMessagesHeaders?.['anthropic-version']]).toEqual(['sk-ant', '2023-06-01']);
  });

  it('when max_tokens cuts the words, then the stop reason is max_tokens', async () => {
    const json = JSON.parse((await post({ ...claude, max_tokens: 2 }, {}, '/messages')).text);
    expect([json.content[0].text, json.stop_reason, json.usage.output_tokens]).toEqual(['tok0 tok1', 'max_tokens', 2]);
  });

  it('when the behaviour is ignore-max-tokens, then the message has every word asked for, past max_tokens', async () => {
    const json = JSON.parse((await post({ ...claude, max_tokens: 2 }, { 'x-upstream-behaviour': 'ignore-max-tokens', 'x-upstream-tokens': '4' }, '/messages')).text);
    expect([json.content[0].text, json.stop_reason, json.usage.output_tokens]).toEqual(['tok0 tok1 tok2 tok3', 'end_turn', 4]);
  });

  it('when asked to stream, then it sends the Anthropic event sequence, each named as its type', async () => {
    const reply = await post({ ...claude, max_tokens: 2, stream: true }, {}, '/messages');
    const all = anthropicEvents(reply.text);
    expect(reply.type).toBe('text/event-stream');
    expect(all.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(all.every((e) => e.data.type === e.event)).toBe(true);
    expect(all[0].data.message).toMatchObject({ role: 'assistant', model: 'claude-x', content: [], stop_reason: null, usage: { input_tokens: claudeInput, output_tokens: 1 } });
    expect(all[1].data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect([all[3].data.delta, all[4].data.delta]).toEqual([{ type: 'text_delta', text: 'tok0' }, { type: 'text_delta', text: ' tok1' }]);
    expect(all[6].data).toEqual({ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 2 } });
  });

  it.each([
    [{ model: 'm', messages }, 'max_tokens: Field required'],
    [{ model: 'm', max_tokens: 5 }, 'messages: Field required'],
  ])('when the request is %j, then it is refused with 400 and an Anthropic error body', async (body, message) => {
    const reply = await post(body, {}, '/messages');
    expect([reply.status, JSON.parse(reply.text)]).toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message } }]);
  });

  it.each([
    [529, 'overloaded_error'],
    [503, 'api_error'],
    [429, 'rate_limit_error'],
  ])('when the behaviour is status=%i, then it answers that status with Anthropic error type %s', async (status, type) => {
    const reply = await post(claude, { 'x-upstream-behaviour': `status=${status}` }, '/messages');
    expect([reply.status, JSON.parse(reply.text).error]).toEqual([status, { type, message: `simulated status ${status}` }]);
  });

  it('when break-after=4 is set on a stream, then four events arrive and the connection breaks', async () => {
    const response = await fetch(`${upstream.url}/messages`, {
      method: 'POST',
      body: JSON.stringify({ ...claude, stream: true }),
      headers: { 'x-upstream-behaviour': 'break-after=4,chunk-delay=1' },
    });
    const aborts = upstream.messagesClientAborts;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readAll = async (): Promise<void> => {
      for (let step = await reader.read(); !step.done; step = await reader.read()) text += decoder.decode(step.value);
    };
    await expect(readAll()).rejects.toThrow();
    expect(anthropicEvents(text).map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta']);
    expect(upstream.messagesClientAborts).toBe(aborts);
  });

  it('when messages are asked for, then they are counted apart from chat and images', async () => {
    const [chats, images, messagesSeen] = [upstream.requests, upstream.imageRequests, upstream.messagesRequests];
    await post(claude, {}, '/messages');
    expect([upstream.requests, upstream.imageRequests, upstream.messagesRequests]).toEqual([chats, images, messagesSeen + 1]);
  });

  it('when the client leaves a hanging Messages request, then the upstream counts a Messages client abort', async () => {
    const aborts = upstream.messagesClientAborts;
    const req = request(`${upstream.url}/messages`, { method: 'POST', headers: { 'x-upstream-behaviour': 'hang' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify(claude));
    await new Promise((resolve) => setTimeout(resolve, 30));
    req.destroy();
    const deadline = Date.now() + 2000;
    while (upstream.messagesClientAborts === aborts && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(upstream.messagesClientAborts).toBe(aborts + 1);
  });

  it('when an images-only behaviour is given, then it is refused with 400', async () => {
    const reply = await post(claude, { 'x-upstream-behaviour': 'wrong-format' }, '/messages');
    expect([reply.status, JSON.parse(reply.text).error.message]).toEqual([400, 'x-upstream-behaviour "wrong-format" does not apply to messages']);
  });
});
