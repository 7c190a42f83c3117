import { allocateInOrder } from './money';

describe('money', () => {
  it('when a total covers every part, then each share is its part', () => {
    expect(allocateInOrder(10n, [3n, 7n])).toEqual([3n, 7n]);
    expect(allocateInOrder(12n, [3n, 7n])).toEqual([3n, 7n]);
  });
  it('when a total falls short, then the first parts are covered first and the shares add up to the total', () => {
    expect(allocateInOrder(5n, [3n, 7n, 4n])).toEqual([3n, 2n, 0n]);
    expect(allocateInOrder(0n, [3n, 7n])).toEqual([0n, 0n]);
    const big = 2n ** 60n;
    expect(allocateInOrder(big + 1n, [big, big])).toEqual([big, 1n]);
  });
});
