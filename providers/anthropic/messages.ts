// Anthropic Messages adapter: POST {baseUrl}/messages, JSON or SSE.
//
// The HTTP side is the OpenAI entry's client (../openai/client.ts): nothing in it is
// OpenAI-specific once the key travels as `x-api-key` instead of a bearer token, and its
// failure mapping fits Anthropic too (529 overloaded is a 5xx: 'unavailable'; Anthropic's
// error body also carries `error.message`).
//
// A stream event's name is taken from its data's `type`: Anthropic always sends the two
// equal, and the SSE reader keeps only the data lines.

import { ProviderError, type CountTokensCall, type MessagesCall, type MessagesProvider, type MessagesResult, type MessagesStreamEvent, type TokenUsage } from '../port';
import { cancel, drainFinished, failedRead, OpenAiClient, readJsonObject, type ResponseBody } from '../openai/client';
import { asArray, asObject, asOptionalObject, badShape, usageCount, type Json } from '../openai/shape';
import { SseDataReader } from '../openai/sse';
import { anthropicInput, anthropicUsage, streamError } from './wire';

export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicMessagesProviderOptions {
  name: string;
  /** Origin and path prefix including the version, e.g. "https://api.anthropic.com/v1". */
  baseUrl: string;
  apiKey?: string;
  /** The `anthropic-version` header (default 2023-06-01). */
  anthropicVersion?: string;
  maxBodyBytes: number;
  /** Most sockets kept open to the upstream (default 128). */
  connections?: number;
  /** Extra headers sent on every request (anthropic-beta, test behaviours). */
  headers?: Record<string, string>;
}

export class AnthropicMessagesProvider implements MessagesProvider {
  readonly name: string;
  readonly maxBodyBytes: number;
  private readonly client: OpenAiClient;

  constructor(options: AnthropicMessagesProviderOptions) {
    const headers: Record<string, string> = { ...options.headers, 'anthropic-version': options.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION };
    if (options.apiKey) headers['x-api-key'] = options.apiKey;
    this.client = new OpenAiClient({ name: options.name, baseUrl: options.baseUrl, maxBodyBytes: options.maxBodyBytes, connections: options.connections, headers });
    this.name = this.client.name;
    this.maxBodyBytes = this.client.maxBodyBytes;
  }

  async create(call: MessagesCall): Promise<MessagesResult> {
    const { stream: _stream, ...body } = call.body;
    const payload = { ...body, model: call.upstreamModel, max_tokens: call.maxTokens };
    const { body: answer } = await this.client.post('/messages', payload, call.signal, 'json');
    call.answered?.();
    const message = await readJsonObject(answer, call.signal);
    // What is relayed must be a message: an error body or a message without its content blocks
    // sent with 200 is a malformed answer (tried on the next upstream, charged nothing).
    if (message.type !== 'message') badShape('type (a message)');
    asArray(message.content, 'content').forEach((block, i) => {
      if (typeof asObject(block, `content[${i}]`).type !== 'string') badShape(`content[${i}].type`);
    });
    return { message, usage: anthropicUsage(message.usage) ?? badShape('usage') };
  }

  async stream(call: MessagesCall): Promise<AsyncIterable<MessagesStreamEvent>> {
    const payload = { ...call.body, model: call.upstreamModel, max_tokens: call.maxTokens, stream: true };
    const { statusCode, headers, body } = await this.client.post('/messages', payload, call.signal, 'sse');
    const type = headers['content-type'];
    if (typeof type === 'string' && !type.includes('text/event-stream')) {
      cancel(body);
      throw new ProviderError('protocol', `${this.name} answered a stream with content-type ${type}`, statusCode);
    }
    const state: ReadState = { stopped: false };
    return cancellable(body, state, readEvents(body, call.signal, state));
  }

  /** POST {baseUrl}/messages/count_tokens with the fields that endpoint takes: `input_tokens`. */
  async countTokens(call: CountTokensCall): Promise<number> {
    const payload: Record<string, unknown> = { model: call.upstreamModel };
    for (const field of COUNT_TOKENS_FIELDS) if (call.body[field] !== undefined) payload[field] = call.body[field];
    const { body } = await this.client.post('/messages/count_tokens', payload, call.signal, 'json');
    const answer = await readJsonObject(body, call.signal);
    const tokens = answer.input_tokens;
    return typeof tokens === 'number' ? usageCount(tokens, 'input_tokens') : badShape('input_tokens');
  }

  /** Closes the pool's sockets (in-flight calls finish first). */
  close(): Promise<void> {
    return this.client.close();
  }
}

/** What Anthropic's count_tokens takes beside the model; it refuses any other field. */
const COUNT_TOKENS_FIELDS = ['messages', 'system', 'tools', 'tool_choice', 'thinking'] as const;

interface ReadState {
  /** message_stop arrived: what is left of the body is only its end. */
  stopped: boolean;
}

async function* readEvents(body: ResponseBody, signal: AbortSignal, state: ReadState): AsyncGenerator<MessagesStreamEvent> {
  const reader = new SseDataReader();
  // Manual iteration: leaving the loop must not destroy the body (see finally).
  const bytes = body.iterator({ destroyOnReturn: false });
  const usage = new StreamUsage();
  let finished = false;
  try {
    for (let ended = false; !ended; ) {
      const step = await bytes.next();
      ended = step.done === true;
      for (const data of ended ? reader.end() : reader.push(step.value as Buffer)) {
        const event = usage.read(parseEvent(data));
        if (event.event === 'error') throw streamError(event.data);
        finished ||= event.event === 'message_delta' && typeof asOptionalObject(event.data.delta)?.stop_reason === 'string';
        state.stopped = event.event === 'message_stop';
        yield event;
        if (state.stopped) return;
      }
    }
  } catch (error) {
    // Once the stop reason arrived (with the final count), the connection failing after it (broken
    // before message_stop, the call's deadline, the client gone) takes nothing from the message:
    // it ends whole, as when the body ends cleanly there. What the upstream sends after it still
    // counts (an error event, a malformed event): the stream fails as before.
    if (!finished || error instanceof ProviderError) throw failedRead(error, signal);
  } finally {
    // After message_stop only the end of the body is left: read it so the socket is reused.
    // Otherwise the consumer stopped early or the stream broke: cancel the upstream.
    if (state.stopped) void drainFinished(body, bytes);
    else cancel(body);
  }
  // An end without message_stop (clean, or broken as above) is a cut stream unless the stop reason
  // had arrived; then the answer is whole, and its client gets the message_stop the upstream left
  // out, as the wire promises (an SDK may wait for it).
  if (!finished) throw new ProviderError('protocol', 'stream ended before the answer finished');
  yield { event: 'message_stop', data: { type: 'message_stop' }, outputDelta: '' };
}

/**
 * The usage of the stream so far. message_start says the input; message_delta says the
 * cumulative output and, from newer API versions, the input counts again. A count a delta
 * states replaces the earlier one; one it leaves out or sends as null keeps the earlier one (as
 * Anthropic's own types read a delta), and so does the split of cache writes by lifetime, which
 * a delta restating only their total does not carry (a changed total keeps the one-hour part and
 * puts the difference in the default lifetime).
 */
class StreamUsage {
  /** message_start's usage object, as sent. */
  private started: Json | undefined;

  read(event: MessagesStreamEvent): MessagesStreamEvent {
    if (event.event === 'message_start') {
      const started = asOptionalObject(asObject(event.data.message, 'message_start message').usage);
      const usage = anthropicUsage(started) ?? badShape('message_start usage');
      this.started = started;
      return { ...event, usage };
    }
    if (event.event === 'message_delta') {
      const data = asOptionalObject(event.data.usage);
      const output = data?.output_tokens;
      const input = anthropicInput(stated(this.started, data));
      if (typeof output !== 'number' || input === undefined) badShape('message_delta usage');
      const usage: TokenUsage = { ...input, outputTokens: usageCount(output, 'message_delta usage.output_tokens') };
      return { ...event, usage };
    }
    return event;
  }
}

/** `later`'s stated counts over `earlier`'s, one level into `cache_creation`; null or absent keeps the earlier. */
function stated(earlier: Json | undefined, later: Json | undefined): Json | undefined {
  if (!earlier || !later) return later ?? earlier;
  const merged: Json = { ...earlier };
  for (const [name, value] of Object.entries(later)) {
    if (value === null || value === undefined) continue;
    const before = asOptionalObject(earlier[name]);
    const after = asOptionalObject(value);
    merged[name] = name === 'cache_creation' && before && after ? stated(before, after)! : value;
  }
  return merged;
}

function parseEvent(data: string): MessagesStreamEvent {
  let json: Json;
  try {
    json = asObject(JSON.parse(data), 'stream event');
  } catch (error) {
    throw error instanceof ProviderError ? error : new ProviderError('protocol', 'stream event is not JSON');
  }
  const event = typeof json.type === 'string' ? json.type : badShape('stream event type');
  const delta = event === 'content_block_delta' ? asOptionalObject(json.delta) : undefined;
  const outputDelta = delta?.type === 'text_delta' && typeof delta.text === 'string' ? delta.text : '';
  return { event, data: json, outputDelta };
}


/** Destroys the body when the consumer gives up before message_stop, even before its first next(). */
function cancellable(body: ResponseBody, state: ReadState, events: AsyncGenerator<MessagesStreamEvent>): AsyncIterable<MessagesStreamEvent> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => events.next(),
      return: (value?: unknown) => {
        if (!state.stopped) cancel(body);
        return events.return(value);
      },
    }),
  };
}
