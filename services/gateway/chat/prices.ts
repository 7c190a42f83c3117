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

export interface ChatPrices {
  input: number;
  output: number;
  /** The catalog's own prices of the prompt-cache units; absent: not priced (billed by the rule above). */
  cacheRead?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
}

type CacheUnit = 'TEXT_INPUT_CACHE_READ' | 'TEXT_INPUT_CACHE_WRITE' | 'TEXT_INPUT_CACHE_WRITE_1H';

/** The model's prices for a chat whose output price has been checked eligible. */
export function chatPrices(model: CatalogModel, output: number): ChatPrices {
  const { TEXT_INPUT, TEXT_INPUT_CACHE_READ, TEXT_INPUT_CACHE_WRITE, TEXT_INPUT_CACHE_WRITE_1H } = model.prices;
  return {
    input: TEXT_INPUT ?? 0,
    output,
    ...(TEXT_INPUT_CACHE_READ !== undefined ? { cacheRead: TEXT_INPUT_CACHE_READ } : {}),
    ...(TEXT_INPUT_CACHE_WRITE !== undefined ? { cacheWrite: TEXT_INPUT_CACHE_WRITE } : {}),
    ...(TEXT_INPUT_CACHE_WRITE_1H !== undefined ? { cacheWrite1h: TEXT_INPUT_CACHE_WRITE_1H } : {}),
  };
}

/** What a prompt token of each cache unit is billed at: its own price, else the rule above. */
function cachePrice(prices: ChatPrices, unit: CacheUnit): number {
  if (unit === 'TEXT_INPUT_CACHE_READ') return prices.cacheRead ?? prices.input;
  if (unit === 'TEXT_INPUT_CACHE_WRITE') return prices.cacheWrite ?? prices.input;
  return prices.cacheWrite1h ?? prices.cacheWrite ?? prices.input;
}

/** The highest price any prompt token may be billed at: what the reservation estimate prices the prompt at. */
export function promptPriceBound(prices: ChatPrices): number {
  return Math.max(prices.input, cachePrice(prices, 'TEXT_INPUT_CACHE_READ'), cachePrice(prices, 'TEXT_INPUT_CACHE_WRITE'), cachePrice(prices, 'TEXT_INPUT_CACHE_WRITE_1H'));
}

const CACHE_COUNTS: readonly [CacheUnit, (usage: TokenUsage) => number | undefined][] = [
  ['TEXT_INPUT_CACHE_READ', (usage) => usage.cacheReadTokens],
  ['TEXT_INPUT_CACHE_WRITE', (usage) => usage.cacheWriteTokens],
  ['TEXT_INPUT_CACHE_WRITE_1H', (usage) => usage.cacheWrite1hTokens],
];

/**
 * The lines of a chat's usage: the uncached prompt as TEXT_INPUT, each cache count above zero at
 * its unit, the output as TEXT_OUTPUT (reasoning included, as providers bill it; the line says how
 * many were reasoning when the provider did). The same counts always give the same lines (a progress
 * record and the settle agree unit by unit).
 */
export function usageLines(prices: ChatPrices, usage: TokenUsage): UsageLine[] {
  const lines: UsageLine[] = [{ unit: 'TEXT_INPUT', quantity: uncachedInput(usage), unitPrice: prices.input }];
  for (const [unit, count] of CACHE_COUNTS) {
    const quantity = count(usage) ?? 0;
    if (quantity > 0) lines.push({ unit, quantity, unitPrice: cachePrice(prices, unit) });
  }
  const reasoning = Math.min(usage.reasoningTokens ?? 0, usage.outputTokens);
  lines.push({ unit: 'TEXT_OUTPUT', quantity: usage.outputTokens, unitPrice: prices.output, ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}) });
  return lines;
}

/** The metrics of a settled chat: tokens billed per unit, and those of a unit the catalog does not price. */
export function billed(prices: ChatPrices, usage: TokenUsage): void {
  for (const line of usageLines(prices, usage)) {
    metrics.tokensBilled(line.unit, line.quantity);
    if (isCacheUnit(line.unit) && !ownPrice(prices, line.unit)) metrics.unpricedTokens(line.unit, line.quantity);
  }
}

function isCacheUnit(unit: UsageUnit): unit is CacheUnit {
  return unit === 'TEXT_INPUT_CACHE_READ' || unit === 'TEXT_INPUT_CACHE_WRITE' || unit === 'TEXT_INPUT_CACHE_WRITE_1H';
}

function ownPrice(prices: ChatPrices, unit: CacheUnit): boolean {
  const own = { TEXT_INPUT_CACHE_READ: prices.cacheRead, TEXT_INPUT_CACHE_WRITE: prices.cacheWrite, TEXT_INPUT_CACHE_WRITE_1H: prices.cacheWrite1h }[unit];
  return own !== undefined;
}
