// One place that turns an aborted call into a ProviderError, so every adapter reports
// the caller's timeout and the caller's cancellation the same way.

import { ProviderError } from './port';

/**
 * The error for a call whose signal fired. A reason that is already a ProviderError is
 * kept; a TimeoutError (AbortSignal.timeout, or any error named so) means the provider
 * timeout fired and the outcome is unknown ('timeout'); any other reason means the caller
 * gave up for its own reasons (client gone, shutdown) and the call broke ('protocol').
 */
export function abortedCallError(signal: AbortSignal): ProviderError {
  const reason: unknown = signal.reason;
  if (reason instanceof ProviderError) return reason;
  if (isTimeoutReason(reason)) return new ProviderError('timeout', 'provider call timed out');
  return new ProviderError('protocol', `provider call aborted: ${describe(reason)}`);
}

function isTimeoutReason(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError';
}

function describe(reason: unknown): string {
  if (reason instanceof Error) return reason.message || reason.name;
  return reason === undefined ? 'no reason given' : String(reason);
}

/** Resolves after `ms`, or rejects with abortedCallError as soon as the signal fires. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortedCallError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedCallError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Never resolves; rejects with abortedCallError once the signal fires. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  if (signal.aborted) return Promise.reject(abortedCallError(signal));
  return new Promise((_resolve, reject) => {
    signal.addEventListener('abort', () => reject(abortedCallError(signal)), { once: true });
  });
}
