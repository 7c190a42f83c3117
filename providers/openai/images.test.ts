import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startUpstream, type Upstream } from '../../test/support/upstream';
import type { ImageCall } from '../port';
import type { OpenAiClientOptions } from './client';
import { OpenAiImageProvider } from './images';

let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
});

afterAll(() => upstream.close());

/** Runs `use` with a provider of its own (the upstream's behaviours are request headers), then closes it. */
async function withProvider<T>(use: (p: OpenAiImageProvider) => Promise<T>, options: Partial<OpenAiClientOptions> = {}): Promise<T> {
  const p = new OpenAiImageProvider({ name: 'local', baseUrl: upstream.url, apiKey: 'sk-test', maxBodyBytes: 1024 * 1024, ...options });
  try {
    return await use(p);
  } finally {
    await p.close();
  }
}

const behaving = (behaviour: string): Partial<OpenAiClientOptions> => ({ headers: { 'x-upstream-behaviour': behaviour } });

function call(overrides: Partial<ImageCall> = {}): ImageCall {
  return {
    taskId: 'img-task-42',
    upstreamModel: 'up-image',
    prompt: 'a lighthouse at dusk',
    responseFormat: 'url',
    passthrough: { size: '256x256' },
    sentAt: Date.now(),
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe('OpenAiImageProvider.generate', () => {
  it('when url is asked, then the upstream URL comes back and the request carries model, prompt, n=1 and the passthrough', async () => {
    const artifact = await withProvider((p) => p.generate(call()));
    expect(artifact).toEqual({ url: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${upstream.port}/files/\\d+\\.png$`)), created: expect.any(Number) });
    expect(upstream.lastImageBody).toEqual({ size: '256x256', model: 'up-image', prompt: 'a lighthouse at dusk', n: 1, response_format: 'url' });
    const file = await fetch(artifact.url!);
    expect([file.status, file.headers.get('content-type')]).toEqual([200, 'image/png']);
  });

  it('when b64_json is asked, then the base64 of a PNG comes back', async () => {
    const artifact = await withProvider((p) => p.generate(call({ responseFormat: 'b64_json' })));
    expect(Object.keys(artifact).sort()).toEqual(['b64Json', 'created']);
    expect(Buffer.from(artifact.b64Json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(upstream.lastImageBody).toMatchObject({ response_format: 'b64_json' });
  });

  it('when called, then the task id goes upstream as the Idempotency-Key, with the key as bearer', async () => {
    await withProvider((p) => p.generate(call({ taskId: 'img-task-77' })));
    expect(upstream.lastImageHeaders).toMatchObject({ 'idempotency-key': 'img-task-77', authorization: 'Bearer sk-test', 'content-type': 'application/json' });
  });

  it('when the passthrough asks for more images or a stream, then the upstream is still asked for one, unstreamed', async () => {
    await withProvider((p) => p.generate(call({ passthrough: { n: 4, stream: true, partial_images: 2, quality: 'hd' } })));
    expect(upstream.lastImageBody).toEqual({ quality: 'hd', model: 'up-image', prompt: 'a lighthouse at dusk', n: 1, response_format: 'url' });
  });

  it('when the upstream answers 400, then the call is rejected with its status and message', async () => {
    const error = withProvider((p) => p.generate(call()), behaving('status=400'));
    await expect(error).rejects.toMatchObject({ name: 'ProviderError', kind: 'rejected', upstreamStatus: 400, message: expect.stringContaining('simulated status 400') });
  });

  it('when the upstream answers 500, then the upstream is unavailable', async () => {
    await expect(withProvider((p) => p.generate(call()), behaving('status=500'))).rejects.toMatchObject({ kind: 'unavailable', upstreamStatus: 500 });
  });

  it('when the upstream hangs and the timeout fires, then it is a timeout and the upstream sees the disconnect', async () => {
    const aborts = upstream.imageClientAborts;
    await expect(withProvider((p) => p.generate(call({ signal: AbortSignal.timeout(50) })), behaving('hang'))).rejects.toMatchObject({ kind: 'timeout' });
    const deadline = Date.now() + 2000;
    while (upstream.imageClientAborts === aborts && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(upstream.imageClientAborts).toBe(aborts + 1);
  });

  it('when the caller aborts for another reason, then it is a protocol error', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('client gone')), 20);
    await expect(withProvider((p) => p.generate(call({ signal: controller.signal })), behaving('hang'))).rejects.toMatchObject({ kind: 'protocol' });
  });

  it('when nothing listens on the port, then the upstream is unavailable', async () => {
    const gone = await startUpstream();
    await gone.close();
    await expect(withProvider((p) => p.generate(call()), { baseUrl: gone.url })).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('when the upstream answers the other form than asked, then it is a protocol error', async () => {
    await expect(withProvider((p) => p.generate(call()), behaving('wrong-format'))).rejects.toMatchObject({ kind: 'protocol', message: expect.stringContaining('b64_json') });
  });

  it('when the connection breaks in the middle of the answer, then it is a protocol error', async () => {
    await expect(withProvider((p) => p.generate(call({ responseFormat: 'b64_json' })), behaving('break-after=10'))).rejects.toMatchObject({ kind: 'protocol' });
  });

  it('when the request body exceeds maxBodyBytes, then it is rejected with 413 before sending', async () => {
    const before = upstream.imageRequests;
    await expect(withProvider((p) => p.generate(call()), { maxBodyBytes: 10 })).rejects.toMatchObject({ kind: 'rejected', upstreamStatus: 413 });
    expect(upstream.imageRequests).toBe(before);
  });

  it('when asked about an earlier call, then it has no lookup to offer (the upstream cannot tell)', async () => {
    expect(await withProvider(async (p) => 'lookup' in p)).toBe(false);
  });
});

describe('OpenAiImageProvider answer reading', () => {
  let server: Server;
  let answer = '';
  let p: OpenAiImageProvider;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    p = new OpenAiImageProvider({ name: 'fixed', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxBodyBytes: 1024 });
  });

  afterAll(async () => {
    await p.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('when the answer has a revised prompt, then it is kept', async () => {
    answer = JSON.stringify({ created: 7, data: [{ url: 'https://cdn.example/a.png', revised_prompt: 'a tall lighthouse' }] });
    expect(await p.generate(call())).toEqual({ url: 'https://cdn.example/a.png', revisedPrompt: 'a tall lighthouse', created: 7 });
  });

  it('when the other form is present but null, then the answer is accepted', async () => {
    answer = JSON.stringify({ created: 7, data: [{ b64_json: 'iVBORw==', url: null }] });
    expect(await p.generate(call({ responseFormat: 'b64_json' }))).toEqual({ b64Json: 'iVBORw==', created: 7 });
  });

  it.each([
    ['text that is not JSON', '{oops'],
    ['no created', JSON.stringify({ data: [{ url: 'https://cdn.example/a.png' }] })],
    ['no data', JSON.stringify({ created: 7 })],
    ['no image', JSON.stringify({ created: 7, data: [] })],
    ['two images', JSON.stringify({ created: 7, data: [{ url: 'https://a/1.png' }, { url: 'https://a/2.png' }] })],
    ['an image that is not an object', JSON.stringify({ created: 7, data: ['https://a/1.png'] })],
    ['a url that is not a URL', JSON.stringify({ created: 7, data: [{ url: 'not a url' }] })],
    ['both forms', JSON.stringify({ created: 7, data: [{ url: 'https://a/1.png', b64_json: 'iVBORw==' }] })],
    ['a revised prompt that is not text', JSON.stringify({ created: 7, data: [{ url: 'https://a/1.png', revised_prompt: 3 }] })],
  ])('when the answer has %s, then it is a protocol error', async (_what, body) => {
    answer = body;
    await expect(p.generate(call())).rejects.toMatchObject({ kind: 'protocol' });
  });

  it.each([
    ['not base64', '!!!!'],
    ['badly padded', 'iVBORw='],
    ['empty', ''],
  ])('when b64_json is %s, then it is a protocol error', async (_what, b64) => {
    answer = JSON.stringify({ created: 7, data: [{ b64_json: b64 }] });
    await expect(p.generate(call({ responseFormat: 'b64_json' }))).rejects.toMatchObject({ kind: 'protocol' });
  });
});
