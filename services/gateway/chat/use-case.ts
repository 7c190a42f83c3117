// PAYG text chat, as a story: check the model and the limits (./prepare.ts), reserve the estimate
// on the account's FundsHold of the route's funding pool, call the provider with the frozen
// max_tokens, recording on the hold what the client was sent as it goes (./hold-progress.ts),
// settle for the actual usage (never above the hold; retried until it lands,
// ./pending-settlements.ts) or release when nothing was produced. The same story on both
// inbound wires (./wires.ts): OpenAI chat completions and Anthropic messages, each served
// natively or, where exact, by a profile of the other wire. The answer is data (../http/answer.ts):
// a JSON body, or a stream of frames (./stream.ts) the route writes.

import { randomUUID } from 'node:crypto';
import { endModelCall } from '../../../lib/tracing';
import type { TokenUsage } from '../../../providers/port';
import { deadline } from '../deadline';
import type { UseCaseAnswer } from '../http/answer';
import { DEFAULT_PROGRESS, HoldProgress } from './hold-progress';
import { prepareChat, type AnyWire, type ChatDeps, type ChatInput, type PreparedChat } from './prepare';
import { billed, usageLines } from './prices';
import { modelCallSpan, openProviderCall, routingOf, SETTLE_WAIT_MS, within, type HoldHandle, type Route } from './provider-call';
import { streamFrames } from './stream';
import { spendOf } from '../limits/admission';
import type { InboundWire, StreamPiece } from './wires';

export async function runChat<R, P extends StreamPiece>(deps: ChatDeps, wire: InboundWire<R, P>, input: ChatInput): Promise<UseCaseAnswer> {
  const chat = prepareChat(deps, wire, input);
  return runPrepared(deps, wire as unknown as AnyWire, chat, input);
}

/** From the reservation on: the request has passed every check. */
export async function runPrepared(deps: ChatDeps, wire: AnyWire, chat: PreparedChat, input: ChatInput): Promise<UseCaseAnswer> {
  // Over a rate: refused here, before anything is held. Under a spend limit: the hold is the actor's, never a lease's.
  const admitted = await deps.limits?.admit(input.caller, tokenBound(chat), wire.wire === 'anthropic-messages' ? 'anthropic' : 'openai');
  const spend = spendOf(input.caller);
  const funds = (spend ? deps.funds : (deps.leases ?? deps.funds)).of(input.caller.accountId, input.pool);
  const holdId = randomUUID();
  // Listening before the reservation: a client gone while it was made is seen below.
  const abort = new AbortController();
  const untrack = deps.drain?.track(abort);
  const clientLeft = () => abort.abort(input.signal?.reason ?? new Error('client disconnected'));
  if (input.signal?.aborted) clientLeft();
  else input.signal?.addEventListener('abort', clientLeft, { once: true });
  let clearDeadline = () => {};
  /** The call is over: no deadline, no drain tracking, no listener left behind. */
  const ended = () => {
    untrack?.();
    clearDeadline();
    input.signal?.removeEventListener('abort', clientLeft);
  };
  try {
    await funds.reserve({
      holdId, amount: chat.estimate, ttlMs: deps.holdTtlMs, requestId: input.requestId, model: chat.resolved.model.id, profileId: chat.resolved.profile.profile_id,
      ...(spend ? { spend } : {}),
    });
  } catch (error) {
    ended();
    // Refused (402, 503): the call will use no tokens.
    admitted?.correct(0);
    throw error;
  }
  const headers: Record<string, string> = {
    ...(admitted?.headers ?? {}),
    ...(input.capabilities.length > 0 ? { 'x-payg-capabilities': input.capabilities.join(', ') } : {}),
  };
  // The deadline covers the whole call, a stream to its last chunk.
  const { signal, clear } = deadline(abort, deps.providerTimeoutMs);
  clearDeadline = clear;
  const progress = new HoldProgress(funds, holdId, (usage) => usageLines(chat.prices, usage), deps.holdTtlMs, deps.holdProgress ?? DEFAULT_PROGRESS, deps.logger);
  const hold: HoldHandle = {
    holdId,
    progress,
    release: (reason) => {
      progress.stop();
      admitted?.correct(0);
      return funds.release({ holdId, reason }).catch((error) => deps.logger.error({ err: error, holdId }, 'release failed; the hold expires by itself'));
    },
    settle: async (usage) => {
      progress.stop();
      const settled = await deps.settlements.run(holdId, () => funds.settle({ holdId, lines: usageLines(chat.prices, usage) }), () => progress.renew());
      admitted?.correct(usage.inputTokens + usage.outputTokens);
      billed(chat.prices, usage);
      return settled;
    },
  };

  if (!chat.parsed.stream) {
    try {
      return await completeChat(deps, wire, chat, signal, hold, headers);
    } finally {
      ended();
    }
  }
  let pieces: AsyncIterable<StreamPiece>;
  let span: ReturnType<typeof modelCallSpan>;
  try {
    let route: Route;
    ({ opened: pieces, span, route } = await openProviderCall(routingOf(deps), chat, hold, signal, (upstream, attempt) => wire.caller.stream(upstream, attempt)));
    hold.route = route;
  } catch (error) {
    progress.stop();
    ended();
    throw error;
  }
  return { kind: 'stream', headers, frames: streamFrames(deps, wire, chat, signal, hold, pieces, span, ended) };
}

/** The tokens a call is counted for at admission: its input estimated at 4 bytes a token, and its frozen max_tokens. */
function tokenBound(chat: PreparedChat): number {
  return Math.ceil(chat.inputBytes / 4) + chat.maxTokens;
}

/** A JSON answer: the provider's whole answer, charged; x-payg-charged when the settle lands in time. */
async function completeChat(deps: ChatDeps, wire: AnyWire, chat: PreparedChat, signal: AbortSignal, hold: HoldHandle, headers: Record<string, string>): Promise<UseCaseAnswer> {
  // Renewals only while the provider works: a JSON answer is delivered whole or not at all.
  const { opened: result, span, route } = await openProviderCall(routingOf(deps), chat, hold, signal, (upstream, attempt) => wire.caller.complete(upstream, attempt)).finally(() => hold.progress.stop());
  hold.route = route;
  let usage: TokenUsage;
  try {
    usage = wire.charge.usage(result);
  } catch (error) {
    endModelCall(span, undefined, error);
    throw error;
  }
  endModelCall(span, usage);
  // The answer waits a little for its charge; a settle still pending then goes on without it.
  const settling = hold.settle(usage);
  const settled = await within(settling, SETTLE_WAIT_MS);
  if (!settled) settling.catch((error) => deps.logger.error({ err: error, holdId: hold.holdId }, 'settle refused after the answer was sent'));
  return { kind: 'json', headers: settled ? { ...headers, 'x-payg-charged': String(settled.charged) } : headers, body: wire.answer.json(result, chat.resolved.model.id) };
}

