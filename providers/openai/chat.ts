// OpenAI-compatible chat adapter: POST {baseUrl}/chat/completions over a keep-alive
// undici Pool. `baseUrl` is origin plus prefix up to and including the API version,
// e.g. "https://api.openai.com/v1" or "http://127.0.0.1:9100/v1".

import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { abortedCallError } from '../abort';
import {
  ProviderError,
  type ChatCall,
  type ChatCompletion,
  type ChatProvider,
  type ChatStreamChunk,
  type TokenUsage,
} from '../port';
import { SseDataReader } from './sse';

export interface OpenAiChatProviderOptions {
  name: string;
  /** Origin and path prefix including the version, e.g. "https://api.openai.com/v1". */
  baseUrl: string;
  apiKey?: string;
  maxBodyBytes: number;
  /** Most sockets kept open to the upstream (default 128). */
  connections?: number;
  /** Extra headers sent on every request (organisation, project, test behaviours). */
  headers?: Record<string, string>;
}

type Body = Dispatcher.ResponseData['body'];
type Json = Record<string, unknown>;

const ERROR_BODY_LIMIT = 8 * 1024;

export class OpenAiChatProvider implements ChatProvider {
  readonly name: string;
  readonly maxBodyBytes: number;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly jsonHeaders: Record<string, string>;
  private readonly sseHeaders: Record<string, string>;

  constructor(options: OpenAiChatProviderOptions) {
    const url = new URL(options.baseUrl);
    this.name = options.name;
    this.maxBodyBytes = options.maxBodyBytes;
    this.path = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
    this.pool = new Pool(url.origin, { connections: options.connections ?? 128, pipelining: 1 });
    const headers: Record<string, string> = { ...options.headers, 'content-type': 'application/json' };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    this.jsonHeaders = { ...headers, accept: 'application/json' };
    this.sseHeaders = { ...headers, accept: 'text/event-stream' };
  }

  async complete(call: ChatCall): Promise<ChatCompletion> {
    const { stream: _s, stream_options: _o, ...passthrough } = call.passthrough;
    const payload = { ...passthrough, model: call.upstreamModel, messages: call.messages, max_tokens: call.maxTokens };
    const body = await this.post(call, payload, false);
    let json: Json;
    try {
      json = asObject(JSON.parse(await body.text()), 'response');
    } catch (error) {
      throw failedRead(error, call.signal);
    }
    const choice = asObject(asArray(json.choices, 'choices')[0], 'choices[0]');
    const message = asObject(choice.message, 'choices[0].message');
    return {
      id: typeof json.id === 'string' ? json.id : '',
      content: typeof message.content === 'string' ? message.content : '',
      finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : 'stop',
      usage: toUsage(json.usage) ?? badShape('usage'),
      created: typeof json.created === 'number' ? json.created : Math.floor(Date.now() / 1000),
    };
  }

  async stream(call: ChatCall): Promise<AsyncIterable<ChatStreamChunk>> {
    const options = asOptionalObject(call.passthrough.stream_options);
    const request = {
      ...call.passthrough,
      model: call.upstreamModel,
      messages: call.messages,
      max_tokens: call.maxTokens,
      stream: true,
      stream_options: { ...options, include_usage: true },
    };
    const body = await this.post(call, request, true);
    return cancellable(body, readChunks(body, call.signal));
  }

  /** Closes the pool's sockets; in-flight calls finish first. */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** Sends the request; resolves with the body of a 2xx answer, else rejects mapped. */
  private async post(call: ChatCall, payload: Json, streaming: boolean): Promise<Body> {
    const json = JSON.stringify(payload);
    if (Buffer.byteLength(json) > this.maxBodyBytes) {
      throw new ProviderError('rejected', `request body over the ${this.maxBodyBytes}-byte limit of ${this.name}`, 413);
    }
    let response: Dispatcher.ResponseData;
    try {
      response = await this.pool.request({
        method: 'POST',
        path: this.path,
        headers: streaming ? this.sseHeaders : this.jsonHeaders,
        body: json,
        signal: call.signal,
      });
    } catch (error) {
      throw failedRequest(error, call.signal);
    }
    const { statusCode, headers, body } = response;
    if (statusCode >= 200 && statusCode < 300) {
      const type = headers['content-type'];
      if (streaming && typeof type === 'string' && !type.includes('text/event-stream')) {
        body.destroy();
        throw new ProviderError('protocol', `${this.name} answered a stream with content-type ${type}`, statusCode);
      }
      return body;
    }
    const detail = await errorDetail(body);
    const message = `${this.name} answered ${statusCode}${detail ? `: ${detail}` : ''}`;
    if (statusCode >= 500) throw new ProviderError('unavailable', message, statusCode);
    if (statusCode >= 400) throw new ProviderError('rejected', message, statusCode);
    throw new ProviderError('protocol', message, statusCode);
  }
}

async function* readChunks(body: Body, signal: AbortSignal): AsyncGenerator<ChatStreamChunk> {
  const reader = new SseDataReader();
  // Manual iteration: leaving the loop must not destroy the body (see finally).
  const bytes = body.iterator({ destroyOnReturn: false });
  let finished = false;
  let done = false;
  try {
    for (let ended = false; !ended; ) {
      const step = await bytes.next();
      ended = step.done === true;
      for (const data of ended ? reader.end() : reader.push(step.value as Buffer)) {
        if (data === '[DONE]') {
          done = true;
          return;
        }
        const chunk = parseChunk(data);
        finished ||= hasFinishReason(chunk);
        yield chunk;
      }
    }
  } catch (error) {
    throw failedRead(error, signal);
  } finally {
    // After [DONE] only the end of the body is left: read it so the socket is reused.
    // Otherwise the consumer stopped early or the stream broke: cancel the upstream.
    if (done) void drain(body, bytes);
    else if (!body.destroyed) body.destroy();
  }
  // A clean end without [DONE] is a cut stream unless the answer had already finished.
  if (!finished) throw new ProviderError('protocol', 'stream ended before the answer finished');
}

/** Reads what is left of a finished body in the background, so its socket is reused. */
async function drain(body: Body, bytes: AsyncIterator<unknown>): Promise<void> {
  try {
    await bytes.return?.(); // detaches the iterator's listeners, leaving the body readable
    await body.dump({ limit: Number.MAX_SAFE_INTEGER });
  } catch {
    // A body that fails after [DONE] lost nothing; its socket is simply not reused.
  }
}

/** Destroys the body when the consumer gives up, even before its first next(). */
function cancellable(body: Body, chunks: AsyncGenerator<ChatStreamChunk>): AsyncIterable<ChatStreamChunk> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => chunks.next(),
      return: (value?: unknown) => {
        if (!body.destroyed) body.destroy();
        return chunks.return(value);
      },
    }),
  };
}

function parseChunk(data: string): ChatStreamChunk {
  let chunk: Json;
  try {
    chunk = asObject(JSON.parse(data), 'stream chunk');
  } catch (error) {
    throw error instanceof ProviderError ? error : new ProviderError('protocol', 'stream chunk is not JSON');
  }
  const choice = Array.isArray(chunk.choices) ? asOptionalObject(chunk.choices[0]) : undefined;
  const content = asOptionalObject(choice?.delta)?.content;
  const usage = toUsage(chunk.usage);
  const outputDelta = typeof content === 'string' ? content : '';
  return usage ? { chunk, outputDelta, usage } : { chunk, outputDelta };
}

function hasFinishReason(c: ChatStreamChunk): boolean {
  const choices = c.chunk.choices;
  return Array.isArray(choices) && typeof asOptionalObject(choices[0])?.finish_reason === 'string';
}

function toUsage(value: unknown): TokenUsage | undefined {
  const usage = asOptionalObject(value);
  const input = usage?.prompt_tokens;
  const output = usage?.completion_tokens;
  if (typeof input !== 'number' || typeof output !== 'number') return undefined;
  return { inputTokens: input, outputTokens: output };
}

async function errorDetail(body: Body): Promise<string> {
  let text = '';
  try {
    for await (const bytes of body) {
      text += (bytes as Buffer).toString('utf8');
      if (text.length >= ERROR_BODY_LIMIT) break;
    }
  } catch {
    // The status is what matters; an unreadable error body adds nothing.
  } finally {
    if (!body.destroyed) body.destroy();
  }
  try {
    const message = asOptionalObject(asOptionalObject(JSON.parse(text))?.error)?.message;
    if (typeof message === 'string') return message;
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text.slice(0, 200);
}

/** Before a response: the call was aborted, timed out, or never reached the upstream. */
function failedRequest(error: unknown, signal: AbortSignal): ProviderError {
  if (signal.aborted) return abortedCallError(signal);
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new ProviderError('timeout', 'upstream sent no headers in time');
  return new ProviderError('unavailable', `upstream unreachable: ${errorText(error)}`);
}

/** While reading a 2xx body: aborted, or the upstream broke or sent garbage. */
function failedRead(error: unknown, signal: AbortSignal): ProviderError {
  if (signal.aborted) return abortedCallError(signal);
  if (error instanceof ProviderError) return error;
  if (error instanceof SyntaxError) return new ProviderError('protocol', 'upstream answer is not JSON');
  return new ProviderError('protocol', `upstream connection broke: ${errorText(error)}`);
}

function errorText(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${code} ${message}` : message;
}

function asOptionalObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function asObject(value: unknown, what: string): Json {
  return asOptionalObject(value) ?? badShape(what);
}

function asArray(value: unknown, what: string): unknown[] {
  return Array.isArray(value) ? value : badShape(what);
}

function badShape(what: string): never {
  throw new ProviderError('protocol', `upstream answer has no valid ${what}`);
}
