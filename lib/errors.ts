// One error class, a closed set of codes, and an exhaustive code → HTTP status map:
// a new code without a status does not compile (nor without its wire types in
// lib/error-responder.ts). Routes and use cases throw; one responder formats.

export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  max_tokens_out_of_range: 400,
  max_completion_tokens_unsupported: 400,
  n_unsupported: 400,
  thinking_budget_invalid: 400,
  estimate_too_large: 400,
  wire_format_mismatch: 400,
  wire_translation_inexact: 400,
  invalid_scope: 400,
  idempotency_key_required: 400,
  idempotency_key_invalid: 400,
  unauthorized: 401,
  signature_required: 401,
  signature_invalid: 401,
  signature_stale: 401,
  insufficient_funds: 402,
  spend_limit_exceeded: 402,
  credential_family_mismatch: 403,
  account_suspended: 403,
  compat_disabled: 403,
  compat_scope_required: 403,
  compat_account_unfunded: 403,
  compat_model_not_eligible: 403,
  capability_gate_closed: 403,
  model_not_eligible: 403,
  admin_disabled: 403,
  not_found: 404,
  model_not_found: 404,
  account_not_found: 404,
  api_key_not_found: 404,
  hold_not_found: 404,
  idempotency_key_reused: 409,
  credit_reference_reused: 409,
  hold_state_conflict: 409,
  task_state_conflict: 409,
  order_state_conflict: 409,
  callback_replayed: 409,
  run_in_progress: 409,
  run_not_active: 409,
  session_limit_reached: 409,
  api_key_inactive: 409,
  api_key_limit_reached: 409,
  debit_reference_reused: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limit_exceeded: 429,
  internal_error: 500,
  provider_error: 502,
  provider_rejected: 400,
  actor_unavailable: 503,
  ledger_unavailable: 503,
  image_unresolved: 503,
  image_unknown: 503,
  checkout_disabled: 503,
  oauth_disabled: 503,
  oauth_unavailable: 503,
  gateway_shutting_down: 503,
  gateway_busy: 503,
  provider_timeout: 504,
  invalid_utf8: 400,
  ambiguous_credential: 400,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The statuses the official OpenAI and Anthropic SDKs retry on their own (with 408, which no code has). */
type SdkRetried = 409 | 429 | 500 | 502 | 503 | 504;
type RetriedCode = { [C in ErrorCode]: (typeof ERROR_STATUS)[C] extends SdkRetried ? C : never }[ErrorCode];

/**
 * For each code of a status the SDKs retry: whether the same request sent again can succeed
 * (docs/api.md, "Retries"). `false`: the answer says `x-should-retry: false`, which those SDKs
 * obey, so a refusal no retry can change is not sent two or three times more. A code added with
 * such a status does not compile until it is decided here. An error's own headers may say
 * otherwise for one answer (a failed image task's provider_error, a rate refusal of a whole day).
 */
export const RETRY_CAN_SUCCEED: Record<RetriedCode, boolean> = {
  // The recorded state decides, and a retry finds it the same.
  idempotency_key_reused: false,
  credit_reference_reused: false,
  debit_reference_reused: false,
  hold_state_conflict: false,
  task_state_conflict: false,
  order_state_conflict: false,
  callback_replayed: false,
  run_not_active: false,
  api_key_inactive: false,
  // Only another request (a session or a key removed) makes room.
  session_limit_reached: false,
  api_key_limit_reached: false,
  // The run in progress ends on its own.
  run_in_progress: true,
  rate_limit_exceeded: true,
  internal_error: true,
  provider_error: true,
  actor_unavailable: true,
  ledger_unavailable: true,
  image_unresolved: true,
  // A late image may still come (Retry-After: 60).
  image_unknown: true,
  // Answered 503 so that the payment provider's own retries deliver the event once it is configured.
  checkout_disabled: true,
  // The deployment's configuration, not a moment: only the operator changes it.
  oauth_disabled: false,
  oauth_unavailable: true,
  gateway_shutting_down: true,
  gateway_busy: true,
  provider_timeout: true,
};

/** The header the official SDKs obey over their own choice of whether to retry. */
export const SHOULD_RETRY_HEADER = 'x-should-retry';
/** An answer no retry of the same request can change. */
export const NO_RETRY = { [SHOULD_RETRY_HEADER]: 'false' } as const;

/** The codes answered with `x-should-retry: false`. */
export const NOT_RETRIED: readonly ErrorCode[] = Object.entries(RETRY_CAN_SUCCEED).filter(([, can]) => !can).map(([code]) => code as ErrorCode);

export interface GatewayErrorOptions {
  /** The one parameter at fault. */
  param?: string;
  /** Fields the error object carries beside its code (crosses to and from actors). */
  extra?: Record<string, unknown>;
  /** Headers of the answer (an image task's Retry-After and charge); the gateway's own, never sent to actors. */
  headers?: Record<string, string>;
  /** Fields the answer's body carries beside `error` (an image task's taskId, status, model); the gateway's own. */
  bodyFields?: Record<string, unknown>;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly param?: string;
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
  readonly bodyFields?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
    this.param = options.param;
    this.extra = options.extra;
    this.headers = options.headers;
    this.bodyFields = options.bodyFields;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  /** Plain form that crosses process boundaries (actor calls) and comes back as the same error. */
  toJSON(): { code: ErrorCode; message: string; param?: string; extra?: Record<string, unknown> } {
    return { code: this.code, message: this.message, param: this.param, extra: this.extra };
  }

  static isCode(value: unknown): value is ErrorCode {
    return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
  }
}

/** Wraps anything thrown into a GatewayError: the one place unknown errors become 500s. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError('internal_error', 'internal error');
}
