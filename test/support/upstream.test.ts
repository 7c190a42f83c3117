import { request } from 'node:http';
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

function events(text: string): string[] {
  return text.split('\n\n').filter((e) => e !== '').map((e) => e.replace(/^data: /, ''));
}

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
