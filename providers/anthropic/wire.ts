// The Anthropic Messages wire as the adapters read and write it: the usage object, the
// stream's error event, and the events of a one-text-block answer (the only answer the
// simulated provider and the chat-to-messages translation ever produce).

import { ProviderError, uncachedInput, withCacheCounts, type MessagesStreamEvent, type TokenUsage } from '../port';
import { asOptionalObject, optionalUsageCount, usageCount, type Json } from '../openai/shape';

/**
 * Anthropic counts cached prompt tokens apart from `input_tokens`: `cache_read_input_tokens`
 * (read from the prompt cache) and `cache_creation_input_tokens` (written to it; split by
 * lifetime in `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens` when
 * present, else all of the default lifetime). All of them were read by the model: the gateway's
 * input is their sum, with the cache counts beside it. Undefined when input_tokens or
 * output_tokens is missing.
 */
export function anthropicUsage(value: unknown): TokenUsage | undefined {
  const usage = asOptionalObject(value);
  const output = usage?.output_tokens;
  const input = anthropicInput(usage);
  if (input === undefined || typeof output !== 'number') return undefined;
  return { ...input, outputTokens: usageCount(output, 'usage.output_tokens') };
}

/** The prompt counts of a usage object (null or absent cache counts: none); undefined without input_tokens. */
export function anthropicInput(usage: Json | undefined): Omit<TokenUsage, 'outputTokens'> | undefined {
  const uncached = usage?.input_tokens;
  if (typeof uncached !== 'number') return undefined;
  usageCount(uncached, 'usage.input_tokens');
  const read = optionalUsageCount(usage?.cache_read_input_tokens, 'usage.cache_read_input_tokens');
  const split = asOptionalObject(usage?.cache_creation);
  const write1h = optionalUsageCount(split?.ephemeral_1h_input_tokens, 'usage.cache_creation.ephemeral_1h_input_tokens');
  const written = Math.max(optionalUsageCount(usage?.cache_creation_input_tokens, 'usage.cache_creation_input_tokens'), optionalUsageCount(split?.ephemeral_5m_input_tokens, 'usage.cache_creation.ephemeral_5m_input_tokens') + write1h);
  return withCacheCounts({ inputTokens: uncached + read + written }, read, written - write1h, write1h);
}

/** The usage object Anthropic would write for `usage`: the uncached prompt apart from the cache counts. */
export function anthropicUsageJson(usage: TokenUsage): Json {
  const json: Json = { input_tokens: uncachedInput(usage), output_tokens: usage.outputTokens };
  const written = (usage.cacheWriteTokens ?? 0) + (usage.cacheWrite1hTokens ?? 0);
  if (written > 0) {
    json.cache_creation_input_tokens = written;
    json.cache_creation = { ephemeral_5m_input_tokens: usage.cacheWriteTokens ?? 0, ephemeral_1h_input_tokens: usage.cacheWrite1hTokens ?? 0 };
  }
  if (usage.cacheReadTokens) json.cache_read_input_tokens = usage.cacheReadTokens;
  return json;
}


/**
 * An `error` event in the middle of a stream. Anthropic sends it for its own failures
 * (overloaded, api_error), which a retry may not hit: 'unavailable'; anything else says the
 * stream itself went wrong: 'protocol'.
 */
export function streamError(data: Json): ProviderError {
  const error = asOptionalObject(data.error);
  const type = typeof error?.type === 'string' ? error.type : 'unknown_error';
  const message = typeof error?.message === 'string' ? error.message : 'no message';
  const kind = type === 'overloaded_error' || type === 'api_error' ? 'unavailable' : 'protocol';
  // The type is Anthropic's closed vocabulary, fit for the customer; its message stays in the log.
  return new ProviderError(kind, `upstream stream error ${type}: ${message}`, undefined, undefined, /^[a-z_]{1,64}$/.test(type) ? { detail: `the provider reported ${type}` } : {});
}

/** A finished assistant message holding one text block. */
export function textMessage(id: string, model: string, text: string, stopReason: string, usage: Json): Json {
  return { id, type: 'message', role: 'assistant', model, content: [{ type: 'text', text }], stop_reason: stopReason, stop_sequence: null, usage };
}

// ---- The events of a one-text-block stream, in their order ----------------------------------

export function messageStart(id: string, model: string, usage: Json, known?: TokenUsage): MessagesStreamEvent {
  const message = { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage };
  return withUsage({ event: 'message_start', data: { type: 'message_start', message }, outputDelta: '' }, known);
}

export function textBlockStart(): MessagesStreamEvent {
  return { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, outputDelta: '' };
}

export function ping(): MessagesStreamEvent {
  return { event: 'ping', data: { type: 'ping' }, outputDelta: '' };
}

export function textDelta(text: string): MessagesStreamEvent {
  return { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, outputDelta: text };
}

export function textBlockStop(): MessagesStreamEvent {
  return { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 }, outputDelta: '' };
}

export function messageDelta(stopReason: string, usage: Json, known?: TokenUsage): MessagesStreamEvent {
  const data = { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage };
  return withUsage({ event: 'message_delta', data, outputDelta: '' }, known);
}

export function messageStop(): MessagesStreamEvent {
  return { event: 'message_stop', data: { type: 'message_stop' }, outputDelta: '' };
}

function withUsage(event: MessagesStreamEvent, usage: TokenUsage | undefined): MessagesStreamEvent {
  return usage ? { ...event, usage } : event;
}
