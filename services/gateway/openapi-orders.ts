// OpenAPI entries of top-up orders and the checkout callback (docs/orders.md). Spread into openapi.ts.

import { MAX_ORDER_AMOUNT, PAYMENT_EVENT_TYPES } from '../../actors/order/OrderInterface';
import { BODY_400, BODY_413, BODY_415, CREDENTIAL_400, errorAnswer, UNAVAILABLE } from './openapi-answers';
import { SIGNATURE_HEADER } from './orders/signature';

const orderAnswer = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } });
const STATUSES = ['created', 'payment_pending', 'failed', 'paid', 'fulfilled', 'payment_mismatch'];

export const orderSecuritySchemes = {
  checkoutSignature: {
    type: 'apiKey',
    in: 'header',
    name: SIGNATURE_HEADER,
    description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under GATEWAY_CHECKOUT_SECRET>; t within GATEWAY_CHECKOUT_TOLERANCE_S (300 s) of now',
  },
};

export const orderSchemas = {
  Order: {
    type: 'object',
    required: ['orderId', 'accountId', 'amount', 'currency', 'scale', 'status', 'createdAt', 'createdBy', 'payments', 'creditReference'],
    properties: {
      orderId: { type: 'string', pattern: '^ord_[0-9a-f]{32}$' },
      accountId: { type: 'string' },
      amount: { type: 'integer', description: 'nano-USD' },
      currency: { type: 'string', enum: ['USD'] },
      scale: { type: 'integer', enum: [9] },
      status: {
        type: 'string',
        enum: STATUSES,
        description: 'fulfilled only once the credit of the amount has been committed to the balance; a checkout callback makes an order paid at most. payment_mismatch: a payment of another amount or currency, held for review, never credited',
      },
      createdAt: { type: 'string', format: 'date-time' },
      createdBy: { type: 'string', enum: ['console', 'operator'] },
      payments: {
        type: 'array',
        description: 'Every checkout callback seen, applied or not (the first and the latest 25 when there are more than 50)',
        items: {
          type: 'object',
          properties: {
            eventId: { type: 'string' }, type: { type: 'string', enum: PAYMENT_EVENT_TYPES }, amount: { type: 'integer' }, currency: { type: 'string' },
            occurredAt: { type: 'string', format: 'date-time' }, receivedAt: { type: 'string', format: 'date-time' }, applied: { type: 'boolean' }, note: { type: 'string' },
          },
        },
      },
      paidAt: { type: 'string', format: 'date-time' },
      fulfilledAt: { type: 'string', format: 'date-time', description: 'Present exactly when the status is fulfilled' },
      creditReference: { type: 'string', description: 'order:<orderId>, the reference of the one credit the order makes' },
    },
  },
  CheckoutReceipt: {
    type: 'object',
    required: ['received', 'eventId', 'orderId', 'applied', 'status'],
    properties: {
      received: { type: 'boolean', enum: [true] },
      eventId: { type: 'string' },
      orderId: { type: 'string' },
      applied: { type: 'boolean', description: 'false: recorded only (a duplicate success, an out-of-order or late failure or pending notice)' },
      status: { type: 'string', enum: STATUSES },
    },
  },
};

const orderIdParameter = { name: 'orderId', in: 'path', required: true, schema: { type: 'string' } };
const idempotencyKey = {
  name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string' },
  description: 'Optional canonical UUID: a retry with the same key (and API key) returns the same order; with another amount 409 idempotency_key_reused',
};

export const orderPaths = {
  '/api/consumer/orders': {
    post: {
      summary: "A top-up order for the caller's own account; pay it at the payment provider, it is credited once the payment's callback has been recorded and the credit committed",
      security: [{ apiKey: [] }, { oauth: [] }],
      parameters: [idempotencyKey],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderRequest' } } } },
      responses: {
        '201': orderAnswer('The order, status created'),
        '400': errorAnswer(`invalid_request (amount not an integer from 1 to 10,000 USD in nano-USD, unknown field), idempotency_key_invalid, ${BODY_400}, ${CREDENTIAL_400}`),
        '401': errorAnswer('Missing or unknown credential'),
        '403': errorAnswer('credential_family_mismatch (OAuth token)'),
        '409': errorAnswer('idempotency_key_reused: the key was used for another order'),
        '413': errorAnswer(`${BODY_413} (64 KiB)`),
        '415': errorAnswer(BODY_415),
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
        '400': errorAnswer(`${CREDENTIAL_400}; invalid_request (a path that is not valid percent-encoding)`),
        '401': errorAnswer('Missing or unknown credential'),
        '403': errorAnswer('credential_family_mismatch (OAuth token)'),
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
        '200': { description: 'Recorded (applied or not)', content: { 'application/json': { schema: { $ref: '#/components/schemas/CheckoutReceipt' } } } },
        '400': errorAnswer(`${BODY_400} or invalid_request (a field missing or invalid, an unknown event type), after the signature was verified`),
        '401': errorAnswer('signature_required, signature_invalid (forged, another secret, another body, malformed header) or signature_stale (timestamp outside the tolerance); nothing changed'),
        '404': errorAnswer('not_found: no such order; nothing changed'),
        '409': errorAnswer('callback_replayed: this event id was already processed for the order (with orderId and status); nothing changed'),
        '413': errorAnswer(`${BODY_413} (64 KiB)`),
        '415': errorAnswer(BODY_415),
        '503': errorAnswer(`checkout_disabled: GATEWAY_CHECKOUT_SECRET is not set; ${UNAVAILABLE}`),
      },
    },
  },
};
