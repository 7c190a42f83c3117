// Reading untyped JSON from an upstream's answer: each accessor returns the shape it names
// or fails the call as a 'protocol' error that names the field it could not find.

import { ProviderError } from '../port';

export type Json = Record<string, unknown>;

export function asOptionalObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

export function asObject(value: unknown, what: string): Json {
  return asOptionalObject(value) ?? badShape(what);
}

export function asArray(value: unknown, what: string): unknown[] {
  return Array.isArray(value) ? value : badShape(what);
}

export function badShape(what: string): never {
  throw new ProviderError('protocol', `upstream answer has no valid ${what}`);
}

/**
 * The most tokens one usage count of one call may state. No model reads or writes anywhere near
 * this many in a call; a count above it (or negative, or not a whole number) is an upstream that
 * misreports, and pricing it could reach amounts no ledger row can hold.
 */
export const MAX_USAGE_TOKENS = 1_000_000_000;

/** A usage count the upstream stated: a whole number from 0 to MAX_USAGE_TOKENS, else the call fails as 'protocol' naming the field. */
export function usageCount(value: number, what: string): number {
  return Number.isSafeInteger(value) && value >= 0 && value <= MAX_USAGE_TOKENS ? value : badShape(`${what} (a token count from 0 to ${MAX_USAGE_TOKENS}, not ${value})`);
}

/**
 * A count the wire may leave out: absent or null is none (0); anything else must be a token
 * count. A count sent as a string ("40") is a malformed answer, never read as none: that would
 * price cached tokens at the full input price, or drop them from the bill.
 */
export function optionalUsageCount(value: unknown, what: string): number {
  if (value === undefined || value === null) return 0;
  return typeof value === 'number' ? usageCount(value, what) : badShape(`${what} (a token count, not ${JSON.stringify(value)?.slice(0, 40)})`);
}
