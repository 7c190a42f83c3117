// The provider call under the chat's hold: how a provider failure is told to the client, the
// call's span, the hold a call charges or releases, and how long an answer waits for its charge.

import { GatewayError } from '../../../lib/errors';
import { metrics } from '../../../lib/metrics';
import { endModelCall, startModelCall } from '../../../lib/tracing';
import { ProviderError, type TokenUsage } from '../../../providers/port';
import { stoppedBy } from '../deadline';
import type { HoldProgress } from './hold-progress';
import type { PreparedChat } from './prepare';

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

export interface HoldHandle {
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
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
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

/**
 * Opens the provider call under its span: a call that cannot be opened releases the hold and is
 * answered as the provider's error.
 */
export async function openProviderCall<T>(startSpan: () => ReturnType<typeof modelCallSpan>, hold: HoldHandle, signal: AbortSignal, open: () => Promise<T>): Promise<{ opened: T; span: ReturnType<typeof modelCallSpan> }> {
  const span = startSpan();
  try {
    return { opened: await open(), span };
  } catch (error) {
    endModelCall(span, undefined, error);
    await hold.release('provider_failed');
    throw stoppedBy(signal) ?? toGatewayProviderError(error);
  }
}

