import { codeOf } from '../../../test/support/errors';
import { checkBodySize, checkThinkingBudget, effectiveMaxTokens, rejectUnsupported, reservationEstimate } from './limits';

describe('effective max_tokens', () => {
  it('when max_tokens is a positive integer within the ceiling, then it is the effective limit', () => {
    expect(effectiveMaxTokens(1_048_576, {})).toBe(1_048_576);
    expect(effectiveMaxTokens(1, {})).toBe(1);
  });
  it('when max_tokens exceeds 1,048,576, then it is refused', () => {
    expect(codeOf(() => effectiveMaxTokens(1_048_577, {}))).toBe('max_tokens_out_of_range');
  });
  it('when a lower model limit is configured, then it takes precedence and larger values are refused, not clamped', () => {
    expect(effectiveMaxTokens(8192, { max_tokens: 8192 })).toBe(8192);
    expect(codeOf(() => effectiveMaxTokens(8193, { max_tokens: 8192 }))).toBe('max_tokens_out_of_range');
  });
  it('when max_tokens is negative, fractional, quoted or non-finite, then it is refused', () => {
    for (const bad of [-1, 1.5, '100', Infinity, NaN, true]) expect(codeOf(() => effectiveMaxTokens(bad, {}))).toBe('max_tokens_out_of_range');
  });
  it('when max_tokens is omitted or zero, then the output budget is used, else the model maximum, else 1,024', () => {
    expect(effectiveMaxTokens(undefined, { output_budget: 300, max_tokens: 900 })).toBe(300);
    expect(effectiveMaxTokens(0, { output_budget: 300 })).toBe(300);
    expect(effectiveMaxTokens(undefined, { max_tokens: 900 })).toBe(900);
    expect(effectiveMaxTokens(0, {})).toBe(1024);
    expect(effectiveMaxTokens(null, {})).toBe(1024);
  });
});

describe('unsupported parameters', () => {
  it('when max_completion_tokens is sent, then it is refused', () => {
    expect(codeOf(() => rejectUnsupported({ max_completion_tokens: 10 }))).toBe('max_completion_tokens_unsupported');
    expect(codeOf(() => rejectUnsupported({ max_completion_tokens: null }))).toBe('max_completion_tokens_unsupported');
  });
  it('when n is anything but 1, then it is refused; n=1, n=null (OpenAI\'s default, 1) and no n pass', () => {
    for (const bad of [2, 0, '1', 1.0000001]) expect(codeOf(() => rejectUnsupported({ n: bad }))).toBe('n_unsupported');
    expect(codeOf(() => rejectUnsupported({ n: 1 }))).toBeUndefined();
    expect(codeOf(() => rejectUnsupported({ n: null }))).toBeUndefined();
    expect(codeOf(() => rejectUnsupported({}))).toBeUndefined();
  });
});

describe('thinking.budget_tokens', () => {
  it('when it is a nonnegative integer up to the effective max_tokens, then it passes', () => {
    expect(codeOf(() => checkThinkingBudget({ budget_tokens: 0 }, 100))).toBeUndefined();
    expect(codeOf(() => checkThinkingBudget({ budget_tokens: 100 }, 100))).toBeUndefined();
    expect(codeOf(() => checkThinkingBudget({ type: 'enabled' }, 100))).toBeUndefined();
  });
  it('when it is negative, non-finite, fractional, above max_tokens or quoted, then it is refused', () => {
    for (const bad of [-1, Infinity, NaN, 1.5, 101, '50']) expect(codeOf(() => checkThinkingBudget({ budget_tokens: bad }, 100))).toBe('thinking_budget_invalid');
  });
});

describe('reservation estimate', () => {
  it('when computed, then it is exact: input bytes × input price + max_tokens × output price', () => {
    expect(reservationEstimate(1000, 64, 100, 400)).toBe(1000 * 100 + 64 * 400);
  });
  it('when it would exceed 2^53−1, then it is refused; exactly 2^53−1 passes', () => {
    expect(reservationEstimate(0, 1, 0, Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(codeOf(() => reservationEstimate(1, 1, 1, Number.MAX_SAFE_INTEGER))).toBe('estimate_too_large');
  });
});

describe('body limit', () => {
  it('when the body exceeds the smallest of the limits, then 413 payload_too_large', () => {
    expect(codeOf(() => checkBodySize(101, [1000, 100, Infinity]))).toBe('payload_too_large');
    expect(codeOf(() => checkBodySize(100, [1000, 100]))).toBeUndefined();
  });
});
