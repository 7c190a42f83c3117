// PAYG text chat, as a story: check the model and the limits, reserve the estimate on the
// account's FundsHold of the route's funding pool, call the provider with the frozen
// max_tokens, recording on the hold what the client was sent as it goes (./hold-progress.ts),
// settle for the actual usage (never above the hold; retried until it lands,
// ./pending-settlements.ts) or release when nothing was produced. The same story on both
// inbound wires (./wires.ts): OpenAI chat completions and Anthropic messages, each served
// natively or, where exact, by a profile of the other wire.

import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import type { UsageLine } from '../../../actors/funds-hold/FundsHoldInterface';
import { requireEligible, type Catalog, type ResolvedProfile } from '../../../catalog/catalog';
import { GatewayError } from '../../../lib/errors';
import { metrics } from '../../../lib/metrics';
import { endModelCall, startModelCall } from '../../../lib/tracing';
import { ProviderError, type SimDirectives, type TokenUsage } from '../../../providers/port';
import { requireCapability, type Capability } from '../capabilities/gates';
import { deadline, stoppedBy } from '../deadline';
import type { Drain } from '../drain';
import type { Caller } from '../middleware/auth';
import { checkBodySize, checkThinkingBudget, effectiveMaxTokens, rejectUnsupported, reservationEstimate } from './limits';
import { upstreamFor, type ChatAdapters, type Upstream } from './upstream';
import type { InboundWire, ParsedChat, StreamPiece } from './wires';
import { DEFAULT_PROGRESS, HoldProgress, type ProgressEvery } from './hold-progress';
import type { PendingSettlements } from './pending-settlements';
import type { FundsSource } from '../funds/leased-funds';

export interface ChatDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, ChatAdapters>;
  funds: FundsHoldClient;
  /** Funds leases (GATEWAY_FUNDS_LEASE): the chat's holds carved from this instance's lease; else `funds`. */
  leases?: FundsSource;
  maxBodyBytes: number;
  providerTimeoutMs: number;
  holdTtlMs: number;
  /** How often a call records its progress on its hold and renews it (default 256 tokens or 2 s). */
  holdProgress?: ProgressEvery;
  /** Settles that did not land at once, retried until they do (./pending-settlements.ts). */
  settlements: PendingSettlements;
  logger: Logger;
  /** Calls in flight, aborted when a graceful shutdown times out (./drain.ts). */
  drain?: Drain;
  /** What the capability gates decide per deployment: configured providers, accepted delivery channels. */
  capabilityGates: { providers: ReadonlySet<string>; accepted: ReadonlySet<Capability> };
}

export interface ChatInput {
  modelId: string;
  body: unknown;
  bodyBytes: number;
  caller: Caller;
  requestId: string;
  /** The funding pool the route's family pays from (pool-3 for open and compatibility routes). */
  pool: string;
  directives?: SimDirectives;
  /** Capabilities the request asks to use (X-Payg-Capabilities): each must pass its four gates. */
  capabilities: readonly Capability[];
}

export interface PreparedChat {
  resolved: ResolvedProfile;
  parsed: ParsedChat;
  upstream: Upstream;
  estimate: number;
  prices: { input: number; output: number };
  inputBytes: number;
}

type AnyWire = InboundWire<unknown, StreamPiece>;

/** Everything that can refuse a request, before anything is held. */
export function prepareChat<R, P extends StreamPiece>(deps: ChatDeps, wire: InboundWire<R, P>, input: ChatInput): PreparedChat {
  const resolved = deps.catalog.resolveChat(input.modelId, wire.wire);
  for (const capability of input.capabilities) {
    requireCapability(capability, { model: resolved.model, profile: resolved.profile, scopes: input.caller.scopes, ...deps.capabilityGates });
  }
  const adapters = deps.providers.get(resolved.profile.provider);
  const served = resolved.profile.wire_format === 'openai-chat' ? adapters?.chat : adapters?.messages;
  if (!served) throw new GatewayError('model_not_eligible', `model ${resolved.model.id} has no configured provider`);
  checkBodySize(input.bodyBytes, [deps.maxBodyBytes, served.maxBodyBytes, resolved.model.limits.max_body_bytes ?? Infinity]);
  const parsed = wire.parse(input.body);
  rejectUnsupported(parsed.body);
  const maxTokens = effectiveMaxTokens(parsed.maxTokens, resolved.model.limits);
  checkThinkingBudget(parsed.thinking, maxTokens);
  const output = requireEligible(resolved.model, 'TEXT_OUTPUT');
  const upstream = upstreamFor(resolved, adapters, parsed.call(maxTokens, resolved.profile.upstream_model, input.directives));
  const prices = { input: resolved.model.prices.TEXT_INPUT ?? 0, output };
  const estimate = reservationEstimate(input.bodyBytes, maxTokens, prices.input, prices.output);
  return { resolved, parsed, upstream, estimate, prices, inputBytes: input.bodyBytes };
}

export function usageLines(prices: PreparedChat['prices'], usage: TokenUsage): UsageLine[] {
  return [
    { unit: 'TEXT_INPUT', quantity: usage.inputTokens, unitPrice: prices.input },
    { unit: 'TEXT_OUTPUT', quantity: usage.outputTokens, unitPrice: prices.output },
  ];
}

export function toGatewayProviderError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  metrics.providerError(error instanceof ProviderError ? error.kind : 'other');
  if (error instanceof ProviderError) {
    if (error.kind === 'rejected') return new GatewayError('provider_rejected', `the provider rejected the request${error.upstreamStatus ? ` (${error.upstreamStatus})` : ''}: ${error.message}`);
    if (error.kind === 'timeout') return new GatewayError('provider_timeout', 'the provider did not answer in time');
    return new GatewayError('provider_error', `the provider failed: ${error.message}`);
  }
  return new GatewayError('provider_error', 'the provider failed');
}

interface HoldHandle {
  holdId: string;
  /** Records delivered usage on the hold and renews it, off the relay path. */
  progress: HoldProgress;
  release(reason: string): Promise<unknown>;
  /** Retried until it lands (the hold renewed meanwhile); throws only when refused. */
  settle(usage: TokenUsage): Promise<{ charged: number }>;
}

/**
 * How long an answer waits for its settle: a JSON answer is then sent without x-payg-charged, a
 * stream's end is then sent; either way the settle goes on until it lands (PendingSettlements).
 */
export const SETTLE_WAIT_MS = 5000;

/** The value of `promise` if it resolves within `ms`, else undefined (a rejection within `ms` is thrown). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The provider call's span (GenAI conventions), under the request's; undefined when untraced. */
export function modelCallSpan(chat: PreparedChat) {
  return startModelCall('chat', chat.upstream.wire === 'anthropic-messages' ? 'anthropic' : 'openai', chat.resolved.profile.upstream_model, chat.resolved.profile.provider);
}

export function billed(usage: TokenUsage): void {
  metrics.tokensBilled('TEXT_INPUT', usage.inputTokens);
  metrics.tokensBilled('TEXT_OUTPUT', usage.outputTokens);
}

export async function runChat<R, P extends StreamPiece>(deps: ChatDeps, wire: InboundWire<R, P>, input: ChatInput, res: Response): Promise<void> {
  const chat = prepareChat(deps, wire, input);
  await runPrepared(deps, wire as unknown as AnyWire, chat, input, res);
}

/** From the reservation on: the request has passed every check. */
export async function runPrepared(deps: ChatDeps, wire: AnyWire, chat: PreparedChat, input: ChatInput, res: Response): Promise<void> {
  const funds = (deps.leases ?? deps.funds).of(input.caller.accountId, input.pool);
  const holdId = randomUUID();
  // Listening before the reservation: a client gone while it was made is seen below.
  const abort = new AbortController();
  const untrack = deps.drain?.track(abort);
  let clearDeadline = () => {};
  res.on('close', () => {
    untrack?.();
    clearDeadline();
    if (!res.writableFinished) abort.abort(new Error('client disconnected'));
  });
  await funds.reserve({ holdId, amount: chat.estimate, ttlMs: deps.holdTtlMs, requestId: input.requestId, model: chat.resolved.model.id, profileId: chat.resolved.profile.profile_id });
  if (input.capabilities.length > 0) res.setHeader('x-payg-capabilities', input.capabilities.join(', '));
  // The deadline covers the whole call, a stream to its last chunk; cleared when the response closes.
  const { signal, clear } = deadline(abort, deps.providerTimeoutMs);
  clearDeadline = clear;
  const progress = new HoldProgress(funds, holdId, (usage) => usageLines(chat.prices, usage), deps.holdTtlMs, deps.holdProgress ?? DEFAULT_PROGRESS, deps.logger);
  const hold: HoldHandle = {
    holdId,
    progress,
    release: (reason) => {
      progress.stop();
      return funds.release({ holdId, reason }).catch((error) => deps.logger.error({ err: error, holdId }, 'release failed; the hold expires by itself'));
    },
    settle: async (usage) => {
      progress.stop();
      const settled = await deps.settlements.run(holdId, () => funds.settle({ holdId, lines: usageLines(chat.prices, usage) }), () => progress.renew());
      billed(usage);
      return settled;
    },
  };

  if (!chat.parsed.stream) {
    // Renewals only while the provider works: a JSON answer is delivered whole or not at all.
    const { opened: result, span } = await openProviderCall(chat, hold, signal, () => wire.complete(chat.upstream, signal)).finally(() => progress.stop());
    let usage: TokenUsage;
    try {
      usage = wire.usage(result);
    } catch (error) {
      endModelCall(span, undefined, error);
      throw error;
    }
    endModelCall(span, usage);
    // The answer waits a little for its charge; a settle still pending then goes on without it.
    const settling = hold.settle(usage);
    const settled = await within(settling, SETTLE_WAIT_MS);
    if (settled) res.setHeader('x-payg-charged', String(settled.charged));
    else settling.catch((error) => deps.logger.error({ err: error, holdId }, 'settle refused after the answer was sent'));
    res.json(wire.json(result, chat.resolved.model.id));
    return;
  }
  // Whatever ends the stream, no renewal outlives it (a settle or release stops them earlier).
  await streamChat(deps, wire, chat, signal, res, hold).finally(() => progress.stop());
}

/** What a stream produced, by the charge rules of docs/money.md; and how it ended. */
export interface StreamTally {
  /**
   * The provider's own final count when it gave one, else one token per output delta and the
   * input as reported, or bounded by bytes/4. Undefined when nothing was produced.
   */
  produced: TokenUsage | undefined;
  /** What broke the stream, if anything did. */
  failure: unknown;
}

/** Reads a stream to its end (or break), handing each piece to `relay`, and counts what it produced. */
export async function tallyStream<P extends StreamPiece>(wire: InboundWire<unknown, P>, chat: PreparedChat, pieces: AsyncIterable<P>, relay: (piece: P) => void): Promise<StreamTally> {
  let outputTokens = 0;
  let inputReported: number | undefined;
  let final: TokenUsage | undefined;
  let failure: unknown;
  try {
    for await (const piece of pieces) {
      if (piece.usage) {
        inputReported = piece.usage.inputTokens;
        if (wire.finalUsage(piece)) final = piece.usage;
      }
      if (wire.producesOutput(piece)) outputTokens += 1;
      relay(piece);
    }
  } catch (error) {
    failure = error;
  }
  const produced = final ?? (outputTokens === 0 ? undefined : { inputTokens: inputReported ?? Math.ceil(chat.inputBytes / 4), outputTokens });
  return { produced, failure };
}

/**
 * Opens the provider call under its span: a call that cannot be opened releases the hold and is
 * answered as the provider's error.
 */
async function openProviderCall<T>(chat: PreparedChat, hold: HoldHandle, signal: AbortSignal, open: () => Promise<T>): Promise<{ opened: T; span: ReturnType<typeof modelCallSpan> }> {
  const span = modelCallSpan(chat);
  try {
    return { opened: await open(), span };
  } catch (error) {
    endModelCall(span, undefined, error);
    await hold.release('provider_failed');
    throw stoppedBy(signal) ?? toGatewayProviderError(error);
  }
}

/**
 * Node corks a response's socket on a write and uncorks it on the next tick, which waits until
 * the microtask queue is empty: pieces that arrived together (and the settle after the last) are
 * relayed in one such run, so the first frame would leave only with the last. It leaves at once
 * (time to first token); the later frames of one read still leave together, in one write.
 */
function sendNow(res: Response): void {
  const socket = res.socket;
  if (socket && socket.writableCorked > 0) socket.uncork();
}

async function streamChat(deps: ChatDeps, wire: AnyWire, chat: PreparedChat, signal: AbortSignal, res: Response, hold: HoldHandle): Promise<void> {
  const { opened: pieces, span } = await openProviderCall(chat, hold, signal, () => wire.stream(chat.upstream, signal));
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  const modelId = chat.resolved.model.id;
  // What the client was sent (frames flushed to the socket), recorded on the hold as it goes.
  let inputReported: number | undefined;
  let sentOutput = 0;
  const sent = (error?: Error | null) => {
    if (error) return;
    sentOutput += 1;
    hold.progress.delivered({ inputTokens: inputReported ?? Math.ceil(chat.inputBytes / 4), outputTokens: sentOutput });
  };
  let first = true;
  const { produced, failure } = await tallyStream(wire, chat, pieces, (piece) => {
    if (piece.usage) inputReported = piece.usage.inputTokens;
    const frame = wire.frame(piece, modelId, chat.parsed);
    if (frame === undefined || res.destroyed) return;
    if (wire.producesOutput(piece)) res.write(frame, sent);
    else res.write(frame);
    if (first) {
      first = false;
      sendNow(res);
    }
  });
  // Charged for what was produced (tallyStream); nothing produced: released.
  endModelCall(span, produced, failure);
  if (!produced) await hold.release(failure ? 'provider_failed' : 'client_disconnected');
  else {
    // The end waits a little for the charge; a settle still pending then lands after it.
    const settling = hold.settle(produced).catch((error) => deps.logger.error({ err: error, holdId: hold.holdId }, 'settle refused; the hold ended otherwise'));
    await within(settling, SETTLE_WAIT_MS);
  }
  // Before the client check: a provider failure counts whether or not anyone still listens.
  const providerFailure = failure && !signal.aborted ? toGatewayProviderError(failure) : undefined;
  if (res.destroyed) return;
  if (providerFailure) res.write(wire.streamError(providerFailure));
  // Cut by its deadline (provider_timeout) or by the drain (gateway_shutting_down).
  else if (failure) res.write(wire.streamError(stoppedBy(signal) ?? new GatewayError('provider_timeout', 'the provider did not finish in time')));
  else res.write(wire.end);
  res.end();
}
