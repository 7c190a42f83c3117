// OpenAPI entries of issue 5's routes (docs/compat.md, docs/auth.md, docs/capabilities.md):
// the Anthropic variant of the chat route, the gated compatibility routes, the OAuth member
// routes. Spread into openapi.ts.

import { COMPAT_GATE } from './compat/gate';
import { CAPABILITIES } from './capabilities/gates';
import { BODY_400, BODY_413, BODY_415, chatSuccess, HELD_413, CREDENTIAL_400, CREDENTIAL_400_X_API_KEY, PROVIDER_502, RATE_429, RETRY_AFTER_HEADERS, SPEND_402, UNAVAILABLE } from './openapi-answers';

/**
 * Each route's error shape: the gateway's own, OpenAI's on /v1/chat/completions, Anthropic's on
 * /v1/messages, either on /v1/models (Anthropic's when anthropic-version is sent).
 */
type ErrorShape = 'gateway' | 'openai' | 'anthropic' | 'either';
const SHAPE_SCHEMA = {
  gateway: { $ref: '#/components/schemas/Error' },
  openai: { $ref: '#/components/schemas/OpenAIError' },
  anthropic: { $ref: '#/components/schemas/AnthropicError' },
  either: { anyOf: [{ $ref: '#/components/schemas/OpenAIError' }, { $ref: '#/components/schemas/AnthropicError' }] },
};
const shapedAnswer = (shape: ErrorShape) => (description: string) => ({ description, content: { 'application/json': { schema: SHAPE_SCHEMA[shape] } } });
const errorAnswer = shapedAnswer('gateway');
const modelParameter = (description: string) => ({ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description });
export const capabilitiesHeader = {
  name: 'X-Payg-Capabilities', in: 'header', required: false, schema: { type: 'string' },
  description: `Capabilities this call uses (${CAPABILITIES.join(', ')}), comma separated. Each is refused with 403 capability_gate_closed, naming its gate, until its source, scopes, price and delivery gates all pass; a granted call echoes them in X-Payg-Capabilities.`,
};
const gateDescription = `Gated (x-gate: compat). Usable only once the shared compatibility gate passes; its conditions, in order, each refusing with 403 and its own code: ${COMPAT_GATE.map((c) => `${c.condition} → ${c.code} (${c.requires})`).join('; ')}. Behind the gate: the same limits, holds and pool-3 billing as the open chat routes.`;
/** The refusals and failures of a call made under a hold, in the route's error shape; `invalid`: its 400s. */
const heldCallErrors = (invalid: string, shape: ErrorShape) => {
  const error = shapedAnswer(shape);
  return {
    '400': error(invalid),
    '401': error('Missing or unknown credential'),
    '402': error(`insufficient_funds; ${SPEND_402}`),
    '429': { ...error(RATE_429), headers: RETRY_AFTER_HEADERS },
    '403': error('credential_family_mismatch, model_not_eligible, capability_gate_closed, account_suspended'),
    '404': error('model_not_found'),
    '413': error(HELD_413),
    '415': error(BODY_415),
    '502': error(PROVIDER_502),
    '503': error(UNAVAILABLE),
    '504': error('provider_timeout'),
  };
};
/** `xApiKey`: the route also takes the key as x-api-key (so two different credentials are ambiguous). */
const chatAnswers = (answer: string, wire: 'openai' | 'anthropic', shape: ErrorShape = 'gateway', xApiKey = false) => ({
  '200': chatSuccess(`${answer}; header x-payg-charged on JSON answers whose settle landed within 5 s (absent: the charge lands later); a stream sends its charge before its end as the SSE comment line \`: x-payg-charged <nano-USD>\``, wire),
  ...heldCallErrors(`Invalid input: the limits of the chat route, wire_format_mismatch, wire_translation_inexact (the model is served on the other wire and the request cannot be translated exactly), ${BODY_400}, ${xApiKey ? CREDENTIAL_400_X_API_KEY : CREDENTIAL_400}`, shape),
});

export const compatSecuritySchemes = {
  oauth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'OAuth member/business access token, verified against the configured issuer, audience and JWKS' },
  xApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key, on the Anthropic-wire routes' },
};

const apiKeyOrX = [{ apiKey: [] }, { xApiKey: [] }];
const messagesBody = { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/MessagesRequest' } } } };
const chatBody = { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ChatRequest' } } } };

/** A member chat route: the OAuth scheme only, paid from the member pool. */
function memberChat(wire: 'openai' | 'anthropic') {
  return {
    post: {
      summary: `Member chat (${wire === 'openai' ? 'OpenAI' : 'Anthropic'} wire), paid from the member pool, never pool-3`,
      security: [{ oauth: [] }],
      parameters: [modelParameter('Model id or profile id'), capabilitiesHeader],
      requestBody: wire === 'openai' ? chatBody : messagesBody,
      responses: { ...chatAnswers(wire === 'openai' ? 'chat.completion or its stream' : 'Anthropic message or its event stream', wire), '503': errorAnswer(`oauth_disabled, oauth_unavailable, ${UNAVAILABLE}`) },
    },
  };
}

export const compatPaths = {
  '/api/open/v1/models/{id}/chat/anthropic': {
    post: {
      summary: 'PAYG text chat (pool-3) on the Anthropic Messages wire: JSON, or SSE with Anthropic\'s event sequence',
      security: apiKeyOrX,
      parameters: [modelParameter('Model id or profile id (Anthropic-wire profile)'), capabilitiesHeader],
      requestBody: messagesBody,
      responses: chatAnswers('Anthropic message, or text/event-stream message_start … message_stop', 'anthropic', 'gateway', true),
    },
  },
  '/v1/models': {
    get: {
      summary: 'Models behind the compatibility gate: the OpenAI list, or Anthropic\'s when anthropic-version is sent',
      description: gateDescription, 'x-gate': 'compat',
      security: apiKeyOrX,
      responses: {
        '200': { description: 'Model list, in the OpenAI shape, or the Anthropic one for an Anthropic client', content: { 'application/json': { schema: { $ref: '#/components/schemas/CompatModelList' } } } },
        '400': shapedAnswer('either')(CREDENTIAL_400_X_API_KEY),
        '401': shapedAnswer('either')('Missing or unknown API key'),
        '403': shapedAnswer('either')('The gate is closed (its code names the condition) , credential_family_mismatch or account_suspended'),
        '503': shapedAnswer('either')(UNAVAILABLE),
      },
    },
  },
  '/v1/models/{id}': {
    get: {
      summary: 'One model behind the compatibility gate, as the OpenAI or (with anthropic-version) the Anthropic models API describes it',
      description: gateDescription, 'x-gate': 'compat',
      security: apiKeyOrX,
      parameters: [modelParameter('Model id')],
      responses: {
        '200': { description: 'The model, in the shape of the list\'s entries', content: { 'application/json': { schema: { $ref: '#/components/schemas/CompatModel' } } } },
        '400': shapedAnswer('either')(CREDENTIAL_400_X_API_KEY),
        '401': shapedAnswer('either')('Missing or unknown API key'),
        '403': shapedAnswer('either')('The gate is closed (its code names the condition) , credential_family_mismatch or account_suspended'),
        '404': shapedAnswer('either')('model_not_found: no such model, or not one the routes of the list\'s client serve (withdrawn, not priced; an embeddings model on the Anthropic shape)'),
        '503': shapedAnswer('either')(UNAVAILABLE),
      },
    },
  },
  '/v1/chat/completions': {
    post: {
      summary: 'OpenAI chat completions, model in the body; errors in the OpenAI shape',
      description: gateDescription, 'x-gate': 'compat',
      security: [{ apiKey: [] }],
      parameters: [capabilitiesHeader],
      requestBody: chatBody,
      responses: chatAnswers('chat.completion, or text/event-stream ending with data: [DONE]', 'openai', 'openai'),
    },
  },
  '/v1/messages': {
    post: {
      summary: 'Anthropic messages, model in the body; errors in the Anthropic shape',
      description: gateDescription, 'x-gate': 'compat',
      security: apiKeyOrX,
      parameters: [capabilitiesHeader],
      requestBody: messagesBody,
      responses: chatAnswers('Anthropic message, or its event stream', 'anthropic', 'anthropic', true),
    },
  },
  '/v1/messages/count_tokens': {
    post: {
      summary: "Anthropic's token counting: the prompt's input tokens, free of charge (nothing held, nothing billed); errors in the Anthropic shape",
      description: `${gateDescription} Counted as one request, with no tokens, under a rate limit. The body is checked as a Messages call of the model would be (max_tokens may be left out).`,
      'x-gate': 'compat',
      security: apiKeyOrX,
      // Checked as the Messages call of the model checks them; nothing is used, so nothing is echoed.
      parameters: [{ ...capabilitiesHeader, description: `Capabilities the counted Messages call would use (${CAPABILITIES.join(', ')}), comma separated, checked as that call checks them: each is refused with 403 capability_gate_closed, naming its gate, until its source, scopes, price and delivery gates all pass. A count uses none, so none is echoed.` }],
      requestBody: messagesBody,
      responses: {
        '200': { description: 'The count', content: { 'application/json': { schema: { $ref: '#/components/schemas/CountTokens' } } } },
        '400': shapedAnswer('anthropic')(`Invalid input: the limits of the chat route, wire_translation_inexact, provider_rejected (the provider refused to count), ${BODY_400}, ${CREDENTIAL_400_X_API_KEY}`),
        '401': shapedAnswer('anthropic')('Missing or unknown credential'),
        '403': shapedAnswer('anthropic')('The gate is closed (its code names the condition), credential_family_mismatch, model_not_eligible, capability_gate_closed or account_suspended'),
        '404': shapedAnswer('anthropic')('model_not_found'),
        '413': shapedAnswer('anthropic')(BODY_413),
        '415': shapedAnswer('anthropic')(BODY_415),
        '429': { ...shapedAnswer('anthropic')(RATE_429), headers: RETRY_AFTER_HEADERS },
        '502': shapedAnswer('anthropic')(`the provider's own count failed, or ${PROVIDER_502}`),
        '503': shapedAnswer('anthropic')(UNAVAILABLE),
        '504': shapedAnswer('anthropic')('provider_timeout'),
      },
    },
  },
  '/v1/embeddings': {
    post: {
      summary: 'OpenAI embeddings, model in the body, billed per prompt token (TEXT_INPUT) from pool-3; errors in the OpenAI shape',
      description: `${gateDescription} An embeddings model passes model_price with an eligible TEXT_INPUT price. The hold is the input's UTF-8 bytes plus its token ids at the TEXT_INPUT price; the charge, usage.prompt_tokens at that price.`,
      'x-gate': 'compat',
      security: [{ apiKey: [] }],
      parameters: [capabilitiesHeader],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/EmbeddingsRequest' } } } },
      responses: {
        '200': { description: 'The embeddings; header x-payg-charged when the settle landed within 5 s (absent: the charge lands later)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Embeddings' } } } },
        ...heldCallErrors(`Invalid input: invalid_request naming the field (an empty or malformed input, more than 2048 inputs, an unknown field), wire_format_mismatch (the model has no embeddings profile), estimate_too_large, provider_rejected, ${BODY_400}, ${CREDENTIAL_400}`, 'openai'),
      },
    },
  },
  '/api/member/v1/entitlement': {
    get: {
      summary: "The member pool of the token's account (member entitlement budget)",
      security: [{ oauth: [] }],
      responses: {
        '200': { description: 'Balance of the member pool', content: { 'application/json': { schema: { $ref: '#/components/schemas/Entitlement' } } } },
        '400': errorAnswer(CREDENTIAL_400),
        '401': errorAnswer('Missing, invalid or expired token'),
        '403': errorAnswer('credential_family_mismatch (an API key) or account_suspended'),
        '503': errorAnswer(`oauth_disabled, oauth_unavailable, ${UNAVAILABLE}`),
      },
    },
  },
  '/api/member/v1/models/{id}/chat': memberChat('openai'),
  '/api/member/v1/models/{id}/chat/anthropic': memberChat('anthropic'),
};
