// A provider call under a hold, whatever it serves (a chat, embeddings): the rate admission, the
// reservation of its estimate on the account's FundsHold of the route's pool (or its lease), the
// drain tracking, the deadline, the client's departure, and the hold the call ends by settling for
// its usage or by releasing it (either retried until it lands, ./pending-settlements.ts). And the JSON answer
// of such a call: the provider's whole answer, charged, x-payg-charged when the settle lands in time.

import { randomUUID } from 'node:crypto';
import type { UsageLine } from '../../../actors/funds-hold/FundsHoldInterface';
import { endModelCall } from '../../../lib/tracing';
import type { TokenUsage } from '../../../providers/port';
import { clientDisconnected, deadline } from '../deadline';
import type { JsonAnswer } from '../http/answer';
import { spendOf, withRateHeaders, type RateHeaderStyle, type TokenCounting } from '../limits/admission';
import { countCall } from '../limits/account-share';
import { DEFAULT_PROGRESS, HoldProgress } from './hold-progress';
import { retryable } from './pending-settlements';
import type { ChatDeps, ChatInput } from './prepare';
import { openProviderCall, SETTLE_WAIT_MS, within, type CallRoute, type HoldHandle } from './provider-call';

/** What a call holds for and how its usage is billed, known once the request passed every check. */
export interface HeldCallTerms {
  estimate: number;
  /** What a rate limit counts at admission, until the call's real tokens replace it (a chat's input is estimated, not bounded). */
  tokenBound: number;
  /** How tokenBound was counted (what a 413 for a call bigger than a whole tokens_per_minute says). */
  tokenCounting: TokenCounting;
  /** Whose rate-limit headers the answer carries. */
  rateStyle: RateHeaderStyle;
  modelId: string;
  profileId: string;
  /** The usage lines of the provider's counts (the same counts always give the same lines). */
  lines(usage: TokenUsage): UsageLine[];
  /** The metrics of a settled call. */
  billed(usage: TokenUsage): void;
  /** What a rate limit counts for the provider's counts once the call is settled: the tokens billed. */
  tokens(usage: TokenUsage): number;
}

export interface HeldCall {
  hold: HoldHandle;
  /** Fires at the deadline, at the drain's timeout, or when the client has gone. */
  signal: AbortSignal;
  /** The answer's headers so far (rate limits, granted capabilities). */
  headers: Record<string, string>;
  /** The call's error as answered: with the rate limit's headers, as every answer of a call under a rate limit. */
  failed(error: unknown): unknown;
  /** The call is over: no deadline, no drain tracking, no listener left behind. */
  ended(): void;
}

/** Admits the call, reserves its estimate and opens its hold; refused (429, 402, 503): nothing is held. */
export async function openHeldCall(deps: ChatDeps, input: ChatInput, terms: HeldCallTerms): Promise<HeldCall> {
  const { accountId } = input.caller;
  // Past the account's calls running on this instance: refused before anything is counted or held.
  // However small each call's hold, a funded account could otherwise keep any number open.
  const stopRunning = countCall(deps.callsRunning, accountId);
  try {
    return await openCounted(deps, input, terms, stopRunning);
  } catch (error) {
    stopRunning();
    throw error;
  }
}

async function openCounted(deps: ChatDeps, input: ChatInput, terms: HeldCallTerms, stopRunning: () => void): Promise<HeldCall> {
  // Over a rate: refused here, before anything is held. Under a spend limit: the hold is the actor's, never a lease's.
  const admitted = await deps.limits?.admit(input.caller, terms.tokenBound, terms.rateStyle, terms.tokenCounting);
  const spend = spendOf(input.caller);
  const funds = (spend ? deps.funds : (deps.leases ?? deps.funds)).of(input.caller.accountId, input.pool);
  const holdId = randomUUID();
  // Listening before the reservation: a client gone while it was made is seen below.
  const abort = new AbortController();
  const untrack = deps.drain?.track(abort);
  const clientLeft = () => abort.abort(input.signal?.reason ?? clientDisconnected());
  if (input.signal?.aborted) clientLeft();
  else input.signal?.addEventListener('abort', clientLeft, { once: true });
  let clearDeadline = () => {};
  const ended = () => {
    stopRunning();
    untrack?.();
    clearDeadline();
    input.signal?.removeEventListener('abort', clientLeft);
  };
  try {
    await funds.reserve({
      holdId, amount: terms.estimate, ttlMs: deps.holdTtlMs, requestId: input.requestId, model: terms.modelId, profileId: terms.profileId,
      ...(spend ? { spend } : {}),
      // Every charge made with a key counts towards its spend, with or without a limit.
      ...(input.caller.spendKeyId !== undefined ? { spendKeyId: input.caller.spendKeyId } : {}),
    });
  } catch (error) {
    ended();
    // Refused (402, 503): nothing held, so the call counts against no rate either.
    throw admitted ? await admitted.refused(error) : error;
  }
  const headers: Record<string, string> = {
    ...(admitted?.headers ?? {}),
    ...(input.capabilities.length > 0 ? { 'x-payg-capabilities': input.capabilities.join(', ') } : {}),
  };
  // The deadline covers the whole call, a stream to its last chunk.
  const { signal, clear } = deadline(abort, deps.providerTimeoutMs);
  clearDeadline = clear;
  const progress = new HoldProgress(funds, holdId, terms.lines, deps.holdTtlMs, deps.holdProgress ?? DEFAULT_PROGRESS, deps.logger);
  const hold: HoldHandle = {
    holdId,
    progress,
    release: async (reason) => {
      progress.stop();
      admitted?.correct(0);
      const release = () => funds.release({ holdId, reason });
      const refused = (error: unknown) => deps.logger.error({ err: error, holdId }, 'release refused; the hold ended otherwise');
      try {
        await release();
      } catch (error) {
        if (!retryable(error)) return refused(error);
        // Not landed (the actor unreachable): retried until it lands, as a settle is, while the
        // call's error is answered. A carved hold left open would keep its lease from expiring.
        deps.settlements.release(holdId, release).catch(refused);
      }
    },
    settle: async (usage) => {
      progress.stop();
      // The route is the hold's once the call was opened: charged with it, on its usage rows.
      const settled = await deps.settlements.run(holdId, () => funds.settle({ holdId, lines: terms.lines(usage), ...(hold.route ? { route: hold.route } : {}) }), () => progress.renew());
      admitted?.correct(terms.tokens(usage));
      terms.billed(usage);
      return settled;
    },
  };
  const failed = (error: unknown) => (admitted ? withRateHeaders(error, admitted.headers) : error);
  return { hold, signal, headers, failed, ended };
}

/** How a JSON call is made and told: its upstreams, the provider call, the usage its result reports, the body. */
export interface JsonCall<R, U> {
  route: CallRoute<U>;
  /** `answered`: told when the upstream's answer began (its first byte), which ends the attempt's timeout. */
  call: (upstream: U, signal: AbortSignal, answered: () => void) => Promise<R>;
  usage: (result: R) => TokenUsage;
  body: (result: R) => unknown;
}

/**
 * A JSON answer: the provider's whole answer, charged; x-payg-charged when the settle lands in
 * time. A call that fails or whose outcome is unknown (timeout) releases its hold: nothing of it
 * reached the client. The call is ended whatever happens.
 */
export async function completeHeld<R, U>(deps: Pick<ChatDeps, 'logger'>, held: HeldCall, json: JsonCall<R, U>): Promise<JsonAnswer> {
  const { hold, signal } = held;
  try {
    // Renewals only while the provider works: a JSON answer is delivered whole or not at all.
    const { opened: result, span } = await openProviderCall(json.route, hold, signal, json.call).finally(() => hold.progress.stop());
    let usage: TokenUsage;
    try {
      usage = json.usage(result);
    } catch (error) {
      endModelCall(span, undefined, error);
      throw error;
    }
    endModelCall(span, usage);
    // The answer waits a little for its charge; a settle still pending then goes on without it.
    const settling = hold.settle(usage);
    const settled = await within(settling, SETTLE_WAIT_MS);
    if (!settled) settling.catch((error) => deps.logger.error({ err: error, holdId: hold.holdId }, 'settle refused after the answer was sent'));
    return { kind: 'json', headers: settled ? { ...held.headers, 'x-payg-charged': String(settled.charged) } : held.headers, body: json.body(result) };
  } catch (error) {
    throw held.failed(error);
  } finally {
    held.ended();
  }
}
