// OpenAPI entries of top-up orders and the checkout callback (docs/orders.md). Spread into openapi.ts.

import { checkoutReceiptAnswer, orderAnswer as orderSchema } from './answer-schemas';
import { BODY_400, BODY_413, BODY_415, CREDENTIAL_400, errorAnswer, IDEMPOTENCY_KEY_PATTERN, jsonSchemaOf, RETRY_AFTER_HEADERS, UNAVAILABLE } from './openapi-answers';
import { SIGNATURE_HEADER } from './orders/signature';

const orderAnswer = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } });

export const orderSecuritySchemes = {
  checkoutSignature: {
    type: 'apiKey',
    in: 'header',
    name: SIGNATURE_HEADER,
    description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under GATEWAY_CHECKOUT_SECRET>; t within GATEWAY_CHECKOUT_TOLERANCE_S (300 s) of now',
  },
};

export const orderSchemas = {
  Order: jsonSchemaOf(orderSchema, 'output'),
  CheckoutReceipt: jsonSchemaOf(checkoutReceiptAnswer, 'output'),
};

const orderIdParameter = { name: 'orderId', in: 'path', required: true, schema: { type: 'string' } };
/** The optional Idempotency-Key of both order creation routes (the owner's and an operator's). */
export const orderIdempotencyKey = {
  name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN },
  description: 'Optional canonical UUID: a retry with the same key (and API key) returns the same order; with another amount 409 idempotency_key_reused',
};

export const orderPaths = {
  '/api/consumer/orders': {
    post: {
      summary: "A top-up order for the caller's own account; pay it at the payment provider, it is credited once the payment's callback has been recorded and the credit committed",
      security: [{ apiKey: [] }, { oauth: [] }],
      parameters: [orderIdempotencyKey],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderRequest' } } } },
      responses: {
        '201': orderAnswer('The order, status created; header x-payg-replayed: true when the Idempotency-Key named an existing order (the same order again)'),
        '400': errorAnswer(`invalid_request (amount not an integer from 1 to 10,000 USD in nano-USD, unknown field), idempotency_key_invalid, ${BODY_400}, ${CREDENTIAL_400}`),
        '401': errorAnswer('Missing or unknown credential'),
        '403': errorAnswer('credential_family_mismatch (OAuth token) or account_suspended'),
        '409': errorAnswer('idempotency_key_reused: the key was used for another order'),
        '413': errorAnswer(`${BODY_413} (64 KiB)`),
        '415': errorAnswer(BODY_415),
        '429': { ...errorAnswer('rate_limit_exceeded: `param` requests_per_minute (the key\'s or the account\'s is reached; an order counts as one request, its replay none; Retry-After and Retry-After-Ms say when the window starts again) or orders_per_day (the account has created its GATEWAY_ORDERS_PER_DAY orders of this UTC day; Retry-After and Retry-After-Ms: until the next day); nothing is created'), headers: RETRY_AFTER_HEADERS },
        '503': errorAnswer(`${UNAVAILABLE}; oauth_unavailable`),
      },
    },
  },
  '/api/consumer/orders/{orderId}': {
    get: {
      summary: "The caller's own order: its status is where fulfillment is read (a checkout callback is no proof of it)",
      security: [{ apiKey: [] }, { oauth: [] }],
      parameters: [orderIdParameter],
      responses: {
        '200': orderAnswer('The order'),
        '400': errorAnswer(`${CREDENTIAL_400}; invalid_request (a path that is not valid percent-encoding, or a query parameter: this route takes none)`),
        '401': errorAnswer('Missing or unknown credential'),
        '403': errorAnswer('credential_family_mismatch (OAuth token) or account_suspended'),
        '404': errorAnswer("not_found: no such order for this account (another account's, an unknown and a malformed id all answer the same)"),
        '503': errorAnswer(`${UNAVAILABLE}; oauth_unavailable`),
      },
    },
  },
  '/api/consumer/checkout/callback': {
    post: {
      summary: "The payment provider's callback: records a payment on the order (paid at most); the credit that fulfils the order follows, once per order",
      security: [{ checkoutSignature: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CheckoutEvent' } } } },
      responses: {
        '200': { description: 'Recorded (applied or not); or the same event delivered again (replayed: true, nothing changed)', content: { 'application/json': { schema: { $ref: '#/components/schemas/CheckoutReceipt' } } } },
        '400': errorAnswer(`${BODY_400} or invalid_request (a field missing or invalid, an unknown event type), after the signature was verified`),
        '401': errorAnswer('signature_required, signature_invalid (forged, another secret, another body, malformed header) or signature_stale (timestamp outside the tolerance); nothing changed'),
        '404': errorAnswer('not_found: no such order; nothing changed'),
        '409': errorAnswer('callback_replayed: this event id was already processed for the order with another payload (type, amount, currency or occurredAt; with orderId and status); nothing changed'),
        '413': errorAnswer(`${BODY_413} (64 KiB)`),
        '415': errorAnswer(BODY_415),
        '503': errorAnswer(`checkout_disabled: GATEWAY_CHECKOUT_SECRET is not set; ${UNAVAILABLE}`),
      },
    },
  },
};
