// The OpenAPI 3.1 description of the formal open navigation (prototype routes are not in it).
// A candidate reference: registered routes and credential contracts prevail (SPEC.md, Versioning).

const error = { $ref: '#/components/schemas/Error' };
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: error } } });
const apiKey = [{ apiKey: [] }];

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'PAYG model gateway — open routes',
    version: '0.1.0',
    description: 'Candidate contract. Amounts are integers in nano-USD (scale 9). Readiness is not production enablement.',
  },
  components: {
    securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key: Authorization: Bearer <key>' } },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code', 'message', 'request_id'],
            properties: { code: { type: 'string' }, message: { type: 'string' }, param: { type: 'string' }, request_id: { type: 'string' } },
            additionalProperties: true,
          },
        },
      },
      ChatRequest: {
        type: 'object',
        required: ['messages'],
        properties: {
          messages: { type: 'array', minItems: 1, items: { type: 'object', required: ['role'], properties: { role: { type: 'string' }, content: {} } } },
          max_tokens: { type: 'integer', minimum: 0, maximum: 1048576, description: '0 or omitted: the model output budget, else its maximum, else 1024. A lower model limit takes precedence.' },
          n: { type: 'integer', enum: [1] },
          stream: { type: 'boolean' },
          stream_options: { type: 'object', properties: { include_usage: { type: 'boolean' } } },
          thinking: { type: 'object', properties: { budget_tokens: { type: 'integer', minimum: 0, description: 'At most the effective max_tokens; quoted numbers are refused.' } } },
        },
        description: 'OpenAI chat-completions wire. max_completion_tokens is refused (use max_tokens). Body ≤ the effective limit (≤ 32 MiB).',
      },
      Balance: {
        type: 'object',
        properties: {
          currency: { type: 'string' }, scale: { type: 'integer' }, accountId: { type: 'string' }, pool: { type: 'string' },
          balance: { type: 'integer' }, held: { type: 'integer' }, available: { type: 'integer' }, openHolds: { type: 'integer' },
        },
      },
    },
  },
  paths: {
    '/api/open/v1/catalog/models': {
      get: { summary: 'Catalog of models and their profiles', security: [], responses: { '200': { description: 'Catalog entries; top-level capabilities describe only the first profile (capabilities_profile_id)' } } },
    },
    '/api/open/v1/capabilities': {
      get: { summary: 'Readiness report (candidate contract)', security: [], responses: { '200': { description: 'Readiness per route and per priced operation' } } },
    },
    '/api/open/v1/openapi.json': {
      get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1' } } },
    },
    '/api/open/v1/models/{id}/chat': {
      post: {
        summary: 'PAYG text chat (pool-3), JSON or SSE stream ending with data: [DONE]',
        security: apiKey,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'Model id or profile id (OpenAI-wire profile)' }],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ChatRequest' } } } },
        responses: {
          '200': { description: 'chat.completion, or text/event-stream of chat.completion.chunk; header x-payg-charged on JSON answers' },
          '400': errorResponse('Invalid input (max_tokens_out_of_range, max_completion_tokens_unsupported, n_unsupported, thinking_budget_invalid, estimate_too_large, invalid_json, wire_format_mismatch, provider_rejected)'),
          '401': errorResponse('Missing or unknown API key'),
          '402': errorResponse('insufficient_funds: the reservation estimate exceeds the available balance'),
          '403': errorResponse('credential_family_mismatch (OAuth token) or model_not_eligible'),
          '404': errorResponse('model_not_found'),
          '413': errorResponse('payload_too_large'),
          '415': errorResponse('unsupported_media_type'),
          '502': errorResponse('provider_error'),
          '504': errorResponse('provider_timeout'),
        },
      },
    },
    '/api/distribution/api-credit/balance': {
      get: {
        summary: "The caller's own balance, open holds and available funds",
        security: apiKey,
        responses: { '200': { description: 'Balance', content: { 'application/json': { schema: { $ref: '#/components/schemas/Balance' } } } }, '401': errorResponse('Missing or unknown API key') },
      },
    },
  },
} as const;
