// The text limits (docs/api.md#limits), each a pure rule: validated, never clamped. The effective
// max_tokens is frozen here and bounds both the provider call and the reservation estimate.

import { GatewayError } from '../../../lib/errors';
import { chatEstimate, toJsonAmount } from '../../../lib/money';

export const MAX_TOKENS_CEILING = 1_048_576;
export const DEFAULT_MAX_TOKENS = 1024;

export interface ModelTokenLimits {
  /** The model's configured maximum output (a lower one takes precedence over the ceiling). */
  max_tokens?: number;
  /** The model's default output budget. */
  output_budget?: number;
}

/** The effective max_tokens for a request: validated if given, else the model's defaults. */
export function effectiveMaxTokens(requested: unknown, limits: ModelTokenLimits): number {
  const ceiling = Math.min(MAX_TOKENS_CEILING, limits.max_tokens ?? MAX_TOKENS_CEILING);
  if (requested === undefined || requested === null || requested === 0) {
    return Math.min(limits.output_budget ?? limits.max_tokens ?? DEFAULT_MAX_TOKENS, ceiling);
  }
  if (typeof requested !== 'number' || !Number.isInteger(requested)) {
    throw new GatewayError('max_tokens_out_of_range', 'max_tokens must be an integer', { param: 'max_tokens' });
  }
  if (requested < 0 || requested > ceiling) {
    throw new GatewayError('max_tokens_out_of_range', `max_tokens must be between 1 and ${ceiling} for this model`, { param: 'max_tokens' });
  }
  return requested;
}

export function rejectUnsupported(body: Record<string, unknown>): void {
  if ('max_completion_tokens' in body && body.max_completion_tokens !== undefined) {
    throw new GatewayError('max_completion_tokens_unsupported', 'max_completion_tokens is not supported; use max_tokens', { param: 'max_completion_tokens' });
  }
  // null is OpenAI's "not given" for n (its default, 1), as the OpenAI SDKs type it.
  if ('n' in body && body.n !== undefined && body.n !== null && body.n !== 1) {
    throw new GatewayError('n_unsupported', 'pool-3 returns one completion only (n must be 1)', { param: 'n' });
  }
}

/** thinking.budget_tokens, when supplied: a finite nonnegative integer ≤ the effective max_tokens; quoted numbers refused. */
export function checkThinkingBudget(thinking: unknown, effective: number): void {
  if (thinking === undefined || thinking === null) return;
  if (typeof thinking !== 'object' || Array.isArray(thinking)) {
    throw new GatewayError('thinking_budget_invalid', 'thinking must be an object', { param: 'thinking' });
  }
  if (!('budget_tokens' in thinking)) return;
  const budget = (thinking as { budget_tokens: unknown }).budget_tokens;
  const problem =
    typeof budget !== 'number' ? 'must be a JSON number (quoted numbers are refused)'
    : !Number.isFinite(budget) ? 'must be finite'
    : !Number.isInteger(budget) ? 'must be an integer'
    : budget < 0 ? 'must not be negative'
    : budget > effective ? `must not exceed the effective max_tokens (${effective})`
    : undefined;
  if (problem) throw new GatewayError('thinking_budget_invalid', `thinking.budget_tokens ${problem}`, { param: 'thinking.budget_tokens' });
}

/** The reservation estimate (lib/money.ts chatEstimate), refused past 2^53−1 minor units. */
export function reservationEstimate(inputBytes: number, maxTokens: number, inputPrice: number, outputPrice: number): number {
  const estimate = chatEstimate(inputBytes, maxTokens, inputPrice, outputPrice);
  if (estimate === null) {
    throw new GatewayError('estimate_too_large', 'the reservation estimate exceeds 2^53-1 minor units; lower max_tokens or the input');
  }
  return toJsonAmount(estimate);
}

/** The effective body limit: the smallest of the service/proxy limit, the model's and the upstream's. */
export function checkBodySize(bytes: number, limits: number[]): void {
  const effective = Math.min(...limits);
  if (bytes > effective) throw new GatewayError('payload_too_large', `request body of ${bytes} bytes exceeds the effective limit of ${effective} bytes`);
}
