// The prompt count of an OpenAI chat-completions call, by the tokenizer of the upstream's model
// (gpt-tokenizer, a pure-JS port of OpenAI's tiktoken encodings), for a stream cut before the
// provider said its own count (docs/money.md, "A cut stream"). The chat framing is OpenAI's:
// each message costs its role, its text and three tokens, and the answer's priming three
// (gpt-tokenizer's chat encoding); a message's name costs its tokens and one more (added here:
// the library's chat encoding leaves names out).
//
// Only text is counted: image, audio and file parts, tool definitions and tool calls are not, so
// the count never exceeds what the provider bills for the same prompt. Text that spells a special
// token (`<|endoftext|>`, `<|im_start|>`…) is counted as the plain text it is, as OpenAI reads a
// customer's words: the library's default refuses such text with an exception. An encoding is
// loaded on its first use (≈ 0.1 s and 30 MB of heap), never at start-up.

import type { ChatMessage } from './port';

export const TOKENIZERS = ['o200k_base', 'cl100k_base'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];

type Encoding = typeof import('gpt-tokenizer/cjs/model/gpt-4o');

/** A model of each encoding whose chat framing gpt-tokenizer knows (both frame chats alike). */
const MODEL_OF: Record<TokenizerName, string> = { o200k_base: 'gpt-4o', cl100k_base: 'gpt-4' };
const loaded = new Map<TokenizerName, Encoding>();

/** No special token is recognised in a customer's text: all of it is encoded as ordinary text. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

function encoding(name: TokenizerName): Encoding {
  let found = loaded.get(name);
  if (!found) {
    // Loaded on demand: a require, not an import, so that start-up does not pay for it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    found = require(`gpt-tokenizer/cjs/model/${MODEL_OF[name]}`) as Encoding;
    loaded.set(name, found);
  }
  return found;
}

/** The text of a message's content: a string, or the text parts of a list of parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'text' && typeof (part as { text?: unknown }).text === 'string') text += (part as { text: string }).text;
  }
  return text;
}

/** The prompt tokens an OpenAI upstream counts for these messages, text only (never more than it bills). */
export function countChatPrompt(tokenizer: TokenizerName, messages: readonly ChatMessage[]): number {
  const tokens = encoding(tokenizer);
  let names = 0;
  const chat = messages.map((message) => {
    if (typeof message.name === 'string') names += tokens.countTokens(message.name, AS_TEXT) + 1;
    return { role: message.role as 'system' | 'user' | 'assistant', content: textOf(message.content) };
  });
  return tokens.countTokens(chat, AS_TEXT) + names;
}

/** The tokens of a text alone, no framing. */
export function countText(tokenizer: TokenizerName, text: string): number {
  return encoding(tokenizer).countTokens(text, AS_TEXT);
}
