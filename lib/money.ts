// Money: integer amounts in one documented minor unit, never floating point.
// Unit: nano-USD (1 USD = 1_000_000_000 units; see docs/money.md). Arithmetic in BigInt;
// anything that crosses JSON is checked to be an exact safe integer.

export const CURRENCY = 'USD';
export const SCALE = 9;
export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export type Amount = bigint;

export class MoneyError extends Error {}

/** Parses an amount from JSON (number or decimal string); rejects fractions, unsafe and negative values. */
export function parseAmount(value: unknown): Amount {
  let result: bigint;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new MoneyError('amount must be an exact integer');
    result = BigInt(value);
  } else if (typeof value === 'string' && /^(0|[1-9][0-9]*)$/.test(value)) {
    result = BigInt(value);
  } else if (typeof value === 'bigint') {
    result = value;
  } else {
    throw new MoneyError('amount must be an exact integer');
  }
  if (result < 0n) throw new MoneyError('amount must not be negative');
  if (result > MAX_SAFE) throw new MoneyError('amount exceeds 2^53-1');
  return result;
}

/** The JSON form of an amount: a number, guaranteed exact. */
export function toJsonAmount(amount: Amount): number {
  if (amount > MAX_SAFE || amount < -MAX_SAFE) throw new MoneyError('amount exceeds 2^53-1');
  return Number(amount);
}

export function min(a: Amount, b: Amount): Amount {
  return a < b ? a : b;
}

/** price per unit × quantity, exact. */
export function cost(pricePerUnit: Amount, quantity: bigint): Amount {
  return pricePerUnit * quantity;
}

/**
 * Splits `total` over `parts` in order, each share at most its part: the first parts are covered
 * first, whatever is left uncovered falls on the last ones. The shares add up to min(total, Σ parts).
 */
export function allocateInOrder(total: Amount, parts: Amount[]): Amount[] {
  let left = total;
  return parts.map((part) => {
    const share = min(part, left);
    left -= share;
    return share;
  });
}
