// OpenAI-compatible chat adapter: POST {baseUrl}/chat/completions, JSON or SSE, through the
// HTTP client of its provider entry (./client.ts: the pool, headers and failure mapping,
// shared with the images adapter of the same entry).

import { ProviderError, withCacheCounts, type ChatCall, type ChatCompletion, type ChatProvider, type ChatStreamChunk, type TokenUsage } from '../port';
import { cancel, drainFinished, failedRead, OpenAiAdapter, readJsonObject, type OpenAiAdapterOptions, type ResponseBody } from './client';
import { asArray, asObject, asOptionalObject, badShape, optionalUsageCount, usageCount, type Json } from './shape';
import { SseDataReader } from './sse';

/** The request field that carries the frozen output bound (the entry's `maxTokensField`). */
export type MaxTokensField = 'max_tokens' | 'max_completion_tokens';

/** Own connection settings, or the client shared with the entry's other adapters; and the output bound's field (default max_tokens). */
export type OpenAiChatProviderOptions = OpenAiAdapterOptions & { maxTokensField?: MaxTokensField };

export class OpenAiChatProvider extends OpenAiAdapter implements ChatProvider {
  private readonly maxTokensField: MaxTokensField;

  constructor(options: OpenAiChatProviderOptions) {
    super(options);
    this.maxTokensField = options.maxTokensField ?? 'max_tokens';
  }

  async complete(call: ChatCall): Promise<ChatCompletion> {
    const { stream: _s, stream_options: _o, ...passthrough } = call.passthrough;
    const payload = { ...passthrough, model: call.upstreamModel, messages: call.messages, [this.maxTokensField]: call.maxTokens };
    const { body } = await this.client.post('/chat/completions', payload, call.signal, 'json');
    call.answered?.();
    const json = await readJsonObject(body, call.signal);
    const choice = asObject(asArray(json.choices, 'choices')[0], 'choices[0]');
    const message = asObject(choice.message, 'choices[0].message');
    const completion: ChatCompletion = {
      id: typeof json.id === 'string' ? json.id : '',
      content: typeof message.content === 'string' ? message.content : '',
      finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : 'stop',
      usage: toUsage(json.usage) ?? badShape('usage'),
      created: typeof json.created === 'number' ? json.created : Math.floor(Date.now() / 1000),
      // The message whole, as a stream's chunks are relayed whole: tool calls, a refusal, …
      message,
    };
    if (choice.logprobs !== undefined && choice.logprobs !== null) completion.logprobs = choice.logprobs;
    if (typeof json.system_fingerprint === 'string') completion.systemFingerprint = json.system_fingerprint;
    return completion;
  }

  async stream(call: ChatCall): Promise<AsyncIterable<ChatStreamChunk>> {
    const options = asOptionalObject(call.passthrough.stream_options);
    const request = {
      ...call.passthrough,
      model: call.upstreamModel,
      messages: call.messages,
      [this.maxTokensField]: call.maxTokens,
      stream: true,
      stream_options: { ...options, include_usage: true },
    };
    const { statusCode, headers, body } = await this.client.post('/chat/completions', request, call.signal, 'sse');
    const type = headers['content-type'];
    if (typeof type === 'string' && !type.includes('text/event-stream')) {
      cancel(body);
      throw new ProviderError('protocol', `${this.name} answered a stream with content-type ${type}`, statusCode);
    }
    return cancellable(body, readChunks(body, call.signal));
  }
}

async function* readChunks(body: ResponseBody, signal: AbortSignal): AsyncGenerator<ChatStreamChunk> {
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
    // Once the answer finished, the connection failing after it (broken before [DONE], the call's
    // deadline, the client gone) takes nothing from it: it ends whole, as when the body ends
    // cleanly there. What the upstream sends after it still counts (an error, a usage no call
    // can have): the stream fails as before.
    if (!finished || error instanceof ProviderError) throw failedRead(error, signal);
  } finally {
    // After [DONE] only the end of the body is left: read it so the socket is reused.
    // Otherwise the consumer stopped early or the stream broke: cancel the upstream.
    if (done) void drainFinished(body, bytes);
    else cancel(body);
  }
  // A clean end without [DONE] is a cut stream unless the answer had already finished.
  if (!finished) throw new ProviderError('protocol', 'stream ended before the answer finished');
}


/** Destroys the body when the consumer gives up, even before its first next(). */
function cancellable(body: ResponseBody, chunks: AsyncGenerator<ChatStreamChunk>): AsyncIterable<ChatStreamChunk> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => chunks.next(),
      return: (value?: unknown) => {
        cancel(body);
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
  // An error sent in the stream (OpenAI-compatible servers do, on a failure after the 200): the
  // provider failed, before or after output. Its words stay in the log, never in the relay.
  const error = asOptionalObject(chunk.error);
  if (error && !Array.isArray(chunk.choices)) {
    const message = typeof error.message === 'string' ? error.message : 'no message';
    throw new ProviderError('unavailable', `upstream stream error: ${message.slice(0, 500)}`);
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

/** The usage object OpenAI would write for `usage` (the cached part of the prompt in its details). */
export function openAiUsageJson(usage: TokenUsage): Json {
  const { inputTokens, outputTokens } = usage;
  const json: Json = { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
  if (usage.cacheReadTokens) json.prompt_tokens_details = { cached_tokens: usage.cacheReadTokens };
  if (usage.reasoningTokens) json.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return json;
}

/**
 * OpenAI's usage: `prompt_tokens` counts every prompt token, `prompt_tokens_details.cached_tokens`
 * the part read from the prompt cache (OpenAI bills no cache writes); `completion_tokens` every
 * output token, `completion_tokens_details.reasoning_tokens` the reasoning part of it.
 */
function toUsage(value: unknown): TokenUsage | undefined {
  const usage = asOptionalObject(value);
  const input = usage?.prompt_tokens;
  const output = usage?.completion_tokens;
  if (typeof input !== 'number' || typeof output !== 'number') {
    // A count sent as anything but a number ("5") is a malformed answer, never read as no usage:
    // a stream's usage chunk was then relayed as a piece of output and the stream ended clean.
    optionalUsageCount(input, 'usage.prompt_tokens');
    optionalUsageCount(output, 'usage.completion_tokens');
    return undefined;
  }
  usageCount(input, 'usage.prompt_tokens');
  usageCount(output, 'usage.completion_tokens');
  const cached = asOptionalObject(usage?.prompt_tokens_details)?.cached_tokens;
  const reasoning = asOptionalObject(usage?.completion_tokens_details)?.reasoning_tokens;
  const counted = withCacheCounts({ inputTokens: input, outputTokens: output }, Math.min(optionalUsageCount(cached, 'usage.prompt_tokens_details.cached_tokens'), input), 0, 0);
  const reasoned = optionalUsageCount(reasoning, 'usage.completion_tokens_details.reasoning_tokens');
  return reasoned > 0 ? { ...counted, reasoningTokens: Math.min(reasoned, output) } : counted;
}
