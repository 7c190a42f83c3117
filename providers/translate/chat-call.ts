// An OpenAI chat-completions request served by an Anthropic Messages profile. Only what
// Anthropic can be asked with the same meaning is translated; anything else is refused with
// InexactTranslationError naming the field (see docs/providers.md for the rules and why).

import type { ChatCall, ChatMessage, MessagesCall } from '../port';
import { inexact } from './errors';
import { isSet, onlyType, textBlocks, unitInterval, type TextBlock } from './text';

/** Fields the gateway owns: the frozen maxTokens and the call method replace them. */
const GATEWAY_OWNED = new Set(['model', 'messages', 'max_tokens', 'max_completion_tokens', 'stream', 'stream_options']);

export function chatCallToMessagesCall(call: ChatCall): MessagesCall {
  const body = { ...conversation(call.messages), ...params(call.passthrough) };
  const translated: MessagesCall = { upstreamModel: call.upstreamModel, body, maxTokens: call.maxTokens, signal: call.signal };
  if (call.directives) translated.directives = call.directives;
  return translated;
}

interface Conversation {
  system?: string | TextBlock[];
  messages: Array<{ role: 'user' | 'assistant'; content: string | TextBlock[] }>;
}

function conversation(messages: ChatMessage[]): Conversation {
  const system: TextBlock[] = [];
  const turns: Conversation['messages'] = [];
  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    const role = message.role;
    if (role === 'system' || role === 'developer') {
      if (turns.length > 0) inexact(`${at}.role`, `${at} is a ${role} message after the conversation started, where Anthropic takes no system text`);
      onlyRoleAndContent(message, at);
      // An empty system text says nothing, and Anthropic refuses empty text blocks.
      system.push(...textBlocks(message.content, at, 'Anthropic').filter((block) => block.text !== ''));
      return;
    }
    if (role !== 'user' && role !== 'assistant') inexact(`${at}.role`, `${at} has role "${role}", which Anthropic has no exact equivalent for`);
    if (turns.length === 0 && role !== 'user') inexact(`${at}.role`, `the conversation starts with an ${role} message where Anthropic needs a user message`);
    // Anthropic merges consecutive turns of one role into one: not the same conversation.
    if (turns.at(-1)?.role === role) inexact(`${at}.role`, `${at} follows another ${role} message, which Anthropic would merge into one turn`);
    onlyRoleAndContent(message, at);
    turns.push({ role, content: turnContent(message.content, at) });
  });
  if (turns.length === 0) inexact('messages', 'the request has no user message, which Anthropic needs');
  // A last assistant turn is a prefill on Anthropic: the answer would continue it, not follow it.
  if (turns.at(-1)?.role === 'assistant') inexact(`messages[${messages.length - 1}].role`, 'the conversation ends with an assistant message, which Anthropic would continue instead of answering');
  const translated: Conversation = { messages: turns };
  if (system.length === 1) translated.system = system[0].text;
  else if (system.length > 1) translated.system = system;
  return translated;
}

/** name, tool_calls, tool_call_id, refusal, audio, function_call…: none exists on Anthropic's messages. */
function onlyRoleAndContent(message: ChatMessage, at: string): void {
  for (const [key, value] of Object.entries(message)) {
    if (key !== 'role' && key !== 'content' && isSet(value)) inexact(`${at}.${key}`, `${at}.${key} has no exact Anthropic equivalent`);
  }
}

/** A string stays a string, text parts become text blocks; Anthropic refuses empty text. */
function turnContent(content: unknown, at: string): string | TextBlock[] {
  if (typeof content === 'string') {
    if (content === '') inexact(`${at}.content`, `${at}.content is empty, which Anthropic refuses`);
    return content;
  }
  const blocks = textBlocks(content, at, 'Anthropic');
  blocks.forEach((block, j) => {
    if (block.text === '') inexact(`${at}.content[${j}]`, `${at}.content[${j}] is an empty text part, which Anthropic refuses`);
  });
  return blocks;
}

/**
 * Parameters set to the value OpenAI takes when they are left out: they ask for nothing Anthropic
 * does not already do (no penalty, no logprobs, plain text, nothing stored), so they are dropped
 * as exactly as an absent one. Clients that spell out every default send them.
 */
const OPENAI_DEFAULTS: Record<string, (value: unknown) => boolean> = {
  frequency_penalty: (value) => value === 0,
  presence_penalty: (value) => value === 0,
  logprobs: (value) => value === false,
  store: (value) => value === false,
  modalities: (value) => Array.isArray(value) && value.length === 1 && value[0] === 'text',
  response_format: (value) => onlyType(value, 'text'),
};

function params(passthrough: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(passthrough)) {
    // null is OpenAI's "not set"; the gateway's own fields are not request parameters here.
    if (!isSet(value) || GATEWAY_OWNED.has(key)) continue;
    if (OPENAI_DEFAULTS[key]?.(value)) continue;
    switch (key) {
      case 'temperature':
        // OpenAI's range is 0–2, Anthropic's 0–1: the same number means the same only within 0–1.
        body.temperature = unitInterval(key, value, "Anthropic's range");
        break;
      case 'top_p':
        body.top_p = unitInterval(key, value);
        break;
      case 'stop':
        body.stop_sequences = stopSequences(value);
        break;
      case 'user':
        if (typeof value !== 'string') inexact(key, 'user is not a string');
        body.metadata = { user_id: value };
        break;
      case 'n':
        if (value !== 1) inexact(key, `n ${JSON.stringify(value)} asks for several answers, which Anthropic gives one at a time`);
        break;
      default:
        inexact(key, `${key} has no exact Anthropic equivalent`);
    }
  }
  return body;
}

function stopSequences(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((s) => typeof s === 'string')) return value as string[];
  return inexact('stop', 'stop is neither a string nor a list of strings');
}
