// Usage lines as FundsHold checks, costs and merges them: the reasoning part of an output line
// is recorded beside its quantity, never on another unit and never above the quantity.

import { GatewayError } from '../../lib/errors';
import { costed, mergeProgress, recordLines } from './usage';

describe('usage lines on a hold', () => {
  it('when an output line says how many of its tokens were reasoning, then the count is recorded, costed as output and kept on the costed line', () => {
    const recorded = recordLines([{ unit: 'TEXT_INPUT', quantity: 10, unitPrice: 100 }, { unit: 'TEXT_OUTPUT', quantity: 6, unitPrice: 400, reasoningTokens: 4 }]);
    expect(recorded[1]).toEqual({ unit: 'TEXT_OUTPUT', quantity: '6', unitPrice: '400', reasoningTokens: '4' });
    const { lines, cost } = costed(recorded);
    expect(lines).toEqual([
      { unit: 'TEXT_INPUT', quantity: 10, unitPrice: 100, cost: 1000 },
      { unit: 'TEXT_OUTPUT', quantity: 6, unitPrice: 400, cost: 2400, reasoningTokens: 4 },
    ]);
    expect(cost).toBe(3400n);
  });

  it.each([
    [{ unit: 'TEXT_INPUT', quantity: 6, unitPrice: 400, reasoningTokens: 1 }],
    [{ unit: 'TEXT_OUTPUT', quantity: 6, unitPrice: 400, reasoningTokens: 7 }],
    [{ unit: 'TEXT_OUTPUT', quantity: 6, unitPrice: 400, reasoningTokens: -1 }],
    [{ unit: 'TEXT_OUTPUT', quantity: 6, unitPrice: 400, reasoningTokens: 1.5 }],
  ])('when a line says reasoning tokens it cannot have (%j), then the lines are refused', (line) => {
    // A count on another unit or above the quantity: invalid_request; not an exact count: the money check's error.
    expect(() => recordLines([line])).toThrow(/reasoningTokens|exact integer|negative/);
  });

  it.each([
    [{ unit: 'TEXT_INPUT', quantity: 10_000_000_000_000, unitPrice: 1000 }, 'lines[0].quantity'],
    [{ unit: 'TEXT_OUTPUT', quantity: -5, unitPrice: 400 }, 'lines[0].quantity'],
    [{ unit: 'TEXT_OUTPUT', quantity: 2.5, unitPrice: 400 }, 'lines[0].quantity'],
    [{ unit: 'TEXT_OUTPUT', quantity: 1e300, unitPrice: 400 }, 'lines[0].quantity'],
    [{ unit: 'TEXT_OUTPUT', quantity: 5, unitPrice: -1 }, 'lines[0].unitPrice'],
  ])('when a line cannot be priced exactly (%j), then it is refused as invalid_request naming it, never as a fault to retry', (line, param) => {
    let caught: unknown;
    try {
      recordLines([line]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect(caught).toMatchObject({ code: 'invalid_request', param });
  });

  it('when a line costs just what an amount can hold, then it is recorded and costed', () => {
    const { cost } = costed(recordLines([{ unit: 'TEXT_INPUT', quantity: 9_007_199_254_740_991, unitPrice: 1 }]));
    expect(cost).toBe(9_007_199_254_740_991n);
  });

  it('when progress records follow each other, then the reasoning count, like the quantity, never goes down', () => {
    const older = recordLines([{ unit: 'TEXT_OUTPUT', quantity: 8, unitPrice: 400, reasoningTokens: 5 }]);
    const newer = recordLines([{ unit: 'TEXT_OUTPUT', quantity: 9, unitPrice: 400, reasoningTokens: 3 }]);
    expect(mergeProgress(older, newer)).toEqual([{ unit: 'TEXT_OUTPUT', quantity: '9', unitPrice: '400', reasoningTokens: '5' }]);
    expect(mergeProgress(recordLines([{ unit: 'TEXT_OUTPUT', quantity: 2, unitPrice: 400 }]), recordLines([{ unit: 'TEXT_OUTPUT', quantity: 3, unitPrice: 400 }]))).toEqual([{ unit: 'TEXT_OUTPUT', quantity: '3', unitPrice: '400' }]);
  });
});
