// The one error responder: a GatewayError as each wire says it. The gateway's native body, the
// OpenAI- and Anthropic-compatible bodies (which the official SDKs parse into their typed
// errors), and each chat wire's stream error frame; the ledger app answers in the native shape.
// The error's own headers and body fields ride along in every shape. The wire types are an
// exhaustive map: a new code in ERROR_STATUS does not compile until it has both.

import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { GatewayError, NO_RETRY, RETRY_CAN_SUCCEED, toGatewayError, type ErrorCode } from './errors';

/** The body an answer takes: the gateway's own, or a compatible wire's. */
export type ErrorShape = 'native' | 'openai' | 'anthropic';
/** The chat wires whose streams report a failure in a frame of their own. */
export type StreamWire = 'openai' | 'anthropic';

type OpenAiErrorType = 'rate_limit_error' | 'invalid_request_error' | 'authentication_error' | 'insufficient_quota' | 'permission_error' | 'not_found_error' | 'conflict_error' | 'api_error';
type AnthropicErrorType = 'invalid_request_error' | 'authentication_error' | 'billing_error' | 'permission_error' | 'not_found_error' | 'request_too_large' | 'rate_limit_error' | 'overloaded_error' | 'timeout_error' | 'api_error';

/** Each code's `type` in the OpenAI and the Anthropic error object (docs/api.md, Errors). */
export const WIRE_ERROR_TYPE: Record<ErrorCode, { openai: OpenAiErrorType; anthropic: AnthropicErrorType }> = {
  invalid_request: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  invalid_json: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  max_tokens_out_of_range: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  max_completion_tokens_unsupported: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  n_unsupported: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  thinking_budget_invalid: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  estimate_too_large: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  wire_format_mismatch: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  wire_translation_inexact: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  invalid_scope: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  idempotency_key_required: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  idempotency_key_invalid: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  unauthorized: { openai: 'authentication_error', anthropic: 'authentication_error' },
  signature_required: { openai: 'authentication_error', anthropic: 'authentication_error' },
  signature_invalid: { openai: 'authentication_error', anthropic: 'authentication_error' },
  signature_stale: { openai: 'authentication_error', anthropic: 'authentication_error' },
  insufficient_funds: { openai: 'insufficient_quota', anthropic: 'billing_error' },
  spend_limit_exceeded: { openai: 'insufficient_quota', anthropic: 'billing_error' },
  credential_family_mismatch: { openai: 'permission_error', anthropic: 'permission_error' },
  account_suspended: { openai: 'permission_error', anthropic: 'permission_error' },
  compat_disabled: { openai: 'permission_error', anthropic: 'permission_error' },
  compat_scope_required: { openai: 'permission_error', anthropic: 'permission_error' },
  compat_account_unfunded: { openai: 'permission_error', anthropic: 'permission_error' },
  compat_model_not_eligible: { openai: 'permission_error', anthropic: 'permission_error' },
  capability_gate_closed: { openai: 'permission_error', anthropic: 'permission_error' },
  model_not_eligible: { openai: 'permission_error', anthropic: 'permission_error' },
  admin_disabled: { openai: 'permission_error', anthropic: 'permission_error' },
  not_found: { openai: 'not_found_error', anthropic: 'not_found_error' },
  model_not_found: { openai: 'not_found_error', anthropic: 'not_found_error' },
  account_not_found: { openai: 'not_found_error', anthropic: 'not_found_error' },
  api_key_not_found: { openai: 'not_found_error', anthropic: 'not_found_error' },
  hold_not_found: { openai: 'not_found_error', anthropic: 'not_found_error' },
  idempotency_key_reused: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  credit_reference_reused: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  hold_state_conflict: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  task_state_conflict: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  order_state_conflict: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  callback_replayed: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  run_in_progress: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  run_not_active: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  session_limit_reached: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  api_key_inactive: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  api_key_limit_reached: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  debit_reference_reused: { openai: 'conflict_error', anthropic: 'invalid_request_error' },
  payload_too_large: { openai: 'invalid_request_error', anthropic: 'request_too_large' },
  rate_limit_exceeded: { openai: 'rate_limit_error', anthropic: 'rate_limit_error' },
  unsupported_media_type: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  internal_error: { openai: 'api_error', anthropic: 'api_error' },
  provider_error: { openai: 'api_error', anthropic: 'api_error' },
  provider_rejected: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  actor_unavailable: { openai: 'api_error', anthropic: 'overloaded_error' },
  ledger_unavailable: { openai: 'api_error', anthropic: 'overloaded_error' },
  image_unresolved: { openai: 'api_error', anthropic: 'overloaded_error' },
  image_unknown: { openai: 'api_error', anthropic: 'overloaded_error' },
  checkout_disabled: { openai: 'api_error', anthropic: 'overloaded_error' },
  oauth_disabled: { openai: 'api_error', anthropic: 'overloaded_error' },
  oauth_unavailable: { openai: 'api_error', anthropic: 'overloaded_error' },
  gateway_shutting_down: { openai: 'api_error', anthropic: 'overloaded_error' },
  gateway_busy: { openai: 'api_error', anthropic: 'overloaded_error' },
  provider_timeout: { openai: 'api_error', anthropic: 'timeout_error' },
  invalid_utf8: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  ambiguous_credential: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
};

export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** The body of `error` in `shape`; without a request id (the ledger's answers) the body names none. */
export function errorBody(shape: ErrorShape, error: GatewayError, requestId?: string): Record<string, unknown> {
  const { code, message, param } = error;
  const extra = error.extra ?? {};
  const requested = requestId === undefined ? {} : { request_id: requestId };
  if (shape === 'openai') {
    return { error: { message, type: WIRE_ERROR_TYPE[code].openai, param: param ?? null, code, ...requested, ...extra }, ...error.bodyFields };
  }
  if (shape === 'anthropic') {
    return { type: 'error', error: { type: WIRE_ERROR_TYPE[code].anthropic, message, code, ...extra }, ...requested, ...error.bodyFields };
  }
  return { error: { code, message, ...(param ? { param } : {}), ...requested, ...extra }, ...error.bodyFields };
}

/** `x-should-retry: false` when no retry of the request can succeed, where the code's status is one the SDKs would retry. */
function retryHint(code: ErrorCode): Record<string, string> {
  return (RETRY_CAN_SUCCEED as Partial<Record<ErrorCode, boolean>>)[code] === false ? NO_RETRY : {};
}

/** The whole answer: the code's status, its retry hint and the error's headers (which win), the body in `shape`. */
export function errorAnswer(shape: ErrorShape, error: GatewayError, requestId?: string): ErrorAnswer {
  return { status: error.status, headers: { ...retryHint(error.code), ...error.headers }, body: errorBody(shape, error, requestId) };
}

/** The SSE frame that reports a failure after a stream started (code and message only). */
export function streamErrorFrame(wire: StreamWire, error: GatewayError): string {
  const { code, message } = error;
  if (wire === 'anthropic') return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: WIRE_ERROR_TYPE[code].anthropic, message, code } })}\n\n`;
  return `data: ${JSON.stringify({ error: { code, message } })}\n\n`;
}

/**
 * Express itself refuses some requests before any route runs, with an http-errors style error
 * (a `status` in 4xx): a path segment that is not valid percent-encoding is the one known case.
 * That is the client's input, never a 5xx.
 */
function fromExpress(error: unknown): GatewayError | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  return new GatewayError('invalid_request', error instanceof URIError ? 'the request path is not valid percent-encoding' : 'the request is malformed');
}

/** Anything a route or Express threw, as the GatewayError it answers with. */
export function asGatewayError(error: unknown): GatewayError {
  // A GatewayError has a `status` too: it must not be mistaken for Express's own.
  return error instanceof GatewayError ? error : fromExpress(error) ?? toGatewayError(error);
}

export interface ErrorResponderOptions {
  logger?: Logger;
  /** The shape of this request's answer; native unless said. */
  shapeOf?: (req: Request) => ErrorShape;
  /** How anything thrown becomes a GatewayError: asGatewayError unless said. */
  classify?: (error: unknown) => GatewayError;
  /** An answer already started is ended (the gateway), or cut so that it reads as incomplete (the ledger's exports). */
  started?: 'end' | 'cut';
}

/** The error middleware: logs what is the service's failure (5xx), then answers in the request's shape. */
export function errorResponder(options: ErrorResponderOptions = {}): ErrorRequestHandler {
  const { logger, shapeOf = () => 'native', classify = asGatewayError, started = 'end' } = options;
  return function respondWithError(error: unknown, req, res, _next): void {
    const failure = classify(error);
    if (failure.status >= 500 && !STATE_REPORTS.has(failure.code)) {
      // Its client gone, the answer is read by nobody, and the failure is most often the call
      // stopped because the client left (its access line says 499, aborted): kept, not alerted on.
      if (res.destroyed) logger?.info({ err: error, requestId: req.requestId }, 'request ended after its client left');
      else logger?.error({ err: error, requestId: req.requestId }, 'request failed');
    }
    if (res.headersSent) {
      if (started === 'cut') res.destroy();
      else res.end();
      return;
    }
    // Set by the gateway's request-id middleware; the ledger gives its requests none, nor its bodies.
    const answer = errorAnswer(shapeOf(req), failure, req.requestId);
    res.status(answer.status).set(answer.headers).json(answer.body);
  };
}

/** 5xx codes that report a task's state, not a failure of this service: answered, not logged. */
const STATE_REPORTS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['image_unresolved', 'image_unknown']);

/** The gateway's last route: nothing else matched. */
export function notFound(): RequestHandler {
  return function routeNotFound(req, _res, next): void {
    next(new GatewayError('not_found', `no route ${req.method} ${req.path}`));
  };
}
