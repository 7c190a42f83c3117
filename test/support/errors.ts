// Small helpers for tests that expect a refusal: the error code a call throws, the ProviderError a promise rejects with.

import type { GatewayError } from '../../lib/errors';
import { ProviderError } from '../../providers/port';

/** The GatewayError code `fn` throws, or undefined when it does not throw. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as GatewayError).code;
  }
  return undefined;
}

/** The ProviderError `promise` rejects with; anything else (or success) fails the test. */
export async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(error)}`);
  return error;
}
