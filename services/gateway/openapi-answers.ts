// Answers shared by the OpenAPI entries (openapi*.ts): what any authenticated route, any route
// reading a JSON body, and any route reaching the actors may refuse with; the chat answers of each
// wire; and the JSON Schema of a zod schema, for the entries generated from the routes' own schemas.

import { z } from 'zod';
import { CANONICAL_UUID_HEX } from '../../lib/uuid';

/** JSON Schema 2020-12 of a zod schema: what a client may send (input) or what it receives (output). */
export const jsonSchemaOf = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _draft, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

/** A chat route's success: the wire's JSON answer, or its event stream. */
export const chatSuccess = (description: string, wire: 'openai' | 'anthropic') => ({
  description,
  content: {
    'application/json': { schema: { $ref: `#/components/schemas/${wire === 'openai' ? 'ChatCompletion' : 'AnthropicMessage'}` } },
    'text/event-stream': { schema: { $ref: '#/components/schemas/StreamEvent' } },
  },
});

/** An answer in the gateway's error shape ({"error":{code,message,param?,request_id}}). */
export const errorAnswer = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

export const CREDENTIAL_400 = 'ambiguous_credential (two Authorization headers; an x-api-key is not read here)';
/** The same on a route that also takes the key as x-api-key (the Anthropic wire's, and the model list). */
export const CREDENTIAL_400_X_API_KEY = 'ambiguous_credential (two Authorization or two x-api-key headers, or Authorization and an x-api-key naming another key)';
/** A call refused by a rate limit of its key or account (docs/auth.md, "Limits"). */
export const RATE_429 = 'rate_limit_exceeded: a requests_per_minute or tokens_per_minute of the key or the account is reached (param names it); Retry-After (seconds) and Retry-After-Ms say when the window starts again; or (param body_bytes_in_flight) the account already has GATEWAY_ACCOUNT_BODY_BYTES of request bodies on the way, the connection is closed; or (param calls_in_flight, on the chat, embeddings, image and session run routes) the account already has GATEWAY_ACCOUNT_CALLS model calls running on this instance (chats, embeddings, the provider calls of new image tasks, session runs), Retry-After 1; nothing is held';
export const SPEND_402 = 'spend_limit_exceeded: the hold would pass a spend_per_day, spend_per_month or spend_total of the key or the account (param names it; extra: scope, value, spent, held and, for the account, leased: the part of held that idle or busy funds leases lock); nothing is held';
export const RETRY_AFTER_HEADERS = { 'Retry-After': { schema: { type: 'integer' } }, 'Retry-After-Ms': { schema: { type: 'integer' } } };
export const BODY_400 = 'invalid_json, invalid_utf8 (the body is not valid UTF-8)';
export const BODY_413 = 'payload_too_large';
/** A call counted in tokens under a rate limit may also be too large for a whole tokens_per_minute. */
export const HELD_413 = `${BODY_413}: the body exceeds the effective limit; or, with param tokens_per_minute, the call's token count at admission (its input estimate plus max_tokens) alone is above the key's or the account's whole tokens_per_minute, so no window would admit it (no Retry-After; nothing held or counted)`;
export const BODY_415 = 'unsupported_media_type: the body is not application/json, or has a content-encoding';
/** A provider failure that is not the request's (docs/providers.md, "What the customer is told"). */
export const PROVIDER_502 = "provider_error: the provider could not be reached, failed (5xx), broke off its answer, refused the platform's own credentials (an upstream 401, 403 or 407) or limited the platform's rate (an upstream 429, not the caller's: never answered 429); the message is generic and names no upstream, address or key (operators find the details in the gateway's log)";
export const UNAVAILABLE = 'actor_unavailable or another dependency briefly unavailable, retry later; gateway_shutting_down: the call was still running when the graceful shutdown timed out; gateway_busy (param body_bytes_in_flight, on the billed routes that take a body): this instance already holds GATEWAY_BODY_BYTES_IN_FLIGHT of request bodies of calls in progress, Retry-After 1, the connection is closed, nothing is held';

/** A route that takes no query parameter: any is refused, naming it. */
export const NO_QUERY_400 = 'invalid_request naming the query parameter: this route takes none';

/** An Idempotency-Key the routes take (images/request.ts, parseIdempotencyKey): a canonical UUID, bare or as a quoted string (both quotes or none). */
export const IDEMPOTENCY_KEY_PATTERN = `^(${CANONICAL_UUID_HEX}|"${CANONICAL_UUID_HEX}")$`;
