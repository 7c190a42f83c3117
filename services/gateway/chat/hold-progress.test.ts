import pino from 'pino';
import type { FundsHoldApi, ProgressRequest } from '../../../actors/funds-hold/FundsHoldInterface';
import { HoldProgress } from './hold-progress';

const logger = pino({ level: 'silent' });
const lines = (usage: { inputTokens: number; outputTokens: number }) => [
  { unit: 'TEXT_INPUT' as const, quantity: usage.inputTokens, unitPrice: 1 },
  { unit: 'TEXT_OUTPUT' as const, quantity: usage.outputTokens, unitPrice: 2 },
];

function fakeFunds(answerAfterMs: number) {
  const calls: ProgressRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const funds = {
    progress: async (request: ProgressRequest) => {
      calls.push(request);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, answerAfterMs));
      inFlight -= 1;
      return { holdId: request.holdId, state: 'open' as const, amount: 0, charged: 0, balance: 0 };
    },
  } as unknown as FundsHoldApi;
  return { funds, calls, maxInFlight: () => maxInFlight };
}

describe('hold progress', () => {
  it('when tokens are delivered, then a record is sent every N tokens, one at a time, newer counts coalescing into the next', async () => {
    const fake = fakeFunds(30);
    const progress = new HoldProgress(fake.funds, 'h', lines, 5000, { everyTokens: 10, everyMs: 60_000 }, logger);
    for (let n = 1; n <= 100; n++) progress.delivered(n, (outputTokens) => ({ inputTokens: 3, outputTokens }));
    await new Promise((r) => setTimeout(r, 50));
    progress.delivered(101, (outputTokens) => ({ inputTokens: 3, outputTokens }));
    await new Promise((r) => setTimeout(r, 50));
    progress.stop();
    expect(fake.maxInFlight()).toBe(1);
    // The first at 10 tokens; the rest coalesced while it was in flight: the next carries 101.
    expect(fake.calls.map((c) => c.lines[1]?.quantity)).toEqual([10, 101]);
    expect(fake.calls.every((c) => c.ttlMs === 5000 && c.holdId === 'h')).toBe(true);
  });

  it('when nothing is delivered, then renewals (no lines) are sent every interval, and none after stop', async () => {
    const fake = fakeFunds(1);
    const progress = new HoldProgress(fake.funds, 'h', lines, 5000, { everyTokens: 10, everyMs: 100 }, logger);
    await new Promise((r) => setTimeout(r, 350));
    progress.stop();
    const sent = fake.calls.length;
    expect(sent).toBeGreaterThanOrEqual(2);
    expect(fake.calls.every((c) => c.lines.length === 0)).toBe(true);
    await new Promise((r) => setTimeout(r, 250));
    expect(fake.calls.length).toBe(sent);
  });

  it('when the usage of a record cannot be computed, then it is logged and not sent, never a rejection left unhandled', async () => {
    const fake = fakeFunds(1);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const progress = new HoldProgress(fake.funds, 'h', lines, 5000, { everyTokens: 1, everyMs: 60_000 }, logger);
      progress.delivered(1, () => {
        throw new Error('cannot count');
      });
      await new Promise((r) => setTimeout(r, 50));
      progress.stop();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
    expect(fake.calls).toEqual([]);
  });
});
