// A provider call's deadline, and why a call was stopped.
//
// Not AbortSignal.any([…, AbortSignal.timeout(ms)]): on Node 20 the composite holds its timeout
// signal only weakly, so a garbage collection before the timeout can take the timer with it and
// the call then never ends (nodejs/node issue 57736). Here the timer is an ordinary setTimeout
// whose callback aborts the call's own controller: the timer list holds it strongly until it
// fires or the call ends and clears it.

import { GatewayError } from '../../lib/errors';

export interface Deadline {
  /** The call's signal: aborted by its deadline or by whoever owns the controller. */
  readonly signal: AbortSignal;
  /** The call has ended: the timer is not needed any more. */
  clear(): void;
}

/** Aborts `controller` with a TimeoutError after `ms`, unless cleared (or aborted) first. */
export function deadline(controller: AbortController, ms: number): Deadline {
  if (controller.signal.aborted) return { signal: controller.signal, clear: () => {} };
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms);
  const clear = () => clearTimeout(timer);
  controller.signal.addEventListener('abort', clear, { once: true });
  return { signal: controller.signal, clear };
}

/** The reason the drain aborts a call with when its timeout comes (./drain.ts). */
export function shuttingDown(): GatewayError {
  return new GatewayError('gateway_shutting_down', 'the gateway is shutting down: the call was cut and is charged only for what it produced');
}

/** The name of the reason a call is aborted with when its client has gone (clientDisconnected). */
const CLIENT_DISCONNECTED = 'ClientDisconnected';

/** The reason a call is aborted with when its client closed the connection before the answer was whole. */
export function clientDisconnected(): Error {
  const reason = new Error('client disconnected');
  reason.name = CLIENT_DISCONNECTED;
  return reason;
}

/** Whether `signal` was aborted because the client left (not its deadline, the drain or anything else). */
export function leftByClient(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as { name?: unknown } | undefined)?.name === CLIENT_DISCONNECTED;
}

/**
 * Why an aborted call was stopped, as the client should hear it: its deadline (provider_timeout)
 * or the gateway's shutdown (gateway_shutting_down). Undefined when not aborted, or aborted for
 * another reason (the client left, the run was lost).
 */
export function stoppedBy(signal: AbortSignal): GatewayError | undefined {
  if (!signal.aborted) return undefined;
  const reason: unknown = signal.reason;
  if (reason instanceof GatewayError && reason.code === 'gateway_shutting_down') return reason;
  if (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError') {
    return new GatewayError('provider_timeout', 'the provider did not finish in time');
  }
  return undefined;
}
