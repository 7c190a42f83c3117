import { countChatPrompt, countText } from './tokenizer';

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
