// A local OpenAI-compatible upstream for tests and benchmarks, on bare node:http.
// It is the latency baseline of the benchmarks, so the happy path does little work.
//
// POST /v1/chat/completions answers N = min(max_completion_tokens ?? max_tokens ?? 16, x-upstream-tokens ?? 16)
// words "tok0 tok1 …" as JSON, or as SSE when `stream: true` (one chunk per word, a finish
// chunk, a usage chunk if stream_options.include_usage, then [DONE]). A JSON answer to a
// request offering `tools` calls the first tool instead (content null, finish_reason
// "tool_calls"); with `logprobs: true` its choice carries a logprob per word.
// POST /v1/images/generations answers one 8×8 PNG as { created, data: [{ b64_json }] } or
// { created, data: [{ url }] } per response_format (default url); the url is served by
// GET /files/<n>.png. It refuses, with 400 as OpenAI does, a missing prompt, n other than 1
// and an unknown response_format.
// POST /v1/messages speaks the Anthropic Messages wire: the same N words as one text block,
// stop_reason "max_tokens" when max_tokens cut them (else "end_turn"), input tokens
// ceil(bytes of JSON.stringify({ system, messages }) / 4); as SSE when `stream: true`, with
// Anthropic's event sequence (message_start, content_block_start, ping, one
// content_block_delta per word, content_block_stop, message_delta, message_stop). It refuses,
// with 400 and Anthropic's error body as Anthropic does, a missing max_tokens or messages.
// POST /v1/messages/count_tokens answers { input_tokens }: the prompt the Messages route would
// bill (its input_tokens plus the cache counts of its behaviour); it refuses, as Anthropic does,
// missing messages and any field other than model, messages, system, tools, tool_choice, thinking.
// POST /v1/embeddings answers one vector per input item (a string, or an array of token ids),
// the simulated provider's (`dimensions` long, default 8; the same item, the same vector), as
// numbers, or base64 float32 with encoding_format "base64"; usage.prompt_tokens by the simulated
// provider's rule (providers/simulated/embeddings.ts). It refuses, with 400 as OpenAI does, a
// missing or empty input and an unknown encoding_format.
// Header `x-upstream-behaviour` (";" or "," separated): status=<code> (with retry-after=<s>: and
// that Retry-After header), hang,
// delay=<ms> (before answering), break-after=<n> (chat and messages streams: destroy the
// socket after n events; images and embeddings: after n bytes of the body), chunk-delay=<ms>
// (streams: between events), wrong-format (images and embeddings: answer the form not asked
// for), cache-read=<n>,
// cache-write=<n>, cache-write-1h=<n> (chat and messages: prompt tokens reported as read from
// or written to the prompt cache: OpenAI's prompt_tokens_details.cached_tokens, included in
// prompt_tokens; Anthropic's cache_read_input_tokens, cache_creation_input_tokens and
// cache_creation, beside input_tokens), reasoning=<n> (chat: that many of the output tokens
// reported as completion_tokens_details.reasoning_tokens), tokenizer=<encoding> (chat: the prompt
// counted as OpenAI counts it, by that encoding (providers/tokenizer.ts), instead of bytes/4;
// its cache-read tokens are then part of that count, as OpenAI's are), prompt-tokens=<number>
// (chat and messages: the prompt count reported, any JSON number, even one no upstream should
// say: -5, 2.5, 1e15; OpenAI's prompt_tokens, Anthropic's input_tokens), opening-chunk (chat
// streams: first a chunk with the role and empty content, as OpenAI sends, then the text),
// body-delay=<ms> (chat JSON answers: the headers at once, the body that much later, as an
// upstream that has begun answering a long generation), completion-tokens=<n> (chat: the output
// count reported instead of the real one, even above max_tokens), ignore-max-tokens (chat and
// messages: x-upstream-tokens words whatever max_tokens says, as an upstream that ignores it).
//
// CLI: `node dist/test/support/upstream.js` listens on PORT (default 9100).

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { embeddingItems, type ChatMessage, type EmbeddingsInput } from '../../providers/port';
import { float32Base64, SIM_MAX_EMBEDDING_DIMENSIONS, simItemTokens, simVector } from '../../providers/simulated/embeddings';
import { solidPng } from '../../providers/simulated/png';
import { countChatPrompt, TOKENIZERS, type TokenizerName } from '../../providers/tokenizer';

export interface UpstreamOptions {
  port?: number;
  host?: string;
}

export interface Upstream {
  /** Base URL including the version, e.g. http://127.0.0.1:9100/v1. */
  url: string;
  port: number;
  close(): Promise<void>;
  /** Chat requests received. */
  requests: number;
  /** The parsed body of the last chat request. */
  lastBody: unknown;
  /** The headers of the last chat request (its traceparent among them). */
  lastHeaders: IncomingHttpHeaders | undefined;
  /** Chat requests whose client went away before the answer was complete. */
  clientAborts: number;
  /** TCP connections accepted (keep-alive reuse shows as fewer connections than requests). */
  connections: number;
  /** Image generation requests received. */
  imageRequests: number;
  /** The parsed body of the last image request. */
  lastImageBody: unknown;
  /** The headers of the last image request (its idempotency-key among them). */
  lastImageHeaders: IncomingHttpHeaders | undefined;
  /** Image requests whose client went away before the answer was complete. */
  imageClientAborts: number;
  /** Anthropic Messages requests received. */
  messagesRequests: number;
  /** The parsed body of the last Messages request. */
  lastMessagesBody: unknown;
  /** The headers of the last Messages request (x-api-key and anthropic-version among them). */
  lastMessagesHeaders: IncomingHttpHeaders | undefined;
  /** Messages requests whose client went away before the answer was complete. */
  messagesClientAborts: number;
  /** count_tokens requests received, and the parsed body of the last one. */
  countTokensRequests: number;
  lastCountTokensBody: unknown;
  /** Embeddings requests received. */
  embeddingsRequests: number;
  /** The parsed body of the last embeddings request. */
  lastEmbeddingsBody: unknown;
}

interface Behaviour {
  status?: number;
  hang?: boolean;
  breakAfter?: number;
  delayMs?: number;
  chunkDelayMs?: number;
  wrongFormat?: boolean;
  /** Prompt tokens reported as read from / written to the prompt cache (chat and messages). */
  cacheRead?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  /** Output tokens reported as reasoning (chat). */
  reasoning?: number;
  /** Seconds sent as Retry-After with a status= answer. */
  retryAfter?: number;
  /** The chat prompt counted by this encoding, OpenAI's way (cache reads then part of it). */
  tokenizer?: TokenizerName;
  /** The prompt count reported instead of the real one, whatever number it is (a misreporting upstream). */
  promptTokens?: number;
  /** Chat streams: an opening chunk with the role and no text first. */
  openingChunk?: boolean;
  /** Chat JSON answers: headers at once, the body this much later (ms). */
  bodyDelayMs?: number;
  /** Chat: the output count reported instead of the real one (a misreporting upstream). */
  completionTokens?: number;
  /** Chat and messages: every x-upstream-tokens word, whatever max_tokens says. */
  ignoreMaxTokens?: boolean;
}

type JsonBody = Record<string, unknown>;

const DEFAULT_TOKENS = 16;
const CHAT_PATH = '/v1/chat/completions';
const IMAGES_PATH = '/v1/images/generations';
const MESSAGES_PATH = '/v1/messages';
const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';
const COUNT_TOKENS_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking']);
const EMBEDDINGS_PATH = '/v1/embeddings';
const EMBEDDING_DIMENSIONS = 8;
const FILE_PATH = /^\/files\/\d+\.png$/;
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
const IMAGE = solidPng(8, 8, [0x33, 0x66, 0x99]);
const IMAGE_BASE64 = IMAGE.toString('base64');

export async function startUpstream(options: UpstreamOptions = {}): Promise<Upstream> {
  const host = options.host ?? '127.0.0.1';
  const upstream: Upstream = {
    url: '',
    port: 0,
    requests: 0,
    lastBody: undefined,
    lastHeaders: undefined,
    clientAborts: 0,
    connections: 0,
    imageRequests: 0,
    lastImageBody: undefined,
    lastImageHeaders: undefined,
    imageClientAborts: 0,
    messagesRequests: 0,
    lastMessagesBody: undefined,
    lastMessagesHeaders: undefined,
    messagesClientAborts: 0,
    countTokensRequests: 0,
    lastCountTokensBody: undefined,
    embeddingsRequests: 0,
    lastEmbeddingsBody: undefined,
    close,
  };
  let origin = '';
  const server = createServer({ keepAlive: true }, (req, res) => {
    if (req.method === 'POST' && req.url === CHAT_PATH) return readBody(req, (raw) => chat(req, res, raw));
    if (req.method === 'POST' && req.url === IMAGES_PATH) return readBody(req, (raw) => images(req, res, raw));
    if (req.method === 'POST' && req.url === MESSAGES_PATH) return readBody(req, (raw) => messages(req, res, raw));
    if (req.method === 'POST' && req.url === COUNT_TOKENS_PATH) return readBody(req, (raw) => countTokens(req, res, raw));
    if (req.method === 'POST' && req.url === EMBEDDINGS_PATH) return readBody(req, (raw) => embeddings(req, res, raw));
    if (req.method === 'GET' && FILE_PATH.test(req.url ?? '')) return sendPng(res);
    sendError(res, 404, 'not found');
  });
  server.on('connection', () => upstream.connections++);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  upstream.port = (server.address() as AddressInfo).port;
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${upstream.port}`;
  upstream.url = `${origin}/v1`;
  return upstream;

  function chat(req: IncomingMessage, res: ServerResponse, raw: string): void {
    upstream.requests++;
    const body = parseBody(res, raw);
    if (!body) return;
    upstream.lastBody = body;
    upstream.lastHeaders = req.headers;
    let behaviour: Behaviour;
    let headerTokens: number;
    try {
      behaviour = parseBehaviour(req.headers['x-upstream-behaviour'], 'chat');
      headerTokens = parseCount('x-upstream-tokens', req.headers['x-upstream-tokens']) ?? DEFAULT_TOKENS;
    } catch (error) {
      return sendError(res, 400, (error as Error).message);
    }
    schedule(res, behaviour, () => upstream.clientAborts++, () => respond(res, body, behaviour, headerTokens));
  }

  function images(req: IncomingMessage, res: ServerResponse, raw: string): void {
    upstream.imageRequests++;
    upstream.lastImageHeaders = req.headers;
    const n = upstream.imageRequests;
    oneBody(req, res, raw, 'images', checkImageRequest, (body) => (upstream.lastImageBody = body), () => upstream.imageClientAborts++, (body, behaviour) => respondImage(res, body, behaviour, `${origin}/files/${n}.png`));
  }

  function messages(req: IncomingMessage, res: ServerResponse, raw: string): void {
    upstream.messagesRequests++;
    upstream.lastMessagesHeaders = req.headers;
    const body = parseBody(res, raw, sendAnthropicError);
    if (!body) return;
    upstream.lastMessagesBody = body;
    let behaviour: Behaviour;
    let headerTokens: number;
    try {
      behaviour = parseBehaviour(req.headers['x-upstream-behaviour'], 'messages');
      headerTokens = parseCount('x-upstream-tokens', req.headers['x-upstream-tokens']) ?? DEFAULT_TOKENS;
      checkMessagesRequest(body);
    } catch (error) {
      return sendAnthropicError(res, 400, (error as Error).message);
    }
    schedule(res, behaviour, () => upstream.messagesClientAborts++, () => respondMessages(res, body, behaviour, headerTokens));
  }

  function countTokens(req: IncomingMessage, res: ServerResponse, raw: string): void {
    upstream.countTokensRequests++;
    const body = parseBody(res, raw, sendAnthropicError);
    if (!body) return;
    upstream.lastCountTokensBody = body;
    let behaviour: Behaviour;
    try {
      behaviour = parseBehaviour(req.headers['x-upstream-behaviour'], 'messages');
      if (!Array.isArray(body.messages)) throw new Error('messages: Field required');
      const extra = Object.keys(body).find((key) => !COUNT_TOKENS_FIELDS.has(key));
      if (extra) throw new Error(`${extra}: Extra inputs are not permitted`);
    } catch (error) {
      return sendAnthropicError(res, 400, (error as Error).message);
    }
    if (sentStatus(res, behaviour, sendAnthropicError)) return;
    const cached = (behaviour.cacheRead ?? 0) + (behaviour.cacheWrite ?? 0) + (behaviour.cacheWrite1h ?? 0);
    sendJson(res, 200, { input_tokens: messagesInputTokens(body) + cached });
  }

  function embeddings(req: IncomingMessage, res: ServerResponse, raw: string): void {
    upstream.embeddingsRequests++;
    oneBody(req, res, raw, 'embeddings', checkEmbeddingsRequest, (body) => (upstream.lastEmbeddingsBody = body), () => undefined, (body, behaviour) => respondEmbeddings(res, body, behaviour));
  }

  function close(): Promise<void> {
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

function readBody(req: IncomingMessage, done: (raw: string) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => done(chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString()));
}

type SendError = (res: ServerResponse, status: number, message: string) => void;

/** A route answering one JSON body (images, embeddings): its body recorded, behaviour and request checked (else 400), then answered. */
function oneBody(req: IncomingMessage, res: ServerResponse, raw: string, route: 'images' | 'embeddings', check: (body: JsonBody) => void, record: (body: JsonBody) => void, countAbort: () => void, answer: (body: JsonBody, behaviour: Behaviour) => void): void {
  const body = parseBody(res, raw);
  if (!body) return;
  record(body);
  let behaviour: Behaviour;
  try {
    behaviour = parseBehaviour(req.headers['x-upstream-behaviour'], route);
    check(body);
  } catch (error) {
    return sendError(res, 400, (error as Error).message);
  }
  schedule(res, behaviour, countAbort, () => answer(body, behaviour));
}

/** The JSON object of a request body, or undefined once a 400 has been sent for it. */
function parseBody(res: ServerResponse, raw: string, fail: SendError = sendError): JsonBody | undefined {
  try {
    return JSON.parse(raw) as JsonBody;
  } catch {
    fail(res, 400, 'body is not JSON');
    return undefined;
  }
}

/** Answers now, after delay=, or never (hang); counts a client that leaves before the end. */
function schedule(res: ServerResponse, behaviour: Behaviour, countAbort: () => void, answer: () => void): void {
  res.on('close', () => {
    if (!res.writableFinished && behaviour.breakAfter === undefined) countAbort();
  });
  if (behaviour.hang) return;
  if (behaviour.delayMs) setTimeout(answer, behaviour.delayMs);
  else answer();
}

/** A non-2xx status= behaviour: sends it and says so. */
function sentStatus(res: ServerResponse, behaviour: Behaviour, fail: SendError = sendError): boolean {
  if (behaviour.status === undefined || (behaviour.status >= 200 && behaviour.status < 300)) return false;
  if (behaviour.retryAfter !== undefined) res.setHeader('retry-after', String(behaviour.retryAfter));
  fail(res, behaviour.status, `simulated status ${behaviour.status}`);
  return true;
}

let sequence = 0;

/**
 * A JSON answer's choice: the words, or, when the request offers tools, a call of the first one
 * (content null, as OpenAI answers); with `logprobs: true`, a logprob per word.
 */
function jsonChoice(body: Record<string, unknown>, tokens: number, finishReason: string): Record<string, unknown> {
  const tool = Array.isArray(body.tools) ? (body.tools[0] as { function?: { name?: unknown } } | undefined)?.function?.name : undefined;
  const message = typeof tool === 'string'
    ? { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: `call_up_${sequence}`, type: 'function', function: { name: tool, arguments: '{}' } }] }
    : { role: 'assistant', content: words(tokens) };
  const choice: Record<string, unknown> = { index: 0, message, finish_reason: typeof tool === 'string' ? 'tool_calls' : finishReason };
  if (body.logprobs === true) choice.logprobs = { content: words(tokens).split(' ').filter(Boolean).map((token) => ({ token, logprob: -0.5, bytes: [...Buffer.from(token)], top_logprobs: [] })) };
  return choice;
}

function respond(res: ServerResponse, body: Record<string, unknown>, behaviour: Behaviour, headerTokens: number): void {
  if (res.destroyed || sentStatus(res, behaviour)) return;
  // OpenAI's newer field first, as OpenAI reads them.
  const bound = body.max_completion_tokens ?? body.max_tokens;
  const maxTokens = typeof bound === 'number' ? bound : DEFAULT_TOKENS;
  const tokens = Math.max(0, behaviour.ignoreMaxTokens ? headerTokens : Math.min(maxTokens, headerTokens));
  const finishReason = tokens < headerTokens ? 'length' : 'stop';
  const messages = (body.messages ?? []) as ChatMessage[];
  // By bytes, cache reads come on top; by a tokenizer, they are part of the prompt, as OpenAI's are.
  const counted = behaviour.tokenizer ? countChatPrompt(behaviour.tokenizer, messages) : undefined;
  const cached = Math.min(behaviour.cacheRead ?? 0, counted ?? Infinity);
  const prompt = behaviour.promptTokens ?? counted ?? Math.ceil(Buffer.byteLength(JSON.stringify(messages)) / 4) + cached;
  const usage = {
    prompt_tokens: prompt, completion_tokens: behaviour.completionTokens ?? tokens, total_tokens: prompt + (behaviour.completionTokens ?? tokens),
    ...(cached > 0 ? { prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 } } : {}),
    ...(behaviour.reasoning ? { completion_tokens_details: { reasoning_tokens: Math.min(behaviour.reasoning, tokens), audio_tokens: 0 } } : {}),
  };
  const id = `chatcmpl-up-${++sequence}`;
  const created = Math.floor(Date.now() / 1000);
  const model = typeof body.model === 'string' ? body.model : 'unknown';
  if (body.stream !== true) {
    const json = { id, object: 'chat.completion', created, model, system_fingerprint: 'fp_up', choices: [jsonChoice(body, tokens, finishReason)], usage };
    if (behaviour.bodyDelayMs) {
      const text = JSON.stringify(json);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.flushHeaders();
      setTimeout(() => res.end(text), behaviour.bodyDelayMs);
      return;
    }
    return sendJson(res, 200, json);
  }
  const head = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},`;
  const events: string[] = [];
  if (behaviour.openingChunk) events.push(`data: ${head}"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`);
  for (let i = 0; i < tokens; i++) {
    const delta = i === 0 ? `{"role":"assistant","content":"tok0"}` : `{"content":" tok${i}"}`;
    events.push(`data: ${head}"choices":[{"index":0,"delta":${delta},"finish_reason":null}]}\n\n`);
  }
  const lastDelta = tokens === 0 ? '{"role":"assistant","content":""}' : '{}';
  events.push(`data: ${head}"choices":[{"index":0,"delta":${lastDelta},"finish_reason":"${finishReason}"}]}\n\n`);
  const options = body.stream_options as { include_usage?: unknown } | undefined;
  if (options?.include_usage === true) events.push(`data: ${head}"choices":[],"usage":${JSON.stringify(usage)}}\n\n`);
  events.push('data: [DONE]\n\n');
  res.writeHead(200, SSE_HEADERS);
  if (behaviour.breakAfter === undefined && !behaviour.chunkDelayMs) {
    // One write: the client still parses event by event, the socket sees one packet.
    res.end(events.join(''));
    return;
  }
  writeOneByOne(res, events, behaviour);
}

/** Writes events one at a time (each flushed), spaced by chunk-delay, cut at break-after. */
function writeOneByOne(res: ServerResponse, events: string[], behaviour: Behaviour): void {
  let i = 0;
  const step = (): void => {
    if (res.destroyed) return;
    if (i === events.length) return void res.end();
    // The upstream breaks the connection itself (not counted as a client abort).
    if (i === behaviour.breakAfter) return void res.socket?.destroy();
    res.write(events[i++], () => (behaviour.chunkDelayMs ? setTimeout(step, behaviour.chunkDelayMs) : step()));
  };
  step();
}

/** Anthropic's cache counts of a usage object, when a cache behaviour was asked: written split by lifetime, read apart (beside input_tokens). */
function anthropicCache(behaviour: Behaviour): JsonBody {
  const write = behaviour.cacheWrite ?? 0;
  const write1h = behaviour.cacheWrite1h ?? 0;
  if (behaviour.cacheRead === undefined && behaviour.cacheWrite === undefined && behaviour.cacheWrite1h === undefined) return {};
  return {
    cache_creation_input_tokens: write + write1h,
    cache_read_input_tokens: behaviour.cacheRead ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: write, ephemeral_1h_input_tokens: write1h },
  };
}

/** Refuses what Anthropic refuses before anything else: no max_tokens, no messages. */
function checkMessagesRequest(body: JsonBody): void {
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) throw new Error('max_tokens: Field required');
  if (!Array.isArray(body.messages)) throw new Error('messages: Field required');
}

/** The uncached input of a Messages request: ceil(bytes of JSON.stringify({ system, messages }) / 4). */
function messagesInputTokens(body: JsonBody): number {
  return Math.ceil(Buffer.byteLength(JSON.stringify({ system: body.system, messages: body.messages })) / 4);
}

function respondMessages(res: ServerResponse, body: JsonBody, behaviour: Behaviour, headerTokens: number): void {
  if (res.destroyed || sentStatus(res, behaviour, sendAnthropicError)) return;
  const maxTokens = body.max_tokens as number;
  const tokens = Math.max(0, behaviour.ignoreMaxTokens ? headerTokens : Math.min(maxTokens, headerTokens));
  const stopReason = tokens < headerTokens ? 'max_tokens' : 'end_turn';
  const inputTokens = behaviour.promptTokens ?? messagesInputTokens(body);
  const id = `msg_up_${++sequence}`;
  const model = typeof body.model === 'string' ? body.model : 'unknown';
  const message = { id, type: 'message', role: 'assistant', model, content: [] as unknown[], stop_reason: null as string | null, stop_sequence: null };
  if (body.stream !== true) {
    const content = [{ type: 'text', text: words(tokens) }];
    return sendJson(res, 200, { ...message, content, stop_reason: stopReason, usage: { ...anthropicCache(behaviour), input_tokens: inputTokens, output_tokens: tokens } });
  }
  const event = (data: JsonBody): string => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
  const events = [
    event({ type: 'message_start', message: { ...message, usage: { ...anthropicCache(behaviour), input_tokens: inputTokens, output_tokens: 1 } } }),
    event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    event({ type: 'ping' }),
  ];
  for (let i = 0; i < tokens; i++) {
    events.push(event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: i === 0 ? 'tok0' : ` tok${i}` } }));
  }
  events.push(
    event({ type: 'content_block_stop', index: 0 }),
    event({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: tokens } }),
    event({ type: 'message_stop' }),
  );
  res.writeHead(200, SSE_HEADERS);
  if (behaviour.breakAfter === undefined && !behaviour.chunkDelayMs) return void res.end(events.join(''));
  writeOneByOne(res, events, behaviour);
}

/** Refuses what OpenAI's images endpoint refuses: no prompt, n other than 1, an unknown format. */
function checkImageRequest(body: JsonBody): void {
  if (typeof body.prompt !== 'string' || body.prompt === '') throw new Error('prompt is required');
  if (body.n !== undefined && body.n !== 1) throw new Error(`n must be 1, got ${JSON.stringify(body.n)}`);
  const format = body.response_format;
  if (format !== undefined && format !== 'url' && format !== 'b64_json') {
    throw new Error(`response_format must be "url" or "b64_json", got ${JSON.stringify(format)}`);
  }
}

function respondImage(res: ServerResponse, body: JsonBody, behaviour: Behaviour, url: string): void {
  if (res.destroyed || sentStatus(res, behaviour)) return;
  const b64 = (body.response_format === 'b64_json') !== (behaviour.wrongFormat === true);
  const json = { created: Math.floor(Date.now() / 1000), data: [b64 ? { b64_json: IMAGE_BASE64 } : { url }] };
  if (behaviour.breakAfter === undefined) return sendJson(res, 200, json);
  sendBroken(res, json, behaviour.breakAfter);
}

/** Refuses what OpenAI's embeddings endpoint refuses: no input, an empty one, an unknown encoding. */
function checkEmbeddingsRequest(body: JsonBody): void {
  const input = body.input;
  const empty = (item: unknown) => (typeof item === 'string' || Array.isArray(item)) && item.length === 0;
  if (input === undefined || empty(input) || (Array.isArray(input) && input.some(empty))) throw new Error("'input' must not be empty");
  const format = body.encoding_format;
  if (format !== undefined && format !== 'float' && format !== 'base64') throw new Error(`encoding_format must be "float" or "base64", got ${JSON.stringify(format)}`);
  // As OpenAI's largest model does: a vector of any length asked for would be built whole here,
  // and a few billion dimensions stopped this process (the tests' upstream) for good.
  const dimensions = body.dimensions;
  if (dimensions !== undefined && (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > SIM_MAX_EMBEDDING_DIMENSIONS)) {
    throw new Error(`dimensions must be a whole number from 1 to ${SIM_MAX_EMBEDDING_DIMENSIONS}, got ${JSON.stringify(dimensions)}`);
  }
}

function respondEmbeddings(res: ServerResponse, body: JsonBody, behaviour: Behaviour): void {
  if (res.destroyed || sentStatus(res, behaviour)) return;
  const items = embeddingItems(body.input as EmbeddingsInput);
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : EMBEDDING_DIMENSIONS;
  const base64 = (body.encoding_format === 'base64') !== (behaviour.wrongFormat === true);
  const data = items.map((item, index) => {
    const vector = simVector(item, dimensions);
    return { object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector };
  });
  const promptTokens = items.reduce((sum, item) => sum + simItemTokens(item), 0);
  const json = { object: 'list', data, model: typeof body.model === 'string' ? body.model : 'unknown', usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } };
  if (behaviour.breakAfter === undefined) return sendJson(res, 200, json);
  sendBroken(res, json, behaviour.breakAfter);
}

/** The full length is announced, `bytes` of the body sent, then the upstream breaks the connection. */
function sendBroken(res: ServerResponse, json: unknown, bytes: number): void {
  const text = Buffer.from(JSON.stringify(json));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': text.length });
  res.write(text.subarray(0, bytes), () => res.socket?.destroy());
}

function sendPng(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'image/png', 'content-length': IMAGE.length });
  res.end(IMAGE);
}

const WORDS: string[] = [];

function words(n: number): string {
  for (let i = WORDS.length; i < n; i++) WORDS.push(i === 0 ? 'tok0' : `tok${i}`);
  return WORDS.slice(0, n).join(' ');
}

function sendJson(res: ServerResponse, status: number, json: unknown): void {
  const text = JSON.stringify(json);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string): void {
  const type = status >= 500 ? 'server_error' : 'invalid_request_error';
  sendJson(res, status, { error: { message, type, code: `upstream_${status}` } });
}

/** Anthropic's error body; its `error.type` follows the status as Anthropic's does. */
function sendAnthropicError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { type: 'error', error: { type: ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'), message } });
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

// Behaviours of the chat and messages routes only (STREAMS_ONLY: refused on images and embeddings).
const STREAMS_ONLY = new Set(['chunk-delay', 'cache-read', 'cache-write', 'cache-write-1h', 'reasoning', 'tokenizer', 'prompt-tokens', 'opening-chunk', 'completion-tokens', 'ignore-max-tokens']);
// Behaviours of the routes answering one JSON body of vectors or images (refused on chat and messages).
const ONE_BODY_ONLY = new Set(['wrong-format']);

function parseBehaviour(header: string | string[] | undefined, route: 'chat' | 'images' | 'messages' | 'embeddings'): Behaviour {
  const behaviour: Behaviour = {};
  if (typeof header !== 'string') return behaviour;
  for (const part of header.split(/[;,]/)) {
    const [rawName, value] = part.split('=', 2);
    const name = rawName.trim();
    if (name === '') continue;
    if ((route === 'images' || route === 'embeddings' ? STREAMS_ONLY : ONE_BODY_ONLY).has(name)) throw new Error(`x-upstream-behaviour "${name}" does not apply to ${route}`);
    if (name === 'hang' && value === undefined) behaviour.hang = true;
    else if (name === 'wrong-format' && value === undefined) behaviour.wrongFormat = true;
    else if (name === 'status') behaviour.status = parseCount(name, value ?? '');
    else if (name === 'retry-after') behaviour.retryAfter = parseCount(name, value ?? '');
    else if (name === 'break-after') behaviour.breakAfter = parseCount(name, value ?? '');
    else if (name === 'delay') behaviour.delayMs = parseCount(name, value ?? '');
    else if (name === 'chunk-delay') behaviour.chunkDelayMs = parseCount(name, value ?? '');
    else if (name === 'cache-read') behaviour.cacheRead = parseCount(name, value ?? '');
    else if (name === 'cache-write') behaviour.cacheWrite = parseCount(name, value ?? '');
    else if (name === 'cache-write-1h') behaviour.cacheWrite1h = parseCount(name, value ?? '');
    else if (name === 'reasoning') behaviour.reasoning = parseCount(name, value ?? '');
    else if (name === 'opening-chunk' && value === undefined && route === 'chat') behaviour.openingChunk = true;
    else if (name === 'body-delay' && route === 'chat') behaviour.bodyDelayMs = parseCount(name, value ?? '');
    else if (name === 'completion-tokens' && route === 'chat') behaviour.completionTokens = parseCount(name, value ?? '');
    else if (name === 'ignore-max-tokens' && value === undefined) behaviour.ignoreMaxTokens = true;
    else if (name === 'prompt-tokens' && value !== undefined && Number.isFinite(Number(value))) behaviour.promptTokens = Number(value);
    else if (name === 'tokenizer' && route === 'chat' && (TOKENIZERS as readonly string[]).includes(value ?? '')) behaviour.tokenizer = value as TokenizerName;
    else throw new Error(`unknown x-upstream-behaviour "${part.trim()}"`);
  }
  return behaviour;
}

function parseCount(name: string, value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value.trim() : '';
  if (!/^\d+$/.test(text)) throw new Error(`${name} needs a non-negative integer, got "${String(value)}"`);
  return Number(text);
}

if (require.main === module) {
  const port = Number(process.env.PORT ?? 9100);
  startUpstream({ port, host: process.env.HOST }).then(
    (upstream) => console.log(`upstream listening on ${upstream.url}`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
