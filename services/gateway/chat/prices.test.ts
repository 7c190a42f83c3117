// A chat's usage lines by unit: the uncached prompt, each prompt-cache count at its own price or,
// unpriced, at the price of the unit it refines (counted in payg_unpriced_tokens_total), and the
// output; the reservation estimate's prompt price bounds every prompt token's.

import type { CatalogModel } from '../../../catalog/catalog';
import { registry } from '../../../lib/metrics';
import { billed, billedTokens, billedUsage, chatPrices, promptPriceBound, promptPriceFloor, usageLines } from './prices';

const model = (prices: CatalogModel['prices']) => ({ prices }) as CatalogModel;
const priced = chatPrices(model({ TEXT_INPUT: 1000, TEXT_INPUT_CACHE_READ: 100, TEXT_INPUT_CACHE_WRITE: 1250, TEXT_INPUT_CACHE_WRITE_1H: 2000, TEXT_OUTPUT: 4000 }), 4000);
const inputOnly = chatPrices(model({ TEXT_INPUT: 1000, TEXT_OUTPUT: 4000 }), 4000);
const usage = { inputTokens: 200, outputTokens: 7, cacheReadTokens: 100, cacheWriteTokens: 30, cacheWrite1hTokens: 20 };

async function counted(name: string, unit: string): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values.find((v) => v.labels.unit === unit)?.value as number | undefined) ?? 0;
}

describe('a chat\'s usage lines', () => {
  it('when the prompt was partly read from and written to the cache, then each part is its own line at its own price', () => {
    expect(usageLines(priced, usage)).toEqual([
      { unit: 'TEXT_INPUT', quantity: 50, unitPrice: 1000 },
      { unit: 'TEXT_INPUT_CACHE_READ', quantity: 100, unitPrice: 100 },
      { unit: 'TEXT_INPUT_CACHE_WRITE', quantity: 30, unitPrice: 1250 },
      { unit: 'TEXT_INPUT_CACHE_WRITE_1H', quantity: 20, unitPrice: 2000 },
      { unit: 'TEXT_OUTPUT', quantity: 7, unitPrice: 4000 },
    ]);
  });

  it('when the gateway counted the prompt itself (a cut stream), then it is one TEXT_INPUT line at the lowest prompt price', () => {
    expect(promptPriceFloor(priced)).toBe(100);
    expect(usageLines(priced, { inputTokens: 8, outputTokens: 3, promptCounted: true })).toEqual([
      { unit: 'TEXT_INPUT', quantity: 8, unitPrice: 100 },
      { unit: 'TEXT_OUTPUT', quantity: 3, unitPrice: 4000 },
    ]);
    // Without cache prices every prompt token costs the input price: nothing lower to bill.
    expect(usageLines(inputOnly, { inputTokens: 8, outputTokens: 3, promptCounted: true })[0]).toEqual({ unit: 'TEXT_INPUT', quantity: 8, unitPrice: 1000 });
  });

  it('when the provider reports more output than the max_tokens it was asked for, then only max_tokens are billed (reasoning within them), and counted by a rate limit', () => {
    const capped = chatPrices(model({ TEXT_INPUT: 1000, TEXT_OUTPUT: 4000 }), 4000, 16);
    expect(usageLines(capped, { inputTokens: 10, outputTokens: 1000, reasoningTokens: 900 })).toEqual([
      { unit: 'TEXT_INPUT', quantity: 10, unitPrice: 1000 },
      { unit: 'TEXT_OUTPUT', quantity: 16, unitPrice: 4000, reasoningTokens: 16 },
    ]);
    expect(usageLines(capped, { inputTokens: 10, outputTokens: 4 }).at(-1)).toEqual({ unit: 'TEXT_OUTPUT', quantity: 4, unitPrice: 4000 });
    // What a rate limit counts and a session run reports agree with the lines.
    expect(billedUsage(capped, { inputTokens: 10, outputTokens: 1000, reasoningTokens: 900 })).toEqual({ inputTokens: 10, outputTokens: 16, reasoningTokens: 16 });
    expect(billedTokens(capped, { inputTokens: 10, outputTokens: 1000 })).toBe(26);
    expect(billedTokens(capped, { inputTokens: 10, outputTokens: 4 })).toBe(14);
    expect(billedTokens(priced, { inputTokens: 10, outputTokens: 1000 })).toBe(1010);
  });

  it('when the provider said how many output tokens were reasoning, then the output line carries the count, billed as output', () => {
    expect(usageLines(priced, { inputTokens: 12, outputTokens: 9, reasoningTokens: 5 }).at(-1)).toEqual({ unit: 'TEXT_OUTPUT', quantity: 9, unitPrice: 4000, reasoningTokens: 5 });
    expect(usageLines(priced, { inputTokens: 12, outputTokens: 3, reasoningTokens: 5 }).at(-1)).toEqual({ unit: 'TEXT_OUTPUT', quantity: 3, unitPrice: 4000, reasoningTokens: 3 });
  });

  it('when no prompt token touched the cache, then the lines are the prompt and the output, as before cache units', () => {
    expect(usageLines(priced, { inputTokens: 12, outputTokens: 3 })).toEqual([
      { unit: 'TEXT_INPUT', quantity: 12, unitPrice: 1000 },
      { unit: 'TEXT_OUTPUT', quantity: 3, unitPrice: 4000 },
    ]);
  });

  it('when the model prices no cache unit, then cache tokens are billed at the unit they refine: TEXT_INPUT, the one-hour write at the write price first', () => {
    expect(usageLines(inputOnly, usage).map((line) => [line.unit, line.unitPrice])).toEqual([
      ['TEXT_INPUT', 1000], ['TEXT_INPUT_CACHE_READ', 1000], ['TEXT_INPUT_CACHE_WRITE', 1000], ['TEXT_INPUT_CACHE_WRITE_1H', 1000], ['TEXT_OUTPUT', 4000],
    ]);
    const writeOnly = chatPrices(model({ TEXT_INPUT: 1000, TEXT_INPUT_CACHE_WRITE: 1250, TEXT_OUTPUT: 4000 }), 4000);
    expect(usageLines(writeOnly, usage).find((line) => line.unit === 'TEXT_INPUT_CACHE_WRITE_1H')?.unitPrice).toBe(1250);
  });

  it('when a cache count is larger than the prompt (a provider\'s inconsistent report), then the uncached prompt is zero, never negative', () => {
    expect(usageLines(priced, { inputTokens: 10, outputTokens: 0, cacheReadTokens: 40 })[0]).toEqual({ unit: 'TEXT_INPUT', quantity: 0, unitPrice: 1000 });
  });

  it('when the estimate prices the prompt, then it uses the highest price any prompt token can be billed at', () => {
    expect(promptPriceBound(priced)).toBe(2000);
    expect(promptPriceBound(inputOnly)).toBe(1000);
  });

  it('when a chat is settled, then its tokens are counted per unit, and those of an unpriced cache unit also as unpriced', async () => {
    const before = { read: await counted('payg_unpriced_tokens_total', 'TEXT_INPUT_CACHE_READ'), billed: await counted('payg_tokens_billed_total', 'TEXT_INPUT_CACHE_READ') };
    billed(priced, usage);
    expect(await counted('payg_unpriced_tokens_total', 'TEXT_INPUT_CACHE_READ')).toBe(before.read);
    billed(inputOnly, usage);
    expect(await counted('payg_unpriced_tokens_total', 'TEXT_INPUT_CACHE_READ')).toBe(before.read + 100);
    expect(await counted('payg_tokens_billed_total', 'TEXT_INPUT_CACHE_READ')).toBe(before.billed + 200);
  });
});
