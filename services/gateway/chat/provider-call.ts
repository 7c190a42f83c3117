// The provider call under the chat's hold: how a provider failure is told to the client, the
// call's span, the hold a call charges or releases, and how long an answer waits for its charge.

import type { Logger } from 'pino';
import { GatewayError } from '../../../lib/errors';
import { metrics } from '../../../lib/metrics';
import { cancelModelCall, endModelCall, startModelCall, withinModelCall } from '../../../lib/tracing';
import { UpstreamHealth } from '../routing/health';
import type { Upstream } from './upstream';
import type { RouteAttempt, RouteRecord } from '../../../lib/route-record';
import { customerProviderMessage, ProviderError, type TokenUsage } from '../../../providers/port';
import { leftByClient, stoppedBy } from '../deadline';
import type { HoldProgress } from './hold-progress';
import type { PreparedChat, RouteCandidate } from './prepare';

/**
 * A provider failure as the customer is told it. The message is built from the error's kind,
 * status and customer-fit detail (customerProviderMessage), never from its own message, which
 * names the entry, the upstream's address and words: that account is logged (logProviderFailure)
 * and traced. The platform's credentials refused (401, 403, 407) is provider_error, not the
 * customer's provider_rejected.
 */
export function toGatewayProviderError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  metrics.providerError(error instanceof ProviderError ? error.kind : 'other');
  if (error instanceof ProviderError) {
    const message = customerProviderMessage(error);
    // A 429 ('rate_limited') is the provider's rate, not the request's fault: a provider failure
    // (502, which the SDKs retry), as the routing table says for every upstream failing.
    if (error.kind === 'rejected') return new GatewayError('provider_rejected', message);
    if (error.kind === 'timeout') return new GatewayError('provider_timeout', message);
    return new GatewayError('provider_error', message);
  }
  return new GatewayError('provider_error', 'the provider failed');
}

/**
 * The operators' account of a failed provider call: the entry, the kind, the upstream status
 * and the error's full message (the upstream's words, a connect error's address), which the
 * customer is never shown. A GatewayError (the call's deadline, the drain) is not the provider's.
 */
export function logProviderFailure(logger: Logger | undefined, provider: string | undefined, error: unknown, fields: Record<string, unknown> = {}): void {
  if (!logger || error instanceof GatewayError) return;
  const upstream = error instanceof ProviderError ? { kind: error.kind, upstreamStatus: error.upstreamStatus } : {};
  logger.warn({ ...fields, provider, ...upstream, err: error }, 'provider call failed');
}

/** What a model-call span cut short by its client leaving says (`payg.cancelled`). */
export const CLIENT_DISCONNECTED = 'client_disconnected';

/** The call stopped because its client left: not a provider failure (nothing counted); nobody reads the answer. */
function clientLeft(): GatewayError {
  return new GatewayError('provider_error', 'the call was stopped: the client left before the answer');
}

/** What routing needs of a call's hold: where its route is recorded, and its release when no upstream opened the call. */
export interface RoutedHold {
  /** How the call was routed, once it was opened: recorded with its charge. */
  route?: Route;
  release(reason: string): Promise<unknown>;
}

export interface HoldHandle extends RoutedHold {
  holdId: string;
  /** Records delivered usage on the hold and renews it, off the relay path. */
  progress: HoldProgress;
  /** Retried until it lands (the hold renewed meanwhile); throws only when refused. */
  settle(usage: TokenUsage): Promise<{ charged: number }>;
}

/**
 * How long an answer waits for its settle: a JSON answer is then sent without x-payg-charged, a
 * stream's end is then sent; either way the settle goes on until it lands (PendingSettlements).
 */
export const SETTLE_WAIT_MS = 5000;

/** The value of `promise` if it resolves within `ms`, else undefined (a rejection within `ms` is thrown). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The span of one attempt at a chat's provider call (GenAI conventions), under the request's; undefined when untraced. */
export function modelCallSpan(chat: PreparedChat, candidate: RouteCandidate = chat.route[0]) {
  return startModelCall('chat', chat.upstream.wire === 'anthropic-messages' ? 'anthropic' : 'openai', candidate.upstream.call.upstreamModel, candidate.provider);
}

/** The upstreams one call may be served by, in the file's order, and how an attempt at each is traced. */
export interface CallRoute<U> {
  routing: Routing;
  /** Where each failed attempt is told in full (logProviderFailure). */
  logger?: Logger;
  /** Whose round robin orders them: the profile's id. */
  key: string;
  candidates: readonly { provider: string; weight: number; upstream: U }[];
  span(candidate: { provider: string; upstream: U }): ReturnType<typeof modelCallSpan>;
}

/** A chat's route: its profile's upstreams, each attempt a chat span. */
export function chatRoute(deps: { routing?: Routing; logger?: Logger }, chat: PreparedChat): CallRoute<Upstream> {
  return { routing: routingOf(deps), logger: deps.logger, key: chat.resolved.profile.profile_id, candidates: chat.route, span: (candidate) => modelCallSpan(chat, candidate as RouteCandidate) };
}

/** How a profile's upstreams are tried: their circuits, and how long an attempt with a fallback behind it may take. */
export interface Routing {
  health: UpstreamHealth;
  /** An attempt not answered (first byte) within this is given up for the next upstream; the last runs to the call's deadline. */
  attemptTimeoutMs: number;
}

let processRouting: Routing | undefined;

/** The deps' routing, else one for the process (default circuits and attempt timeout): callers built without one still route. */
export function routingOf(deps: { routing?: Routing }): Routing {
  if (deps.routing) return deps.routing;
  processRouting ??= { health: new UpstreamHealth(), attemptTimeoutMs: DEFAULT_ATTEMPT_TIMEOUT_MS };
  return processRouting;
}

/** How long an attempt with a fallback behind it may take to answer, by default. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 30_000;

/** How an attempt ended (docs/providers.md, "Routing", the failure table). */
export type AttemptOutcome = 'served' | 'refused' | 'unavailable' | 'rate_limited' | 'timeout' | 'rejected' | 'aborted';

/** How a call was routed (lib/route-record.ts): recorded on its usage rows with its charge. */
export type Route = RouteRecord;
type Attempt = RouteAttempt;

/** Failures before any output that the next upstream may retry (a confirmed rejection is not one). */
const RETRIED: ReadonlySet<AttemptOutcome> = new Set(['refused', 'unavailable', 'rate_limited', 'timeout']);

function attemptOutcome(error: unknown, call: AbortSignal): AttemptOutcome {
  if (call.aborted && stoppedBy(call)?.code !== 'provider_timeout') return 'aborted';
  if (!(error instanceof ProviderError)) return 'unavailable';
  if (error.kind === 'timeout') return 'timeout';
  if (error.kind === 'rejected' || error.kind === 'rate_limited') return error.kind;
  // No status: the upstream was never reached (connect error); a bad answer counts as unavailable.
  if (error.kind === 'unavailable' && error.upstreamStatus === undefined) return 'refused';
  return 'unavailable';
}

/** The signal of one attempt: the call's, and given up after `ms` when a fallback is behind it. */
function attemptSignal(call: AbortSignal, ms: number | undefined): { signal: AbortSignal; answered(): void; failed(): void } {
  if (ms === undefined) return { signal: call, answered: () => undefined, failed: () => undefined };
  const controller = new AbortController();
  const forward = () => controller.abort(call.reason);
  if (call.aborted) forward();
  else call.addEventListener('abort', forward, { once: true });
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms);
  return {
    signal: controller.signal,
    // Answered (its first byte; a stream may still be reading its preamble): no attempt timeout
    // any more; the call's own abort still reaches the stream.
    answered: () => clearTimeout(timer),
    failed: () => {
      clearTimeout(timer);
      call.removeEventListener('abort', forward);
    },
  };
}

/**
 * Opens the provider call, trying the profile's upstreams in the order their health and weights
 * give (../routing/health.ts): a failure before any output (refused, 5xx, 429, no first byte in
 * time) goes on to the next upstream, under the same hold; a confirmed rejection, the call's
 * own deadline or the client leaving does not. Each attempt has its span and its metrics. A call
 * that cannot be opened releases the hold and is answered as the last attempt's error; one that
 * is opened records its route on the hold (charged with it) when the profile has several upstreams.
 */
export async function openProviderCall<T, U>(call: CallRoute<U>, hold: RoutedHold, signal: AbortSignal, open: (upstream: U, signal: AbortSignal, answered: () => void) => Promise<T>): Promise<{ opened: T; span: ReturnType<typeof modelCallSpan> }> {
  const { routing } = call;
  const order = call.candidates.length === 1 ? call.candidates : routing.health.order(call.key, call.candidates);
  const attempts: Attempt[] = [];
  for (let i = 0; ; i++) {
    const candidate = order[i];
    const fallback = i < order.length - 1;
    const span = call.span(candidate);
    const attempt = attemptSignal(signal, fallback ? routing.attemptTimeoutMs : undefined);
    const started = performance.now();
    routing.health.attempting(candidate.provider);
    try {
      const opened = await withinModelCall(span, () => open(candidate.upstream, attempt.signal, attempt.answered));
      attempt.answered();
      routing.health.succeeded(candidate.provider);
      attempts.push(recorded(candidate.provider, 'served', started));
      spanOutcome(span, 'served');
      // A profile with one upstream has nothing routed: its rows stay as they were (its upstream is the profile's).
      if (call.candidates.length > 1) hold.route = { upstream: candidate.provider, attempts };
      return { opened, span };
    } catch (error) {
      attempt.failed();
      const outcome = attemptOutcome(error, signal);
      attempts.push(recorded(candidate.provider, outcome, started));
      spanOutcome(span, outcome);
      // The client leaving is no failure of the provider's: its span says the gateway cancelled it.
      if (leftByClient(signal)) cancelModelCall(span, CLIENT_DISCONNECTED);
      else endModelCall(span, undefined, error);
      if (outcome !== 'aborted') logProviderFailure(call.logger, candidate.provider, error, { outcome, attempt: i + 1 });
      // The call's own deadline, the client leaving and the drain stop the call, not the upstream: its circuit is untouched.
      if (outcome !== 'rejected' && !signal.aborted) routing.health.failed(candidate.provider, error instanceof ProviderError ? error.retryAfterMs : undefined);
      if (fallback && RETRIED.has(outcome) && !signal.aborted) continue;
      // The bill's reason says what the answer says: the provider's rejection (400), or its failure.
      await hold.release(outcome === 'rejected' ? 'provider_rejected' : 'provider_failed');
      throw stoppedBy(signal) ?? (outcome === 'aborted' ? clientLeft() : toGatewayProviderError(error));
    }
  }
}

function spanOutcome(span: ReturnType<typeof modelCallSpan>, outcome: AttemptOutcome): void {
  span?.setAttribute('payg.attempt.outcome', outcome);
}

/** An attempt as the usage row records it, counted in the metrics. */
function recorded(upstream: string, outcome: AttemptOutcome, started: number): Attempt {
  const seconds = (performance.now() - started) / 1000;
  metrics.upstreamAttempt(upstream, outcome, seconds);
  return { upstream, outcome, durationMs: Math.round(seconds * 1000), ...(outcome === 'timeout' ? { platformBorne: true } : {}) };
}

/**
 * A served stream that broke after its first byte: its upstream's circuit told and the attempt
 * counted broken, whether the profile has one upstream or several (then its route's served
 * attempt is recorded broken too, on the usage rows), and its model-call span says so as well.
 */
export function streamBroke(routing: Routing, upstream: string, route?: Route, span?: ReturnType<typeof modelCallSpan>): void {
  const served = route?.attempts.at(-1);
  if (served) served.outcome = 'broken';
  span?.setAttribute('payg.attempt.outcome', 'broken');
  metrics.upstreamAttempt(upstream, 'broken');
  routing.health.failed(upstream);
}
