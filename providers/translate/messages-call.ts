// An Anthropic Messages request served by an OpenAI chat-completions profile. Only what
// OpenAI can be asked with the same meaning is translated; anything else is refused with
// InexactTranslationError naming the field (see docs/providers.md for the rules and why).

import type { ChatCall, ChatMessage, MessagesCall } from '../port';
import { inexact } from './errors';
import { isSet, onlyType, textBlock, textBlocks, unitInterval } from './text';

/** Fields the gateway owns: the frozen maxTokens and the call method replace them. */
const GATEWAY_OWNED = new Set(['model', 'max_tokens', 'stream']);

export function messagesCallToChatCall(call: MessagesCall): ChatCall {
  const { messages, system, ...rest } = call.body;
  const translated: ChatCall = {
    upstreamModel: call.upstreamModel,
    messages: [...systemMessages(system), ...turns(messages)],
    maxTokens: call.maxTokens,
    passthrough: params(rest),
    signal: call.signal,
  };
  if (call.directives) translated.directives = call.directives;
  return translated;
}

/** One leading system message: a string as it is, text blocks as text parts. */
function systemMessages(system: unknown): ChatMessage[] {
  if (!isSet(system)) return [];
  if (typeof system === 'string') return [{ role: 'system', content: system }];
  if (!Array.isArray(system)) return inexact('system', 'system is neither text nor a list of text blocks');
  return [{ role: 'system', content: system.map((block, j) => textBlock(block, `system[${j}]`, 'OpenAI')) }];
}

function turns(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages)) return inexact('messages', 'messages is not a list');
  const translated: ChatMessage[] = [];
  messages.forEach((message: unknown, i) => {
    const at = `messages[${i}]`;
    const fields = typeof message === 'object' && message !== null ? (message as Record<string, unknown>) : {};
    const role = fields.role;
    if (role !== 'user' && role !== 'assistant') inexact(`${at}.role`, `${at} has role ${JSON.stringify(role)}, which OpenAI has no exact equivalent for`);
    // Anthropic merges consecutive turns of one role into one: OpenAI would see two.
    if (translated.at(-1)?.role === role) inexact(`${at}.role`, `${at} follows another ${role} message, which Anthropic merges into one turn and OpenAI would not`);
    for (const [key, value] of Object.entries(fields)) {
      if (key !== 'role' && key !== 'content' && isSet(value)) inexact(`${at}.${key}`, `${at}.${key} has no exact OpenAI equivalent`);
    }
    // OpenAI's text parts are written as Anthropic's text blocks are.
    translated.push({ role, content: typeof fields.content === 'string' ? fields.content : textBlocks(fields.content, at, 'OpenAI') });
  });
  // A last assistant turn is a prefill on Anthropic, continued by the answer; OpenAI would answer after it.
  if (translated.at(-1)?.role === 'assistant') inexact(`messages[${messages.length - 1}].role`, 'the conversation ends with an assistant message (a prefill), which OpenAI would not continue');
  return translated;
}

function params(body: Record<string, unknown>): Record<string, unknown> {
  const passthrough: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!isSet(value) || GATEWAY_OWNED.has(key)) continue;
    // Thinking turned off asks for what an OpenAI chat call does anyway: dropped, as if absent.
    if (key === 'thinking' && onlyType(value, 'disabled')) continue;
    switch (key) {
      case 'temperature':
        // Anthropic's 0–1 lies within OpenAI's 0–2, where the same number means the same.
        passthrough.temperature = unitInterval(key, value);
        break;
      case 'top_p':
        passthrough.top_p = unitInterval(key, value);
        break;
      case 'stop_sequences':
        // OpenAI stops on them but never says which one matched, so the answer could not carry
        // Anthropic's stop_reason "stop_sequence" and stop_sequence: only an empty list is exact.
        if (!Array.isArray(value) || value.length > 0) inexact(key, 'stop_sequences cannot be reported back exactly (OpenAI does not say which sequence stopped the answer)');
        break;
      case 'metadata':
        Object.assign(passthrough, metadata(value));
        break;
      default:
        inexact(key, `${key} has no exact OpenAI equivalent`);
    }
  }
  return passthrough;
}

/** metadata.user_id is OpenAI's `user`; Anthropic defines no other metadata field. */
function metadata(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return inexact('metadata', 'metadata is not an object');
  const translated: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!isSet(field)) continue;
    if (key !== 'user_id') inexact(`metadata.${key}`, `metadata.${key} has no exact OpenAI equivalent`);
    if (typeof field !== 'string') inexact('metadata.user_id', 'metadata.user_id is not a string');
    translated.user = field;
  }
  return translated;
}
