// The response headers of the OpenAPI document: the ones every answer carries (and x-should-retry,
// every answer of a status the SDKs retry may), the rate-limit
// headers of a call counted under a rate limit (limits/admission.ts), and the gateway's own
// x-payg-* headers. Declared on the operations openapi.ts describes, after they are built, so that
// an operation's answers and its headers are listed in one place each.

import { NOT_RETRIED, SHOULD_RETRY_HEADER } from '../../lib/errors';

/** A header an answer may carry (`required`: every answer of the status does). */
interface Header {
  description: string;
  required?: boolean;
  schema: Record<string, unknown>;
}
type Answer = { headers?: Record<string, Header> };
type Paths = Record<string, Record<string, { responses: Record<string, Answer> }>>;

/**
 * Set before any route runs (middleware/request-id.ts, the observation middleware), and by Node's
 * refusals before routing (app.ts, answerUnparsed): every answer of every operation.
 */
const EVERY_ANSWER: Record<string, Header> = {
  'x-request-id': { required: true, description: "The request's id: a sane incoming X-Request-Id (letters, digits, . _ : -, at most 128), else a new UUID; error bodies name it too", schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } },
  'request-id': { description: "The same id, on the answer to a request that carries anthropic-version (Anthropic's SDKs read it as the request's id)", schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } },
  traceparent: { required: true, description: "W3C trace context of the gateway's span for the request (under the client's traceparent when one was sent)", schema: { type: 'string', pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' } },
};

/** The statuses the official OpenAI and Anthropic SDKs retry on their own: their answers may tell them not to. */
const SDK_RETRIED = /^(409|429|5[0-9][0-9])$/;
const SHOULD_RETRY: Record<string, Header> = {
  [SHOULD_RETRY_HEADER]: {
    description: `\`false\` when no retry of this same request can succeed, which the official OpenAI and Anthropic SDKs obey (they retry 408, 409, 429 and 5xx otherwise): on ${NOT_RETRIED.join(', ')}; on a failed image task's provider_error (the same Idempotency-Key is answered the same); and on rate_limit_exceeded of orders_per_day when its Retry-After is over 60 s. Absent when a retry may succeed`,
    schema: { type: 'string', enum: ['false'] },
  },
};

const count = (description: string): Header => ({ description, schema: { type: 'integer', minimum: 0 } });
const UNDER_A_RATE = 'present when the key or the account has a rate limit, but not on the replay of an image request or an order (x-payg-replayed: true) answered from what was stored, which is not counted';

/** The rate-limit headers of an admitted (or refused) call, in the OpenAI SDK's names or the Anthropic API's; each window's only when its limit applies. */
const RATE_HEADERS: Record<'openai' | 'anthropic', Record<string, Header>> = {
  openai: Object.fromEntries((['requests', 'tokens'] as const).flatMap((kind) => [
    [`x-ratelimit-limit-${kind}`, count(`The ${kind}_per_minute in force (the key's or the account's, whichever is reached first); ${UNDER_A_RATE}`)],
    [`x-ratelimit-remaining-${kind}`, count(`What the current minute still admits of it; ${UNDER_A_RATE}`)],
    [`x-ratelimit-reset-${kind}`, { description: `Seconds until the window starts again, as \`<n>s\`; ${UNDER_A_RATE}`, schema: { type: 'string', pattern: '^[0-9]+s$' } }],
  ])),
  anthropic: Object.fromEntries((['requests', 'tokens'] as const).flatMap((kind) => [
    [`anthropic-ratelimit-${kind}-limit`, count(`The ${kind}_per_minute in force; ${UNDER_A_RATE}`)],
    [`anthropic-ratelimit-${kind}-remaining`, count(`What the current minute still admits of it; ${UNDER_A_RATE}`)],
    [`anthropic-ratelimit-${kind}-reset`, { description: `When the window starts again (RFC 3339); ${UNDER_A_RATE}`, schema: { type: 'string', format: 'date-time' } }],
  ])),
};

const charged: Header = { description: 'What the call charged, in nano-USD', schema: { type: 'string', pattern: '^(0|[1-9][0-9]*)$' } };
const taskCharged: Header = { description: 'What the image task charged, in nano-USD (0: nothing); on an answer that names a task (taskId)', schema: charged.schema };
const replayed: Header = { description: 'true when the Idempotency-Key named an existing task or order: its answer again, nothing new made, charged or counted against a rate limit', schema: { type: 'string', enum: ['true'] } };
const capabilities: Header = { description: 'The capabilities the call was granted (the X-Payg-Capabilities it asked for), comma separated', schema: { type: 'string' } };

/** The answers of a chat or embeddings call once it is admitted: its success and every failure after admission (refusals before it carry none). */
const HELD_CALL = ['200', '400', '402', '413', '429', '502', '503', '504'];

/** Each operation counted under a rate limit, the style of its rate headers, and the answers that carry them. */
const RATE_COUNTED: [path: string, method: string, style: 'openai' | 'anthropic', statuses: string[]][] = [
  ['/api/open/v1/models/{id}/chat', 'post', 'openai', HELD_CALL],
  ['/api/open/v1/models/{id}/chat/anthropic', 'post', 'anthropic', HELD_CALL],
  ['/api/member/v1/models/{id}/chat', 'post', 'openai', HELD_CALL],
  ['/api/member/v1/models/{id}/chat/anthropic', 'post', 'anthropic', HELD_CALL],
  ['/v1/chat/completions', 'post', 'openai', HELD_CALL],
  ['/v1/messages', 'post', 'anthropic', HELD_CALL],
  ['/v1/embeddings', 'post', 'openai', HELD_CALL],
  // One request and no tokens: refused 429 over requests_per_minute, never 413; a count the provider refuses, fails or does not answer in time carries them too.
  ['/v1/messages/count_tokens', 'post', 'anthropic', ['200', '400', '429', '502', '504']],
  // Admitted after the body is checked: a refusal of the task's start (402, 409, 503) and the task's own failures carry them.
  ['/api/open/v1/models/{id}/images/generations', 'post', 'openai', ['200', '400', '402', '409', '429', '502', '503']],
  // An order counts one request; a creation refused after admission (invalid body, reused key, orders_per_day, unavailable) carries them.
  ['/api/consumer/orders', 'post', 'openai', ['201', '400', '409', '429', '503']],
];

/** The gateway's own headers, by operation and answer. */
const PAYG_HEADERS: [path: string, method: string, statuses: string[], headers: Record<string, Header>][] = [
  ...['/api/open/v1/models/{id}/chat', '/api/open/v1/models/{id}/chat/anthropic', '/api/member/v1/models/{id}/chat', '/api/member/v1/models/{id}/chat/anthropic', '/v1/chat/completions', '/v1/messages'].map((path): [string, string, string[], Record<string, Header>] => [
    path, 'post', ['200'], {
      'x-payg-charged': { ...charged, description: `${charged.description}: on a JSON answer whose settle landed within 5 s (a stream sends it as an SSE comment instead)` },
      'x-payg-capabilities': capabilities,
    },
  ]),
  ['/v1/embeddings', 'post', ['200'], { 'x-payg-charged': { ...charged, description: `${charged.description}, when the settle landed within 5 s` }, 'x-payg-capabilities': capabilities }],
  // A task's every answer says what it charged, and whether the key named an existing task; a
  // refusal before any task (a 400 or 503 without taskId) says neither.
  ['/api/open/v1/models/{id}/images/generations', 'post', ['200'], { 'x-payg-charged': { ...charged, required: true }, 'x-payg-replayed': replayed }],
  ['/api/open/v1/models/{id}/images/generations', 'post', ['400', '502', '503'], { 'x-payg-charged': taskCharged, 'x-payg-replayed': replayed }],
  ['/api/open/v1/models/{id}/images/tasks/{taskId}', 'get', ['200'], { 'x-payg-charged': { ...charged, required: true } }],
  ['/api/open/v1/models/{id}/images/tasks/{taskId}', 'get', ['400', '502', '503'], { 'x-payg-charged': taskCharged }],
  ['/api/consumer/orders', 'post', ['201'], { 'x-payg-replayed': replayed }],
  ['/admin/v1/accounts/{accountId}/orders', 'post', ['201'], { 'x-payg-replayed': replayed }],
];

function declare(answer: Answer | undefined, headers: Record<string, Header>, where: string): void {
  if (!answer) throw new Error(`openapi: headers declared for an answer the document lacks: ${where}`);
  answer.headers = { ...answer.headers, ...headers };
}

/** Declares the headers above on the document's operations (a header for an undescribed answer does not build). */
export function declareHeaders(paths: Paths): void {
  for (const [path, method, style, statuses] of RATE_COUNTED) {
    for (const status of statuses) declare(paths[path]?.[method]?.responses[status], RATE_HEADERS[style], `${method} ${path} ${status}`);
  }
  for (const [path, method, statuses, headers] of PAYG_HEADERS) {
    for (const status of statuses) declare(paths[path]?.[method]?.responses[status], headers, `${method} ${path} ${status}`);
  }
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const [status, answer] of Object.entries(operation.responses)) {
        declare(answer, SDK_RETRIED.test(status) ? { ...SHOULD_RETRY, ...EVERY_ANSWER } : EVERY_ANSWER, 'every answer');
      }
    }
  }
}
