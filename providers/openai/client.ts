// The HTTP side of one OpenAI-compatible provider entry, shared by its chat and images
// adapters: one keep-alive undici Pool to the upstream, the headers every call carries, the
// request-size limit, and the mapping of every failure to a ProviderError kind:
//   connect error → 'unavailable'; 401, 403, 407 (the platform's own credentials refused) →
//   'unavailable'; 429 → 'rate_limited'; other 4xx → 'rejected'; 5xx → 'unavailable'; other non-2xx → 'protocol';
//   the signal's timeout → 'timeout'; any other abort, or a body that breaks or is not JSON →
//   'protocol'.
// Each error's message is the operators' (entry name, status, the upstream's words without the
// configured key, a connect error's code and address); only a refusal's reason, stripped of
// anything internal (../redact.ts), is kept as the `detail` the customer may read.
// `baseUrl` is origin plus prefix up to and including the API version,
// e.g. "https://api.openai.com/v1" or "http://127.0.0.1:9100/v1".

import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { currentContext, traceparentOf, tracestateOf } from '../../lib/request-context';
import { abortedCallError } from '../abort';
import { CREDENTIAL_STATUSES, ProviderError } from '../port';
import { customerDetail, headerSecrets, withoutSecrets, type Internals } from '../redact';
import { asObject, asOptionalObject, type Json } from './shape';

export interface OpenAiClientOptions {
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

/**
 * What an adapter is built from: its own connection settings (the adapter then owns the
 * pool and closes it), or a client shared with the other adapters of its entry (whoever
 * created the client closes it; the adapter's close() leaves it open).
 */
export type OpenAiAdapterOptions = OpenAiClientOptions | { client: OpenAiClient };

export type ResponseBody = Dispatcher.ResponseData['body'];

/** A 2xx answer whose body is still to be read. */
export interface UpstreamAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: ResponseBody;
}

export type Accept = 'json' | 'sse';

const ERROR_BODY_LIMIT = 8 * 1024;

export class OpenAiClient {
  readonly name: string;
  readonly maxBodyBytes: number;
  private readonly pool: Pool;
  private readonly prefix: string;
  private readonly jsonHeaders: Record<string, string>;
  private readonly sseHeaders: Record<string, string>;
  /** What an error's customer copy must not hold. */
  private readonly internals: Internals;
  private closing: Promise<void> | undefined;

  constructor(options: OpenAiClientOptions) {
    const url = new URL(options.baseUrl);
    this.name = options.name;
    this.maxBodyBytes = options.maxBodyBytes;
    this.prefix = url.pathname.replace(/\/+$/, '');
    // No timeouts of undici's own (300 s for headers and between body chunks by default): every
    // call carries the gateway's deadline as its signal (GATEWAY_PROVIDER_TIMEOUT_MS, up to an
    // hour; an image's artifact wait, up to a day), and only that may cut it, as documented.
    this.pool = new Pool(url.origin, { connections: options.connections ?? 128, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
    const headers: Record<string, string> = { ...options.headers, 'content-type': 'application/json' };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    this.jsonHeaders = { ...headers, accept: 'application/json' };
    this.sseHeaders = { ...headers, accept: 'text/event-stream' };
    this.internals = { name: options.name, baseUrl: options.baseUrl, secrets: [...(options.apiKey ? [options.apiKey] : []), ...headerSecrets(headers)] };
  }

  /**
   * POSTs `payload` as JSON to `{baseUrl}{route}`; resolves with a 2xx answer, else rejects
   * with the mapped ProviderError. `headers` are added for this request only.
   */
  async post(route: string, payload: Json, signal: AbortSignal, accept: Accept, headers?: Record<string, string>): Promise<UpstreamAnswer> {
    const json = JSON.stringify(payload);
    if (Buffer.byteLength(json) > this.maxBodyBytes) {
      throw new ProviderError('rejected', `request body over the ${this.maxBodyBytes}-byte limit of ${this.name}`, 413, undefined, { detail: `the request body is over the provider's limit of ${this.maxBodyBytes} bytes` });
    }
    const common = accept === 'sse' ? this.sseHeaders : this.jsonHeaders;
    // The W3C trace context of the call (the model call's span when traced): an upstream that
    // traces continues the request's trace. The client's tracestate goes along when it sent one.
    const context = currentContext();
    const sent: Record<string, string> = context ? { ...common, ...headers, traceparent: traceparentOf(context) } : headers ? { ...common, ...headers } : common;
    if (context?.traceState) sent.tracestate = tracestateOf(context)!; // `sent` is this call's own object then
    let response: Dispatcher.ResponseData;
    try {
      response = await this.pool.request({
        method: 'POST',
        path: this.prefix + route,
        headers: sent,
        body: json,
        signal,
      });
    } catch (error) {
      throw failedRequest(error, signal, this.name);
    }
    const { statusCode, body } = response;
    if (statusCode >= 200 && statusCode < 300) return { statusCode, headers: response.headers, body };
    const { text, reason } = await errorDetail(body);
    const said = withoutSecrets(text, this.internals.secrets);
    const message = `${this.name} answered ${statusCode}${said ? `: ${said}` : ''}`;
    const retryAfter = retryAfterMs(response.headers);
    // The platform's credentials refused: the upstream's failure, told to nobody but the operators.
    if (CREDENTIAL_STATUSES.has(statusCode)) throw new ProviderError('unavailable', message, statusCode, retryAfter);
    if (statusCode >= 500) throw new ProviderError('unavailable', message, statusCode, retryAfter);
    // The platform's rate with the upstream, not the request: nothing of the upstream's words is passed on.
    if (statusCode === 429) throw new ProviderError('rate_limited', message, statusCode, retryAfter);
    if (statusCode >= 400) {
      // Only a structured reason is passed on: a raw body (a proxy's page) may say anything.
      const detail = reason === undefined ? '' : customerDetail(reason, this.internals);
      throw new ProviderError('rejected', message, statusCode, retryAfter, { detail });
    }
    throw new ProviderError('protocol', message, statusCode);
  }

  /**
   * Closes the pool's sockets (in-flight calls finish first). Safe to call again: undici
   * would reject a close after the first has finished.
   */
  close(): Promise<void> {
    this.closing ??= this.pool.close().then(() => undefined);
    return this.closing;
  }
}

/**
 * The base of the entry's adapters: the name and size limit of the upstream, the client to
 * call it through, and close(), which closes the client only when the adapter created it.
 */
export abstract class OpenAiAdapter {
  readonly name: string;
  readonly maxBodyBytes: number;
  protected readonly client: OpenAiClient;
  private readonly ownsClient: boolean;

  constructor(options: OpenAiAdapterOptions) {
    this.ownsClient = !('client' in options);
    this.client = 'client' in options ? options.client : new OpenAiClient(options);
    this.name = this.client.name;
    this.maxBodyBytes = this.client.maxBodyBytes;
  }

  /** Closes the pool's sockets if this adapter owns them (in-flight calls finish first). */
  close(): Promise<void> {
    return this.ownsClient ? this.client.close() : Promise.resolve();
  }
}

/**
 * Closes the upstream connection mid-answer. undici reports that as an abort error on the body;
 * nobody may be reading it any more (a stream refused for its content type, a consumer gone), so
 * the error is expected and dropped here: an 'error' event with no listener would end the process.
 */
export function cancel(body: ResponseBody): void {
  if (body.destroyed) return;
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * How long the rest of a finished stream's body (after `[DONE]` or `message_stop`) is read so that
 * its socket is kept for the next call. An upstream that never ends the body there held its
 * connection, and so a place in the entry's pool, for good; one that sent on was read for good.
 */
export const FINISHED_BODY_DRAIN_MS = 2000;

/**
 * Reads what is left of a finished stream's body in the background, so its socket is reused;
 * closes it instead when it has not ended within FINISHED_BODY_DRAIN_MS.
 */
export async function drainFinished(body: ResponseBody, bytes: AsyncIterator<unknown>): Promise<void> {
  try {
    await bytes.return?.(); // detaches the iterator's listeners, leaving the body readable
    await body.dump({ limit: Number.MAX_SAFE_INTEGER, signal: AbortSignal.timeout(FINISHED_BODY_DRAIN_MS) });
  } catch {
    // A body that fails or lingers after the answer's end lost nothing; its socket is simply not reused.
  }
}

/**
 * The most bytes a JSON answer may have (docs/providers.md, "Entries"): the largest an upstream
 * sends in earnest, 2,048 embeddings of 3,072 numbers written as text, is under 200 MB. Without a
 * bound, an upstream sending an endless body had it all kept in memory until the call's deadline
 * (gigabytes in seconds).
 */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** Decodes a whole answer (no `stream` option: it keeps nothing between calls); it drops a leading byte order mark, as undici's body.text() did. */
const ANSWER_TEXT = new TextDecoder();

/** Reads a whole 2xx body as one JSON object; a body over `limit` bytes is cut off, a `protocol` error. */
export async function readJsonObject(body: ResponseBody, signal: AbortSignal, limit = MAX_ANSWER_BYTES): Promise<Json> {
  try {
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of body) {
      length += (chunk as Buffer).length;
      if (length > limit) {
        cancel(body);
        throw new ProviderError('protocol', `upstream answer over the ${limit}-byte limit`);
      }
      chunks.push(chunk as Buffer);
    }
    // One chunk (most answers) is decoded as it is, without a copy.
    return asObject(JSON.parse(ANSWER_TEXT.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length))), 'response');
  } catch (error) {
    throw failedRead(error, signal);
  }
}

/** While reading a 2xx body: aborted, or the upstream broke or sent garbage. */
export function failedRead(error: unknown, signal: AbortSignal): ProviderError {
  if (signal.aborted) return abortedCallError(signal);
  if (error instanceof ProviderError) return error;
  if (error instanceof SyntaxError) return new ProviderError('protocol', 'upstream answer is not JSON');
  return new ProviderError('protocol', `upstream connection broke: ${errorText(error)}`);
}

/** Before a response: the call was aborted, timed out, or never reached the upstream (`name`'s). */
function failedRequest(error: unknown, signal: AbortSignal, name: string): ProviderError {
  if (signal.aborted) return abortedCallError(signal);
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new ProviderError('timeout', `${name} sent no headers in time`);
  return new ProviderError('unavailable', `${name} unreachable: ${errorText(error)}`);
}

/** How long an answer asks the caller to wait: `retry-after-ms` (OpenAI's), else `retry-after` in seconds or as a date. */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | undefined {
  const first = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const ms = Number(first('retry-after-ms'));
  if (first('retry-after-ms') !== undefined && Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const after = first('retry-after');
  if (after === undefined || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The upstream's own words for a non-2xx answer: `reason`, its error message (OpenAI's and
 * Anthropic's `error.message`) when it sent one; `text`, that message, else the body's start.
 */
async function errorDetail(body: ResponseBody): Promise<{ text: string; reason?: string }> {
  let text = '';
  try {
    for await (const bytes of body) {
      text += (bytes as Buffer).toString('utf8');
      if (text.length >= ERROR_BODY_LIMIT) break;
    }
  } catch {
    // The status is what matters; an unreadable error body adds nothing.
  } finally {
    cancel(body);
  }
  try {
    const message = asOptionalObject(asOptionalObject(JSON.parse(text))?.error)?.message;
    if (typeof message === 'string') return { text: message, reason: message };
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return { text: text.slice(0, 200) };
}

function errorText(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${code} ${message}` : message;
}
