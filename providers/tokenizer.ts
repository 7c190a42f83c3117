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

import { mergedParts } from './bpe-merge';
import type { ChatMessage } from './port';

export const TOKENIZERS = ['o200k_base', 'cl100k_base'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];

type Encoding = typeof import('gpt-tokenizer/cjs/model/gpt-4o');

/** A model of each encoding whose chat framing gpt-tokenizer knows (both frame chats alike). */
const MODEL_OF: Record<TokenizerName, string> = { o200k_base: 'gpt-4o', cl100k_base: 'gpt-4' };
const loaded = new Map<TokenizerName, Encoding>();

/** No special token is recognised in a customer's text: all of it is encoded as ordinary text. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** What of gpt-tokenizer's byte-pair core the gateway replaces (its own methods, by these names). */
interface BytePairCore {
  bytePairMerge(piece: Uint8Array): number[];
  bytePairEncode(input: string): number[];
  getBpeRankFromBytes(key: Uint8Array): number | undefined;
  getBpeRankFromBytesOrThrow(key: Uint8Array): number;
  textEncoder: TextEncoder;
}

/** Up to this many bytes a piece is merged by the library's own loop: quadratic, but cheaper than a heap at this size. */
const SHORT_PIECE_BYTES = 64;
/** Where the library's own merge is kept once replaced (the library is loaded once per process). */
const REPLACED = Symbol.for('payg.libraryBytePairMerge');
/** Pieces longer than this are merged without the library's merge cache: its keys are the pieces, kept (100,000 of them) for good. */
const CACHED_PIECE_CHARS = 256;

/**
 * gpt-tokenizer's merge, replaced by one that gives the same tokens in O(n log n) (./bpe-merge.ts):
 * a prompt of one long word took seconds to minutes to count, on the event loop, and counting is
 * free (POST /v1/messages/count_tokens). Long pieces also skip the library's merge cache, which
 * would keep each of them as a key. Returns the library's own merge (tests compare the two).
 */
export function replaceLibraryMerge(): (this: BytePairCore, piece: Uint8Array) => number[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const core = (require('gpt-tokenizer/cjs/BytePairEncodingCore') as { BytePairEncodingCore: { prototype: BytePairCore & { [REPLACED]?: (piece: Uint8Array) => number[] } } }).BytePairEncodingCore.prototype;
  const replaced = core[REPLACED];
  if (replaced) return replaced;
  const libraryMerge = core.bytePairMerge;
  const libraryEncode = core.bytePairEncode;
  core[REPLACED] = libraryMerge;
  core.bytePairMerge = function bytePairMerge(this: BytePairCore, piece: Uint8Array): number[] {
    // A short piece is merged faster by the library's own loop (no heap to build).
    if (piece.length <= SHORT_PIECE_BYTES) return libraryMerge.call(this, piece);
    const starts = mergedParts(piece, (bytes) => this.getBpeRankFromBytes(bytes));
    const tokens: number[] = [];
    for (let i = 0; i + 1 < starts.length; i++) tokens.push(this.getBpeRankFromBytesOrThrow(piece.subarray(starts[i], starts[i + 1])));
    return tokens;
  };
  core.bytePairEncode = function bytePairEncode(this: BytePairCore, input: string): number[] {
    return input.length > CACHED_PIECE_CHARS ? this.bytePairMerge(this.textEncoder.encode(input)) : libraryEncode.call(this, input);
  };
  return libraryMerge;
}

function encoding(name: TokenizerName): Encoding {
  let found = loaded.get(name);
  if (!found) {
    replaceLibraryMerge();
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

/**
 * The most characters of text a prompt count runs the tokenizer over. The library takes 1–4 µs a
 * character on text that is not common words (base64, random letters, one long run): 1 MB of
 * base64 held the event loop for 2–16 s, and counting is free. Past it the text is bounded from
 * below instead (countChatPrompt).
 */
export const MAX_TOKENIZED_CHARS = 128 * 1024;

/**
 * The most bytes one token of either encoding stands for (o200k_base and cl100k_base alike: a run
 * of 128 spaces).
 */
export const LONGEST_TOKEN_BYTES = 128;

/** Each encoding's split of a text into the pieces it merges one by one (the library's own). */
function splitOf(name: TokenizerName): RegExp {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const split = require('gpt-tokenizer/cjs/encodingParams/constants') as { O200K_TOKEN_SPLIT_REGEX: RegExp; CL100K_TOKEN_SPLIT_REGEX: RegExp };
  return name === 'o200k_base' ? split.O200K_TOKEN_SPLIT_REGEX : split.CL100K_TOKEN_SPLIT_REGEX;
}

/** The most characters of a prompt split into pieces (tens of milliseconds); past them, bytes / 128 (a body may be 32 MiB). */
export const MAX_SPLIT_CHARS = 1024 * 1024;

/**
 * The fewest tokens a text can be, without merging it: the encoding splits it into pieces (words,
 * runs of spaces, of digits…) and merges each apart, and a piece of B bytes is at least one token
 * and at least ceil(B / LONGEST_TOKEN_BYTES). Exact on plain prose. Once `budget.chars` is spent,
 * the rest of the text (whole pieces) counts ceil(its bytes / LONGEST_TOKEN_BYTES).
 */
function fewestTokens(name: TokenizerName, text: string, budget: { chars: number }): number {
  let tokens = 0;
  let at = 0;
  for (const [piece] of text.matchAll(splitOf(name))) {
    if (budget.chars <= 0) break;
    budget.chars -= piece.length;
    at += piece.length;
    // A UTF-16 unit is at most 3 bytes of UTF-8: a piece of up to 42 of them is one token at least, and no more is known.
    tokens += piece.length * 3 <= LONGEST_TOKEN_BYTES ? 1 : Math.max(1, Math.ceil(Buffer.byteLength(piece, 'utf8') / LONGEST_TOKEN_BYTES));
  }
  return at < text.length ? tokens + Math.ceil(Buffer.byteLength(text.slice(at), 'utf8') / LONGEST_TOKEN_BYTES) : tokens;
}

/**
 * The prompt tokens an OpenAI upstream counts for these messages, text only (never more than it
 * bills). Past MAX_TOKENIZED_CHARS of text the text is not merged: each message's text and name
 * count the fewest tokens they can be (fewestTokens), the framing as tokenized, so the count stays
 * at most the provider's (a quarter of the bytes does not: 140,000 spaces are 1,095 tokens, not 35,000).
 */
export function countChatPrompt(tokenizer: TokenizerName, messages: readonly ChatMessage[]): number {
  const contents = messages.map((message) => textOf(message.content));
  let chars = 0;
  messages.forEach((message, i) => (chars += contents[i].length + (typeof message.name === 'string' ? message.name.length : 0)));
  const tokens = encoding(tokenizer);
  const long = chars > MAX_TOKENIZED_CHARS;
  const budget = { chars: MAX_SPLIT_CHARS };
  const count = (text: string) => (long ? fewestTokens(tokenizer, text, budget) : tokens.countTokens(text, AS_TEXT));
  let names = 0;
  let texts = 0;
  const chat = messages.map((message, i) => {
    if (typeof message.name === 'string') names += count(message.name) + 1;
    if (long) texts += fewestTokens(tokenizer, contents[i], budget);
    return { role: message.role as 'system' | 'user' | 'assistant', content: long ? '' : contents[i] };
  });
  return tokens.countTokens(chat, AS_TEXT) + names + texts;
}

/**
 * What a prompt count reads of the messages: each one's role, text and name, nothing else (image
 * parts, tool calls…), so that it can be handed to another thread cheaply. Counts the same.
 */
export function countedMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => (typeof message.name === 'string' ? { role: message.role, content: textOf(message.content), name: message.name } : { role: message.role, content: textOf(message.content) }));
}

/** The tokens of a text alone, no framing. */
export function countText(tokenizer: TokenizerName, text: string): number {
  return encoding(tokenizer).countTokens(text, AS_TEXT);
}
