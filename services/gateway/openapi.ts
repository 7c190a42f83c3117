// The OpenAPI 3.1 description of the gateway's routes: the formal open navigation and the operator
// API (prototype routes are not in it).
// A candidate reference: registered routes and credential contracts prevail (docs/api.md).

import { adminPaths, adminSchemas, adminSecuritySchemes } from './openapi-admin';
import { anthropicMessageAnswer, balanceAnswer, imageSucceededAnswer, capabilitiesAnswer, catalogAnswer, chatCompletionAnswer, compatModelAnswer, countTokensAnswer, compatModelListAnswer, embeddingsAnswer, entitlementAnswer, openApiAnswer, streamEventAnswer } from './answer-schemas';
import { BODY_400, BODY_415, chatSuccess, HELD_413, CREDENTIAL_400, IDEMPOTENCY_KEY_PATTERN, jsonSchemaOf, NO_QUERY_400, PROVIDER_502, RATE_429, RETRY_AFTER_HEADERS, SPEND_402, UNAVAILABLE } from './openapi-answers';
import { errorSchemas } from './error-schemas';
import { requestSchemas } from './request-schemas';
import type { DocumentedOperations } from './route-table';
import type { Same } from '../../lib/same-type';
import { capabilitiesHeader, compatPaths, compatSecuritySchemes } from './openapi-compat';
import { consolePaths, consoleSchemas } from './openapi-console';
import { declareHeaders } from './openapi-headers';
import { orderPaths, orderSchemas, orderSecuritySchemes } from './openapi-orders';

const error = { $ref: '#/components/schemas/Error' };
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: error } } });
/** An image route's failure: a task's (with taskId and status), or the plain error of a request refused before any task. */
const imageErrorResponse = (description: string, headers?: Record<string, unknown>) => ({
  description, ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { anyOf: [{ $ref: '#/components/schemas/ImageTaskError' }, { allOf: [error, { type: 'object', properties: { taskId: false, status: false } }] }] } } },
});
const apiKey = [{ apiKey: [] }];

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'PAYG model gateway — open routes',
    version: '0.1.0',
    description: 'Candidate contract. Amounts are integers in nano-USD (scale 9). Readiness is not production enablement.',
  },
  components: {
    securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key: Authorization: Bearer <key>' }, ...orderSecuritySchemes, ...compatSecuritySchemes, ...adminSecuritySchemes },
    schemas: {
      ...errorSchemas,
      ImageSucceeded: jsonSchemaOf(imageSucceededAnswer, 'output'),
      Balance: jsonSchemaOf(balanceAnswer, 'output'),
      Catalog: jsonSchemaOf(catalogAnswer, 'output'),
      Capabilities: jsonSchemaOf(capabilitiesAnswer, 'output'),
      OpenApiDocument: jsonSchemaOf(openApiAnswer, 'output'),
      ChatCompletion: jsonSchemaOf(chatCompletionAnswer, 'output'),
      AnthropicMessage: jsonSchemaOf(anthropicMessageAnswer, 'output'),
      CompatModelList: jsonSchemaOf(compatModelListAnswer, 'output'),
      CompatModel: jsonSchemaOf(compatModelAnswer, 'output'),
      CountTokens: jsonSchemaOf(countTokensAnswer, 'output'),
      Embeddings: jsonSchemaOf(embeddingsAnswer, 'output'),
      Entitlement: jsonSchemaOf(entitlementAnswer, 'output'),
      StreamEvent: jsonSchemaOf(streamEventAnswer, 'output'),
      ...requestSchemas,
      ...consoleSchemas,
      ...orderSchemas,
      ...adminSchemas,
    },
  },
  paths: {
    '/api/open/v1/catalog/models': {
      get: { summary: 'Catalog of models and their profiles', security: [], responses: { '200': { description: 'Catalog entries; top-level capabilities describe only the first profile (capabilities_profile_id)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Catalog' } } } }, '400': errorResponse(NO_QUERY_400) } },
    },
    '/api/open/v1/capabilities': {
      get: { summary: 'Readiness report (candidate contract)', security: [], responses: { '200': { description: 'Readiness per route and per priced operation', content: { 'application/json': { schema: { $ref: '#/components/schemas/Capabilities' } } } }, '400': errorResponse(NO_QUERY_400) } },
    },
    '/api/open/v1/openapi.json': {
      get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { $ref: '#/components/schemas/OpenApiDocument' } } } }, '400': errorResponse(NO_QUERY_400) } },
    },
    '/api/open/v1/models/{id}/chat': {
      post: {
        summary: 'PAYG text chat (pool-3), JSON or SSE stream ending with data: [DONE]',
        security: apiKey,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'Model id or profile id (OpenAI-wire profile)' }, capabilitiesHeader],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ChatRequest' } } } },
        responses: {
          '200': chatSuccess('chat.completion, or text/event-stream of chat.completion.chunk; header x-payg-charged on JSON answers whose settle landed within 5 s (absent: the charge is still being settled and lands later); a stream sends its charge before its end as the SSE comment line `: x-payg-charged <nano-USD>`', 'openai'),
          '400': errorResponse(`Invalid input (max_tokens_out_of_range, max_completion_tokens_unsupported, n_unsupported, thinking_budget_invalid, estimate_too_large, wire_format_mismatch, provider_rejected, ${BODY_400}, ${CREDENTIAL_400})`),
          '401': errorResponse('Missing or unknown API key, or a revoked or expired one'),
          '402': errorResponse(`insufficient_funds: the reservation estimate exceeds the available balance; ${SPEND_402}`),
          '429': { ...errorResponse(RATE_429), headers: RETRY_AFTER_HEADERS },
          '403': errorResponse('credential_family_mismatch (OAuth token), model_not_eligible, capability_gate_closed (X-Payg-Capabilities) or account_suspended'),
          '404': errorResponse('model_not_found'),
          '413': errorResponse(HELD_413),
          '415': errorResponse('unsupported_media_type'),
          '502': errorResponse(PROVIDER_502),
          '503': errorResponse(UNAVAILABLE),
          '504': errorResponse('provider_timeout'),
        },
      },
    },
    '/api/open/v1/models/{id}/images/generations': {
      post: {
        summary: 'PAYG single-image generation (pool-3), safe to retry with the same Idempotency-Key (UNKNOWN_IMAGE_V1)',
        security: apiKey,
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'Model id or profile id (OpenAI images profile)' },
          {
            name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN },
            description: 'Canonical UUID (lowercase 8-4-4-4-12), or the same value as a quoted structured-field string. Scoped to the account and the API key: reuse it, with the same key, for every retry.',
          },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ImageRequest' } } } },
        responses: {
          '200': { description: 'The image; header x-payg-charged; header x-payg-replayed: true when the Idempotency-Key named an existing task (its one charge, nothing new)', content: { 'application/json': { schema: { $ref: '#/components/schemas/ImageSucceeded' } } } },
          '400': imageErrorResponse(`status failed (provider_rejected, hold released) with taskId and status; or, without them, invalid input refused before any task or hold (idempotency_key_required, idempotency_key_invalid, n_unsupported, invalid_request, wire_format_mismatch, ${BODY_400}, ${CREDENTIAL_400})`),
          '401': errorResponse('Missing or unknown API key, or a revoked or expired one'),
          '402': errorResponse(`insufficient_funds: the image price exceeds the available balance; no task is created; ${SPEND_402}`),
          '429': { ...errorResponse(RATE_429), headers: RETRY_AFTER_HEADERS },
          '403': errorResponse('credential_family_mismatch (OAuth token), model_not_eligible or account_suspended'),
          '404': errorResponse('model_not_found (a retry with the same key and payload of a task made before the model was withdrawn is answered from its task instead)'),
          '409': errorResponse('idempotency_key_reused: the key was used with another payload; nothing held, nothing called'),
          '413': errorResponse('payload_too_large'),
          '415': errorResponse(BODY_415),
          '502': imageErrorResponse("status failed (provider_error, hold released) with taskId and status: the provider refused the platform's own credentials or limited its rate (429), nothing was produced; the message names no upstream or key"),
          '503': imageErrorResponse(`status unresolved (result cannot be determined yet) or unknown (past the 24-hour deadline, hold released): taskId, status, Retry-After, no URL or base64; or, without them, ${UNAVAILABLE}`, { 'Retry-After': { schema: { type: 'integer' } } }),
        },
      },
    },
    '/api/open/v1/models/{id}/images/tasks/{taskId}': {
      get: {
        summary: 'Recovery of an image task: original owner and original API key only; works after the model is withdrawn',
        security: apiKey,
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The model id or profile id the task was created with' },
          { name: 'taskId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
        ],
        responses: {
          '200': { description: 'The image (succeeded, or a late artifact after UNKNOWN)', content: { 'application/json': { schema: { $ref: '#/components/schemas/ImageSucceeded' } } } },
          '400': imageErrorResponse(`status failed: the provider rejection is confirmed and the hold released (taskId and status); or, without them, ${CREDENTIAL_400}, invalid_request (a path that is not valid percent-encoding, or a query parameter: this route takes none)`),
          '401': errorResponse('Missing or unknown API key, or a revoked or expired one'),
          '403': errorResponse('credential_family_mismatch (OAuth token) or account_suspended'),
          '404': errorResponse('not_found: no such task for this API key (another key, even of the same owner, learns nothing)'),
          '502': imageErrorResponse("status failed (provider_error, hold released) with taskId and status: the provider refused the platform's own credentials or limited its rate (429), or, asked about the call, reported the image failed; nothing was produced"),
          '503': imageErrorResponse(`status unresolved or unknown: taskId, status, Retry-After, no URL or base64; or, without them, ${UNAVAILABLE}`, { 'Retry-After': { schema: { type: 'integer' } } }),
        },
      },
    },
    '/api/distribution/api-credit/balance': {
      get: {
        summary: "The caller's own balance, open holds and available funds (the account's API key or a member token of the account)",
        security: [{ apiKey: [] }, { oauth: [] }],
        responses: {
          '200': { description: 'Balance', content: { 'application/json': { schema: { $ref: '#/components/schemas/Balance' } } } },
          '400': errorResponse(`invalid_request naming the parameter: the balance takes no query parameter; ${CREDENTIAL_400}`),
          '401': errorResponse('Missing or unknown credential, or a revoked or expired API key'),
          '403': errorResponse('account_suspended'),
          '503': errorResponse(`${UNAVAILABLE}; oauth_unavailable (the issuer's keys cannot be fetched)`),
        },
      },
    },
    ...consolePaths,
    ...orderPaths,
    ...compatPaths,
    ...adminPaths,
  },
} as const;

// Node's HTTP server answers some requests before any route sees them, in the gateway's own error
// shape whatever the route's (services/gateway/app.ts, answerUnparsed): a request line and headers
// past 16 KiB, a request not received whole within GATEWAY_REQUEST_TIMEOUT_MS (its headers or its
// body sent too slowly), and a request that is not valid HTTP/1.1 (400). Every operation may answer
// all three, so a 400 described in a compatible wire's shape takes the gateway's own too, for that
// refusal only (invalid_request naming no parameter): the route's own refusals keep its wire's shape.
const unparsed = { allOf: [error, { type: 'object', properties: { error: { type: 'object', properties: { code: { const: 'invalid_request' }, param: false } } } }] };
type DescribedAnswer = { description: string; content?: Record<string, { schema: unknown }> };
for (const operations of Object.values(openApiDocument.paths) as Record<string, { responses: Record<string, DescribedAnswer> }>[]) {
  for (const operation of Object.values(operations)) {
    const invalid = operation.responses['400'].content!['application/json'];
    if (!JSON.stringify(invalid.schema).includes('"#/components/schemas/Error"')) {
      operation.responses['400'] = {
        ...operation.responses['400'],
        description: `${operation.responses['400'].description}; in the gateway's own shape, invalid_request: the request is not valid HTTP/1.1 (refused before routing)`,
        content: { 'application/json': { schema: { anyOf: [invalid.schema, unparsed] } } },
      };
    }
    // Anything a route did not expect becomes internal_error (lib/errors.ts, toGatewayError), in
    // the route's own shape; it is logged, and a retry may succeed.
    operation.responses['500'] = { description: 'internal_error: an unexpected failure of the gateway, logged with the request id', content: { 'application/json': { schema: invalid.schema } } };
    operation.responses['408'] = errorResponse('invalid_request: the request was not received whole within GATEWAY_REQUEST_TIMEOUT_MS (60 s by default); the connection is closed');
    operation.responses['431'] = errorResponse('invalid_request: the request line and headers are larger than 16 KiB (refused before routing)');
  }
}

declareHeaders(openApiDocument.paths as unknown as Parameters<typeof declareHeaders>[0]);

// The document describes exactly the table's documented routes, each with its methods.
type DescribedOperations = { [P in keyof typeof openApiDocument.paths]: keyof (typeof openApiDocument.paths)[P] };
const describesTheTable: Same<DescribedOperations, DocumentedOperations> = true;
void describesTheTable;
