import { chatIdOf, messageIdOf, translatedStream } from './stream';

/** A source that counts its next() and return() calls; next() waits for `release` when given. */
function source(items: number[], release?: Promise<void>) {
  const seen = { next: 0, return: 0 };
  let i = 0;
  const iterator: AsyncIterator<number> = {
    next: async () => {
      seen.next++;
      if (release) await release;
      return i < items.length ? { value: items[i++], done: false } : { value: undefined, done: true };
    },
    return: async () => {
      seen.return++;
      i = items.length;
      return { value: undefined, done: true };
    },
  };
  return { seen, iterable: { [Symbol.asyncIterator]: () => iterator } };
}

async function* doubled(items: AsyncIterable<number>): AsyncGenerator<number, void, undefined> {
  for await (const n of items) yield n * 2;
}

describe('translatedStream', () => {
  it('when read to the end, then every item is translated in order', async () => {
    const { iterable } = source([1, 2, 3]);
    const out: number[] = [];
    for await (const n of translatedStream(iterable, doubled)) out.push(n);
    expect(out).toEqual([2, 4, 6]);
  });

  it('when the consumer breaks off, then the source is returned', async () => {
    const { iterable, seen } = source([1, 2, 3]);
    for await (const n of translatedStream(iterable, doubled)) if (n === 2) break;
    expect(seen.return).toBeGreaterThanOrEqual(1);
  });

  it('when the consumer returns before its first next(), then the source is returned all the same', async () => {
    const { iterable, seen } = source([1, 2, 3]);
    await expect(translatedStream(iterable, doubled)[Symbol.asyncIterator]().return?.()).resolves.toEqual({ value: undefined, done: true });
    expect([seen.next, seen.return]).toEqual([0, 1]);
  });

  it('when the consumer returns while a next() is pending, then the source hears of it at once', async () => {
    let release = (): void => undefined;
    const { iterable, seen } = source([1, 2], new Promise<void>((resolve) => (release = resolve)));
    const iterator = translatedStream(iterable, doubled)[Symbol.asyncIterator]();
    const pending = iterator.next();
    const returning = iterator.return?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.return).toBe(1);
    release();
    await pending;
    await expect(returning).resolves.toMatchObject({ done: true });
  });

  it('when the source\'s return fails, then giving up still succeeds', async () => {
    const iterable = { [Symbol.asyncIterator]: (): AsyncIterator<number> => ({ next: async () => ({ value: 1, done: false }), return: async () => Promise.reject(new Error('already gone')) }) };
    await expect(translatedStream(iterable, doubled)[Symbol.asyncIterator]().return?.()).resolves.toMatchObject({ done: true });
  });
});

describe('ids', () => {
  it('when an id crosses the wires, then its own part is kept and the prefix swapped', () => {
    expect([chatIdOf('msg_01abc'), messageIdOf('chatcmpl-xyz'), chatIdOf('odd'), messageIdOf('odd')]).toEqual(['chatcmpl-01abc', 'msg_xyz', 'chatcmpl-odd', 'msg_odd']);
  });
});
