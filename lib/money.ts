// Money: integer amounts in one documented minor unit, never floating point.
// Unit: nano-USD (1 USD = 1_000_000_000 units; see docs/money.md). Arithmetic in BigInt;
// anything that crosses JSON is checked to be an exact safe integer. Every cost, estimate, sum
// and availability the gateway and the actors compute is computed here.

export const CURRENCY = 'USD';
export const SCALE = 9;
export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** An exact amount of nano-USD (branded: a plain bigint, such as a token count, is not one). */
export type NanoUsd = bigint & { readonly __unit?: 'nano-USD' };
/** The same, as the older name the actors use. */
export type Amount = NanoUsd;

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

/**
 * How every actor stores an amount: a decimal string of nano-USD, exact at any size (a balance
 * may outgrow 2^53 between its JSON answers). Records written before this rule by the order and
 * session actors hold plain numbers: their actors upgrade them as they are read, so the next
 * write stores a string.
 */
export type StoredAmount = string;

export function storedAmount(amount: number | bigint): StoredAmount {
  if (typeof amount === 'number' && !Number.isSafeInteger(amount)) throw new MoneyError('amount must be an exact integer');
  return BigInt(amount).toString();
}

/** A stored amount, exact. */
export function fromStored(stored: StoredAmount): Amount {
  return BigInt(stored);
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

/** The cost of a usage line: quantity × unit price, both exact integers (JSON numbers or stored strings). */
export function lineCost(quantity: number | string, unitPrice: number | string): Amount {
  return cost(BigInt(unitPrice), BigInt(quantity));
}

/** Σ of amounts (numbers or stored decimal strings), exact. */
export function sumOf(amounts: Iterable<number | string | bigint>): Amount {
  let total = 0n;
  for (const amount of amounts) total += BigInt(amount);
  return total;
}

/** a + b for amounts kept as JSON numbers (a running total, a lease's bookkeeping): exact, or refused past 2^53−1. */
export function plus(a: number, b: number): number {
  const sum = a + b;
  if (!Number.isSafeInteger(sum)) throw new MoneyError('amount exceeds 2^53-1');
  return sum;
}

/** What is left of `amount` once each of `takings` is taken (may be negative), for amounts kept as JSON numbers. */
export function rest(amount: number, ...takings: number[]): number {
  return takings.reduce((left, taken) => plus(left, -taken), amount);
}

/** What a balance leaves free once every lock on it (holds, leases) is taken: may be negative. */
export function availableOf(balance: number | string | bigint, ...locked: Amount[]): Amount {
  return locked.reduce((left, lock) => left - lock, BigInt(balance));
}

/** The JSON form of an availability: never below zero. */
export function toJsonAvailable(available: Amount): number {
  return toJsonAmount(available < 0n ? 0n : available);
}

/**
 * The reservation estimate of a chat: input bytes bound the input tokens (no tokenizer makes a
 * token of less than a byte; the caller adds what inline images and PDFs may cost beyond their
 * bytes, services/gateway/chat/inline-media.ts), the frozen max_tokens bounds the output. Null past 2^53−1.
 */
export function chatEstimate(inputBytes: number, maxTokens: number, inputPrice: number, outputPrice: number): Amount | null {
  const estimate = BigInt(inputBytes) * BigInt(inputPrice) + BigInt(maxTokens) * BigInt(outputPrice);
  return estimate > MAX_SAFE ? null : estimate;
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
