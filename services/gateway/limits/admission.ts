// The limits on the request path (docs/auth.md, "Limits"). A caller whose key or account has a
// rate limit is admitted by its Account actor before anything is held (one actor call; callers
// without one skip it), and its answer carries the rate-limit headers of its wire; over a rate
// it is refused 429 rate_limit_exceeded with Retry-After. A caller with a spend limit reserves on
// its FundsHold actor directly (never from a funds lease, which the actor would not see), with
// the limits the actor checks.

import type { AccountClient } from '../../../actors/account/client';
import type { Admission, RateUsage, RateWindowView } from '../../../actors/account/AccountInterface';
import type { SpendScopes } from '../../../actors/funds-hold/FundsHoldInterface';
import { GatewayError } from '../../../lib/errors';
import { hasRateLimits, spendLimitsOf, type Limits } from '../../../lib/limits';
import type { Caller } from '../middleware/auth';

/** Whose headers an answer carries: the OpenAI SDK's names, or the Anthropic API's. */
export type RateHeaderStyle = 'openai' | 'anthropic';

/** A call admitted under a rate limit: its headers, and the correction of its token count once it is known. */
export interface Admitted {
  headers: Record<string, string>;
  /** The tokens the call really used (input + output): the window counts them instead of the estimate. */
  correct(actualTokens: number): void;
  /**
   * The call was refused before anything was held (402, 503): its request and tokens go back to
   * the window (if still the current one), and the refusal is answered with the headers as they
   * are after that. Resolves, once the window has them back (so the client's next call finds
   * them, through any instance) or after GIVE_BACK_WAIT_MS at most, to the error to throw.
   */
  refused(error: unknown): Promise<unknown>;
  /**
   * The call did no new work after all (a replay, found only once counted: two first attempts of
   * one Idempotency-Key at once): its request and tokens go back as for a refusal. Resolves, as
   * `refused` does, to the headers as they are after that.
   */
  givenBack(): Promise<Record<string, string>>;
}

/** `error` answered with `headers` too (its own win), when it is a GatewayError. */
export function withRateHeaders(error: unknown, headers: Record<string, string>): unknown {
  if (!(error instanceof GatewayError)) return error;
  return new GatewayError(error.code, error.message, { param: error.param, extra: error.extra, bodyFields: error.bodyFields, headers: { ...headers, ...error.headers } });
}

/** The admission as it reads once its call gave its request and tokens back. */
function givenBack(admission: Admission, tokens: number): Admission {
  const back = (view: RateWindowView | undefined, amount: number) => (view ? { ...view, remaining: Math.min(view.limit, view.remaining + amount) } : undefined);
  const requests = back(admission.requests, 1);
  const counted = back(admission.tokens, tokens);
  return { admitted: true, windowStart: admission.windowStart, ...(admission.now !== undefined ? { now: admission.now } : {}), ...(requests ? { requests } : {}), ...(counted ? { tokens: counted } : {}) };
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

function windowHeaders(kind: 'requests' | 'tokens', view: RateWindowView | undefined, style: RateHeaderStyle, now: number): Record<string, string> {
  if (!view) return {};
  if (style === 'anthropic') {
    return {
      [`anthropic-ratelimit-${kind}-limit`]: String(view.limit),
      [`anthropic-ratelimit-${kind}-remaining`]: String(view.remaining),
      [`anthropic-ratelimit-${kind}-reset`]: new Date(view.resetAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
  }
  return {
    [`x-ratelimit-limit-${kind}`]: String(view.limit),
    [`x-ratelimit-remaining-${kind}`]: String(view.remaining),
    [`x-ratelimit-reset-${kind}`]: `${seconds(view.resetAt - now)}s`,
  };
}

/**
 * The rate-limit headers of an admission (both windows that apply), in the wire's style. The time
 * left in a window is counted on the actor's clock, whose time its reset is: on this instance's
 * clock a reset would differ from the Retry-After of the same answer by the clocks' difference.
 */
export function rateHeaders(admission: Admission, style: RateHeaderStyle, now = admission.now ?? Date.now()): Record<string, string> {
  return { ...windowHeaders('requests', admission.requests, style, now), ...windowHeaders('tokens', admission.tokens, style, now) };
}

/** The key whose rate window a caller's calls count in: its rotation chain's first key (null: no key). */
function countedAs(caller: Caller): string | null {
  return caller.spendKeyId ?? caller.apiKeyId ?? null;
}

/** The caller's limits (from the projection its credential was read with). */
export function limitsOf(caller: Caller): { account?: Limits; key?: Limits } {
  return caller.limits ?? {};
}

/** The spend limits a reservation must fit, or undefined when neither the account nor the key has one. */
export function spendOf(caller: Caller): SpendScopes | undefined {
  const { account, key } = limitsOf(caller);
  const accountSpend = spendLimitsOf(account);
  const keySpend = spendLimitsOf(key);
  if (!accountSpend && !keySpend) return undefined;
  return { apiKeyId: caller.spendKeyId ?? caller.apiKeyId ?? null, ...(accountSpend ? { account: accountSpend } : {}), ...(keySpend ? { key: keySpend } : {}) };
}

/**
 * How a call's tokens are counted at admission, and what makes the count smaller: what a 413 for
 * a call bigger than a whole tokens_per_minute says (a chat's and an embeddings call's differ).
 */
export interface TokenCounting {
  how: string;
  smaller: string;
}

/** A call that counts no tokens (an image request, an order, a count of tokens): never above a limit. */
const NO_TOKENS: TokenCounting = { how: 'its tokens', smaller: 'send less' };

/** How long a refusal waits at most for its request to be back in the window before it is answered. */
export const GIVE_BACK_WAIT_MS = 1000;

export class RateAdmission {
  constructor(private readonly accounts: AccountClient, private readonly onCorrectionFailed: (error: unknown) => void = () => undefined) {}

  /** Whether the caller's key or account has a rate limit (its calls are counted). */
  applies(caller: Caller): boolean {
    const { account, key } = limitsOf(caller);
    return hasRateLimits(account) || hasRateLimits(key);
  }

  /** What the caller's current minute has counted, or null when neither its key nor its account has a rate limit (nothing is counted then). */
  async usage(caller: Caller): Promise<RateUsage | null> {
    if (!this.applies(caller)) return null;
    return this.accounts.of(caller.accountId).rates({ apiKeyId: countedAs(caller) });
  }

  /**
   * Counts the call against the caller's rates, or refuses it (429, or 413 for a call bigger than
   * a whole tokens_per_minute; nothing counted); null when neither its key nor its account has a
   * rate limit. `tokens`: the call's token count at admission, made as `counting` says (what the
   * 413 tells the caller).
   */
  async admit(caller: Caller, tokens: number, style: RateHeaderStyle, counting: TokenCounting = NO_TOKENS): Promise<Admitted | null> {
    if (!this.applies(caller)) return null;
    const apiKeyId = caller.apiKeyId ?? null;
    const counted = countedAs(caller);
    const actor = this.accounts.of(caller.accountId);
    const admission = await actor.admit({ apiKeyId, tokens, ...(counted !== null && counted !== apiKeyId ? { countAs: counted } : {}) });
    const headers = rateHeaders(admission, style);
    if (!admission.admitted) {
      const { limit, scope, retryAfterMs, max, adds } = admission.refused!;
      // A call bigger than the whole limit: no wait would let it in, so it is refused as too large
      // (413, which no SDK retries) rather than told to retry.
      if (adds > max) {
        throw new GatewayError('payload_too_large', `the call counts ${adds} tokens (${counting.how}), more than the ${scope}'s whole ${limit} of ${max}: it can never be admitted under that limit; ${counting.smaller}`, { param: limit, headers });
      }
      throw new GatewayError('rate_limit_exceeded', `the ${scope}'s ${limit} is reached; try again in ${seconds(retryAfterMs)} s`, {
        param: limit,
        headers: { ...headers, 'retry-after': String(seconds(retryAfterMs)), 'retry-after-ms': String(Math.max(0, retryAfterMs)) },
      });
    }
    const giveBack = async () => {
      const givenBackNow = actor.correctTokens({ apiKeyId: counted, windowStart: admission.windowStart, delta: -tokens, requests: -1 }).catch(this.onCorrectionFailed);
      // Waited for, so the client's next call finds it; but an answer is not held for an
      // Account actor that is slow or unreachable (the give-back still lands when it can).
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([givenBackNow, new Promise((resolve) => (timer = setTimeout(resolve, GIVE_BACK_WAIT_MS)))]);
      clearTimeout(timer);
      return rateHeaders(givenBack(admission, tokens), style);
    };
    return {
      headers,
      correct: (actualTokens) => {
        const delta = actualTokens - tokens;
        if (delta === 0 || admission.tokens === undefined) return;
        actor.correctTokens({ apiKeyId: counted, windowStart: admission.windowStart, delta }).catch(this.onCorrectionFailed);
      },
      refused: async (error) => withRateHeaders(error, await giveBack()),
      givenBack: giveBack,
    };
  }
}

/**
 * Runs `call`, a request that is not a model call (an order's or a session's creation), counted
 * as one request of its caller's requests_per_minute, with no tokens: refused 429 over it; a call
 * that then fails, or whose result `replayed` says did no new work, gives its request back. Its
 * answer carries the rate headers (`headers`).
 */
export async function countedRequest<T>(limits: RateAdmission | undefined, caller: Caller, call: () => Promise<T>, replayed: (result: T) => boolean = () => false): Promise<{ result: T; headers: Record<string, string> }> {
  const admitted = limits ? await limits.admit(caller, 0, 'openai') : null;
  let result: T;
  try {
    result = await call();
  } catch (error) {
    throw admitted ? await admitted.refused(error) : error;
  }
  if (admitted && replayed(result)) return { result, headers: await admitted.givenBack() };
  return { result, headers: admitted?.headers ?? {} };
}
