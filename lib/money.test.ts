import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allocateInOrder, availableOf, chatEstimate, lineCost, MoneyError, plus, rest, SCALE, sumOf, toJsonAvailable } from './money';

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

describe('money computed in one place', () => {
  it('when a usage line is costed, then quantity × unit price is exact past 2^53', () => {
    expect(lineCost(3, 1_000_000_000)).toBe(3_000_000_000n);
    expect(lineCost('9007199254740991', '3')).toBe(27021597764222973n);
  });
  it('when amounts are summed and locks taken from a balance, then the result is exact and may go below zero, shown as zero', () => {
    expect(sumOf([1, '2', 3n])).toBe(6n);
    expect(availableOf('10', 4n, 7n)).toBe(-1n);
    expect(toJsonAvailable(-1n)).toBe(0);
  });
  it('when a chat estimate passes 2^53−1, then there is none (the route refuses estimate_too_large)', () => {
    expect(chatEstimate(100, 16, 100, 400)).toBe(100n * 100n + 16n * 400n);
    expect(chatEstimate(Number.MAX_SAFE_INTEGER, 1, 2, 0)).toBeNull();
  });
});

describe('plus and rest (amounts kept as JSON numbers)', () => {
  it('when amounts are added and taken, then the result is exact, and a result past 2^53-1 is refused', () => {
    expect(plus(2, 3)).toBe(5);
    expect(rest(100, 30, 50)).toBe(20);
    expect(rest(10, 30)).toBe(-20);
    expect(() => plus(Number.MAX_SAFE_INTEGER, 1)).toThrow(MoneyError);
  });
});

describe('the prices per million tokens docs/money.md converts', () => {
  /** A decimal as written in the page (commas between thousands), times 10^9, exactly. */
  const scaled = (text: string) => {
    const [whole, fraction = ''] = text.replaceAll(',', '').split('.');
    return BigInt(whole) * 10n ** 9n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
  };

  it('when the page says a price in USD per million tokens is so many nano-USD a token, then that is the unit SCALE makes it', () => {
    const page = readFileSync(join(__dirname, '../docs/money.md'), 'utf8').replace(/\s+/g, ' ');
    const number = '([0-9][0-9,]*(?:\\.[0-9]+)?)';
    const stated = [
      ...[...page.matchAll(new RegExp(`${number} USD per million tokens is ${number} nano-USD a token`, 'g'))].map((m) => [m[1], m[2]]),
      ...[...page.matchAll(new RegExp(`${number} nano-USD a token is ${number} USD per million tokens`, 'g'))].map((m) => [m[2], m[1]]),
    ];
    expect(stated.length).toBeGreaterThan(0);
    // USD per million tokens × 10^SCALE nano-USD a USD / 10^6 tokens.
    for (const [usdPerMillion, nanoPerToken] of stated) expect([usdPerMillion, scaled(usdPerMillion) * 10n ** BigInt(SCALE)]).toEqual([usdPerMillion, scaled(nanoPerToken) * 10n ** 6n]);
  });
});
