// Prompt counts off the event loop (providers/tokenizer-thread.ts), as the built gateway runs them:
// the same count as on the calling thread, while the event loop goes on; and a count the worker
// cannot finish is still made.

/* eslint-disable @typescript-eslint/no-require-imports */
const { countChatPromptOffThread, countsOffThread, stopTokenizerThread } = require('../../dist/providers/tokenizer-thread') as typeof import('../../providers/tokenizer-thread');
const { countChatPrompt } = require('../../dist/providers/tokenizer') as typeof import('../../providers/tokenizer');

/** Text that merges badly: 120,000 CJK characters in no word's order (about 0.3 s of the tokenizer). */
const badly = Array.from({ length: 120_000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20_000))).join('');
const badPrompt = [{ role: 'system', content: 'You count.' }, { role: 'user', content: [{ type: 'text', text: badly }, { type: 'image_url', image_url: { url: 'data:,' } }], name: 'reader' }];

/** The longest the event loop went without running a 5 ms timer while `work` ran, and its result. */
async function longestStall<T>(work: () => Promise<T> | T): Promise<{ stall: number; took: number; result: T }> {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 5);
  const start = performance.now();
  // A turn first, so the timer runs once before the work.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const result = await work();
  const took = performance.now() - start;
  await new Promise((resolve) => setTimeout(resolve, 20));
  clearInterval(timer);
  return { stall: Math.max(stall, performance.now() - last), took, result };
}

afterAll(() => stopTokenizerThread());

describe('prompt counts off the event loop', () => {
  it('when the build runs, then a count is made on the worker thread: the same count, and the event loop is not held while it is made', async () => {
    expect(countsOffThread()).toBe(true);
    // Warm: each thread loads its encoding on its first count.
    countChatPrompt('o200k_base', [{ role: 'user', content: 'hello' }]);
    const onThread = await longestStall(() => countChatPrompt('o200k_base', badPrompt));
    await countChatPromptOffThread('o200k_base', [{ role: 'user', content: 'hello' }]);
    const offThread = await longestStall(() => countChatPromptOffThread('o200k_base', badPrompt));
    expect(offThread.result).toBe(onThread.result);
    expect(onThread.stall).toBeGreaterThan(150);
    expect(offThread.stall).toBeLessThan(onThread.stall / 2);
  });

  it('when several counts are asked at once, then each gets its own count', async () => {
    const asked = ['one', 'two words', badly.slice(0, 5000), 'three little words'].map((text) => [{ role: 'user', content: text }]);
    const counts = await Promise.all(asked.flatMap((messages) => (['o200k_base', 'cl100k_base'] as const).map((name) => countChatPromptOffThread(name, messages))));
    expect(counts).toEqual(asked.flatMap((messages) => (['o200k_base', 'cl100k_base'] as const).map((name) => countChatPrompt(name, messages))));
  });

  it('when the worker ends while it counts, then the count is made on the calling thread, and the next count starts a new worker', async () => {
    const messages = [{ role: 'user', content: badly.slice(0, 20_000) }];
    const expected = countChatPrompt('cl100k_base', messages);
    const counting = countChatPromptOffThread('cl100k_base', messages);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await stopTokenizerThread();
    expect(await counting).toBe(expected);
    expect(await countChatPromptOffThread('cl100k_base', messages)).toBe(expected);
  });
});
