import { randomBytes, randomInt } from 'node:crypto';
import { countChatPrompt, countText, LONGEST_TOKEN_BYTES, MAX_SPLIT_CHARS, MAX_TOKENIZED_CHARS, replaceLibraryMerge } from './tokenizer';

// Counts checked against OpenAI's own: a chat of one user message "hello" is billed 8 prompt
// tokens by gpt-4o and gpt-4 (3 per message + role + text + 3 of priming).
describe('the prompt count of a cut stream, by tokenizer', () => {
  it('when a chat is counted, then it is the text plus OpenAI\'s framing, on both encodings', () => {
    expect(countChatPrompt('o200k_base', [{ role: 'user', content: 'hello' }])).toBe(8);
    expect(countChatPrompt('cl100k_base', [{ role: 'user', content: 'hello' }])).toBe(8);
    const two = [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'hello' }];
    expect(countChatPrompt('o200k_base', two)).toBe(8 + 4 + countText('o200k_base', 'You are a helpful assistant.'));
    expect(countChatPrompt('o200k_base', two)).toBe(18);
  });

  it('when a name is given, then it costs its tokens and one more', () => {
    const named = countChatPrompt('o200k_base', [{ role: 'user', content: 'hello', name: 'ada' }]);
    expect(named).toBe(8 + countText('o200k_base', 'ada') + 1);
  });

  it('when content is a list of parts, then only the text parts are counted (never more than billed)', () => {
    const parts = [{ type: 'text', text: 'hello' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }];
    expect(countChatPrompt('o200k_base', [{ role: 'user', content: parts }])).toBe(8);
    expect(countChatPrompt('o200k_base', [{ role: 'assistant', content: null, tool_calls: [{ id: 'c' }] }])).toBe(4 + 3);
  });

  it('when the two encodings count the same non-English text, then they differ as the encodings do', () => {
    const text = 'こんにちは世界、今日はいい天気ですね';
    expect(countText('o200k_base', text)).toBeLessThan(countText('cl100k_base', text));
  });

  it('when the text spells a special token, then it is counted as the plain text it is, never refused', () => {
    for (const tokenizer of ['o200k_base', 'cl100k_base'] as const) {
      for (const special of ['<|endoftext|>', '<|im_start|>', '<|fim_prefix|>']) {
        const counted = countChatPrompt(tokenizer, [{ role: 'user', content: `say ${special} please`, name: special }]);
        // Its characters as ordinary text: more than the one token the special token would be.
        expect(counted).toBe(8 - 1 + countText(tokenizer, `say ${special} please`) + countText(tokenizer, special) + 1);
        expect(countText(tokenizer, special)).toBeGreaterThan(1);
      }
    }
  });
});

describe('the byte-pair merge (one long piece of text)', () => {
  it('when a prompt is one long word, a long run of spaces or a long CJK sentence, then it is counted in well under a second (seconds before, minutes for longer ones, on the event loop)', () => {
    countText('o200k_base', 'x');
    // Before: 4, 4.5 and 3 s.
    for (const text of ['a'.repeat(60_000), ' '.repeat(80_000), '\u4e00'.repeat(20_000)]) {
      const started = performance.now();
      expect(countChatPrompt('o200k_base', [{ role: 'user', content: text }])).toBeGreaterThan(7);
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });

  it('when a prompt\'s text is longer than the tokenizer is run over (1 MB of base64), then it is bounded from below, at once; at the limit it is counted', () => {
    const base64 = randomBytes(750_000).toString('base64');
    countText('o200k_base', 'x');
    const started = performance.now();
    const bound = countChatPrompt('o200k_base', [{ role: 'user', content: base64 }]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(bound).toBeGreaterThan(base64.length / 4);
    expect(bound).toBeLessThanOrEqual(countText('o200k_base', base64.slice(0, 500_000)) * 2 + 10);
    const atLimit = countChatPrompt('o200k_base', [{ role: 'system', content: 'x'.repeat(MAX_TOKENIZED_CHARS - 5) }, { role: 'user', content: 'hi', name: 'ada' }]);
    expect(atLimit).toBeGreaterThan(MAX_TOKENIZED_CHARS / LONGEST_TOKEN_BYTES + 8);
    expect(countChatPrompt('o200k_base', [{ role: 'system', content: 'x'.repeat(MAX_TOKENIZED_CHARS - 5) }, { role: 'user', content: 'hi!', name: 'ada' }])).toBeLessThan(atLimit);
  });

  it('when a prompt longer than the limit is counted without merging, then it never exceeds what the tokenizer, and so the provider, counts; plain prose exactly', () => {
    const prose = 'The quick brown fox jumps over the lazy dog, then it runs away. '.repeat(2_200);
    for (const tokenizer of ['o200k_base', 'cl100k_base'] as const) {
      for (const text of [' '.repeat(140_000), '\n'.repeat(140_000), '-'.repeat(140_000), 'a'.repeat(140_000), '我们今天去公园'.repeat(20_000), randomBytes(105_000).toString('base64'), prose]) {
        const messages = [{ role: 'system', content: 'be brief' }, { role: 'user', content: text, name: 'ada' }];
        const exact = countText(tokenizer, text) + countText(tokenizer, 'be brief') + countText(tokenizer, 'ada') + 1 + countChatPrompt(tokenizer, messages.map((m) => ({ role: m.role, content: '' })));
        expect(countChatPrompt(tokenizer, messages)).toBeLessThanOrEqual(exact);
        if (text === prose) expect(countChatPrompt(tokenizer, messages)).toBe(exact);
      }
    }
  });

  it('when a prompt is as long as a body may be (32 MiB of base64), then it is bounded at once: past MAX_SPLIT_CHARS the rest counts its bytes / 128', () => {
    const huge = randomBytes(24 * 1024 * 1024).toString('base64');
    countText('cl100k_base', 'x');
    const started = performance.now();
    const bound = countChatPrompt('cl100k_base', [{ role: 'user', content: huge }]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(bound).toBeGreaterThan(MAX_SPLIT_CHARS / 4 + (huge.length - MAX_SPLIT_CHARS) / LONGEST_TOKEN_BYTES);
    // Past the budget, still never above the tokenizer's count: prose of more than MAX_SPLIT_CHARS.
    const prose = 'The quick brown fox jumps over the lazy dog, then it runs away. '.repeat(Math.ceil((MAX_SPLIT_CHARS * 1.5) / 64));
    const split = countChatPrompt('cl100k_base', [{ role: 'user', content: prose }]);
    const exact = countText('cl100k_base', prose) + countChatPrompt('cl100k_base', [{ role: 'user', content: '' }]);
    expect(split).toBeLessThanOrEqual(exact);
    expect(split).toBeGreaterThan(exact / 2);
  });

  it('when any text is counted, then the tokens are those of the library\'s own merge, on both encodings', () => {
    countText('o200k_base', 'x');
    countText('cl100k_base', 'x');
    const libraryMerge = replaceLibraryMerge();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const core = (require('gpt-tokenizer/cjs/BytePairEncodingCore') as { BytePairEncodingCore: { prototype: { bytePairMerge(piece: Uint8Array): number[] } } }).BytePairEncodingCore.prototype;
    // The cores of both encodings, each compared on pieces of every kind.
    const cores: object[] = [];
    const spy = core.bytePairMerge;
    core.bytePairMerge = function (this: object, piece: Uint8Array) {
      if (!cores.includes(this)) cores.push(this);
      return spy.call(this, piece);
    };
    try {
      countText('o200k_base', 'zqxjvk-unmerged');
      countText('cl100k_base', 'zqxjvk-unmerged');
    } finally {
      core.bytePairMerge = spy;
    }
    expect(cores).toHaveLength(2);
    const alphabet = ['a', 'b', 'e', 'n', 't', 'th', 'in', ' ', '  ', 'é', 'ü', '\u4e00', '\u4e16', '\u3042', '\ud83c\udfa8', '-', '=', '0', '\t'];
    const encoder = new TextEncoder();
    for (let i = 0; i < 400; i++) {
      const piece = encoder.encode(Array.from({ length: randomInt(1, 120) }, () => alphabet[randomInt(alphabet.length)]).join(''));
      for (const encodingCore of cores) expect(spy.call(encodingCore, piece)).toEqual(libraryMerge.call(encodingCore as never, piece));
    }
  });
});
