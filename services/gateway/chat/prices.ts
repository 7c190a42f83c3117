// A chat's prices, frozen when it is prepared, and the usage lines a provider's counts become
// (docs/money.md, "Units"). Prompt tokens read from or written to the provider's prompt cache
// are billed at their own units when the catalog prices them; a unit the catalog does not price
// is billed at the price of the unit it refines (a cache read or write as TEXT_INPUT, a one-hour
// write as TEXT_INPUT_CACHE_WRITE, then TEXT_INPUT): the price the prompt had before cache
// prices existed, and what the reservation estimate allowed for. Such tokens are counted in
// `payg_unpriced_tokens_total` so an operator sees which prices to add.

import type { CatalogModel } from '../../../catalog/catalog';
import type { UsageLine } from '../../../actors/funds-hold/FundsHoldInterface';
import type { UsageUnit } from '../../../lib/events';
import { metrics } from '../../../lib/metrics';
import { uncachedInput, type TokenUsage } from '../../../providers/port';

type CacheUnit = 'TEXT_INPUT_CACHE_READ' | 'TEXT_INPUT_CACHE_WRITE' | 'TEXT_INPUT_CACHE_WRITE_1H';

export interface ChatPrices {
  input: number;
  output: number;
  /** The catalog's own prices of the prompt-cache units it prices; the others are billed by the rule above. */
  cache: Partial<Record<CacheUnit, number>>;
  /**
   * The max_tokens the gateway asked the provider for: no more output than this is billed. A
   * provider cannot produce more; a count above it is the provider's error, not the customer's
   * cost (reasoning and thinking tokens are part of the output and of this bound).
   */
  maxOutputTokens?: number;
}

/** Each prompt-cache unit: its count in a usage, and the cache unit it refines (none: TEXT_INPUT). */
const CACHE_UNITS: readonly { unit: CacheUnit; count: (usage: TokenUsage) => number | undefined; refines?: CacheUnit }[] = [
  { unit: 'TEXT_INPUT_CACHE_READ', count: (usage) => usage.cacheReadTokens },
  { unit: 'TEXT_INPUT_CACHE_WRITE', count: (usage) => usage.cacheWriteTokens },
  { unit: 'TEXT_INPUT_CACHE_WRITE_1H', count: (usage) => usage.cacheWrite1hTokens, refines: 'TEXT_INPUT_CACHE_WRITE' },
];

/** The model's prices for a chat whose output price has been checked eligible. */
export function chatPrices(model: CatalogModel, output: number, maxOutputTokens?: number): ChatPrices {
  const cache: ChatPrices['cache'] = {};
  for (const { unit } of CACHE_UNITS) {
    const price = model.prices[unit];
    if (price !== undefined) cache[unit] = price;
  }
  return { input: model.prices.TEXT_INPUT ?? 0, output, cache, ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}) };
}

/** What a prompt token of a cache unit is billed at: its own price, else the price of the unit it refines. */
function cachePrice(prices: ChatPrices, unit: CacheUnit): number {
  const refines = CACHE_UNITS.find((c) => c.unit === unit)?.refines;
  return prices.cache[unit] ?? (refines ? cachePrice(prices, refines) : prices.input);
}

/** The highest price any prompt token may be billed at: what the reservation estimate prices the prompt at. */
export function promptPriceBound(prices: ChatPrices): number {
  return Math.max(prices.input, ...CACHE_UNITS.map(({ unit }) => cachePrice(prices, unit)));
}

/**
 * The lowest price any prompt token may be billed at: a prompt the gateway counted itself (a
 * stream cut before the provider stated its count) may have been read from the prompt cache, so
 * it is billed at this price, and the cut stream never costs more than the same stream completed.
 */
export function promptPriceFloor(prices: ChatPrices): number {
  return Math.min(prices.input, ...CACHE_UNITS.map(({ unit }) => cachePrice(prices, unit)));
}

/**
 * The lines of a chat's usage: the uncached prompt as TEXT_INPUT (a prompt the gateway counted
 * itself at the floor price above), each cache count above zero at its unit, the output as
 * TEXT_OUTPUT (reasoning included, as providers bill it; the line says how many were reasoning
 * when the provider did), at most the max_tokens the provider was asked for. The same counts
 * always give the same lines (a progress record and the settle agree unit by unit).
 */
export function usageLines(prices: ChatPrices, stated: TokenUsage): UsageLine[] {
  const usage = billedUsage(prices, stated);
  const lines: UsageLine[] = [{ unit: 'TEXT_INPUT', quantity: uncachedInput(usage), unitPrice: usage.promptCounted ? promptPriceFloor(prices) : prices.input }];
  for (const { unit, count } of CACHE_UNITS) {
    const quantity = count(usage) ?? 0;
    if (quantity > 0) lines.push({ unit, quantity, unitPrice: cachePrice(prices, unit) });
  }
  const reasoning = Math.min(usage.reasoningTokens ?? 0, usage.outputTokens);
  lines.push({ unit: 'TEXT_OUTPUT', quantity: usage.outputTokens, unitPrice: prices.output, ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}) });
  return lines;
}

/**
 * The provider's counts as billed: the output at most the max_tokens the provider was asked for,
 * its reasoning within it. What a rate limit counts and what a session run reports, so they agree
 * with the usage lines.
 */
export function billedUsage(prices: ChatPrices, usage: TokenUsage): TokenUsage {
  const cap = prices.maxOutputTokens;
  if (cap === undefined || usage.outputTokens <= cap) return usage;
  return { ...usage, outputTokens: cap, ...(usage.reasoningTokens !== undefined ? { reasoningTokens: Math.min(usage.reasoningTokens, cap) } : {}) };
}

/** The tokens of a settled chat as a rate limit counts them: its input and its billed output. */
export function billedTokens(prices: ChatPrices, usage: TokenUsage): number {
  const counted = billedUsage(prices, usage);
  return counted.inputTokens + counted.outputTokens;
}

/** The metrics of a settled chat: tokens billed per unit, and those of a unit the catalog does not price. */
export function billed(prices: ChatPrices, usage: TokenUsage): void {
  for (const line of usageLines(prices, usage)) {
    metrics.tokensBilled(line.unit, line.quantity);
    if (isCacheUnit(line.unit) && prices.cache[line.unit] === undefined) metrics.unpricedTokens(line.unit, line.quantity);
  }
}

function isCacheUnit(unit: UsageUnit): unit is CacheUnit {
  return CACHE_UNITS.some((c) => c.unit === unit);
}
