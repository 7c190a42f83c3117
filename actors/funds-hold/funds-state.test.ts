import { MAX_ENDED_RANGES, mayHaveEnded, withEnded, type EndedCarves } from './funds-state';

/** Ends `numbers` in this order; undefined once the lease stopped counting. */
function endAll(numbers: readonly number[]): EndedCarves | undefined {
  let ended: EndedCarves | undefined = [];
  for (const n of numbers) ended = ended && withEnded(ended, n);
  return ended;
}

describe('the ended carve numbers a lease counts', () => {
  it('when carves end in any order, then exactly the ended numbers may have ended, and contiguous ones collapse into one range', () => {
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const order = Array.from({ length: 400 }, (_, i) => i).sort(() => random() - 0.5).slice(0, 300);
    let ended: EndedCarves | undefined = [];
    const model = new Set<number>();
    for (const n of order) {
      ended = withEnded(ended!, n);
      model.add(n);
      for (const probe of [n - 1, n, n + 1, 0, 399, 400]) expect(mayHaveEnded(ended, probe)).toBe(model.has(probe));
    }
    for (let n = 0; n < 420; n++) expect(mayHaveEnded(ended, n)).toBe(model.has(n));
    // Ended again: the same ranges.
    expect(withEnded(ended!, order[0])).toBe(ended);
    expect(endAll(Array.from({ length: 1000 }, (_, i) => 999 - i))).toEqual([0, 1000]);
  });

  it('when a carve never ends, then those after it are still one range; too many gaps and the lease stops counting', () => {
    expect(endAll([0, 2, 3, 4, 5, 7, 8])).toEqual([0, 1, 2, 6, 7, 9]);
    const gaps = Array.from({ length: MAX_ENDED_RANGES }, (_, i) => 2 * i);
    expect(endAll(gaps)).toHaveLength(2 * MAX_ENDED_RANGES);
    expect(endAll([...gaps, 2 * MAX_ENDED_RANGES])).toBeUndefined();
  });

  it('when a lease does not count, or an item has no number, then it may have ended (its record is read)', () => {
    expect(mayHaveEnded(undefined, 3)).toBe(true);
    expect(mayHaveEnded([], undefined)).toBe(true);
    expect(mayHaveEnded([], 0)).toBe(false);
  });
});
