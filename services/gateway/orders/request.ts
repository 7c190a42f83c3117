// What the order routes accept: the order request ({"amount"}), order ids, and the checkout
// callback's payload (parsed only after its signature has been verified over the raw bytes).

import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { MAX_ORDER_AMOUNT, PAYMENT_EVENT_TYPES, type PaymentEvent } from '../../../actors/order/OrderInterface';
import { GatewayError } from '../../../lib/errors';
import { decodeJsonText } from '../middleware/json-body';
import { parseJsonObject } from '../json-object';

const ORDER_ID = /^ord_[0-9a-f]{32}$/;

export const orderBody = z.object({
  amount: z.number().int('must be an integer (nano-USD)').min(1, 'must be at least 1').max(MAX_ORDER_AMOUNT, `must be at most ${MAX_ORDER_AMOUNT} (10,000 USD)`),
}).strict();

export const callbackBody = z.looseObject({
  id: z.string().min(1).max(200).describe("The provider's event id; the same event delivered again is answered 200 with replayed: true and changes nothing; another payload under an id already processed is refused (409 callback_replayed)"),
  type: z.enum(PAYMENT_EVENT_TYPES),
  orderId: z.string().min(1).max(200),
  amount: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe('What was paid, in nano-USD for USD'),
  currency: z.string().min(1).max(16).describe('ISO 4217 code, compared case-insensitively with USD'),
  occurredAt: z.iso.datetime({ offset: true }).describe('Orders failures and pending notices: one older than the callback the status rests on changes nothing'),
});

export type CheckoutCallback = PaymentEvent & { orderId: string };

export function parseOrderBody(body: unknown): { amount: number } {
  return parseJsonObject(orderBody, body);
}

/** The callback payload from the raw bytes: invalid JSON or fields are 400, never more. */
export function parseCallbackBody(raw: Buffer | undefined): CheckoutCallback {
  if (!raw || raw.length === 0) throw new GatewayError('invalid_request', 'the callback body must be a JSON object');
  const text = decodeJsonText(raw);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_json', 'the callback body is not valid JSON');
  }
  const { id, type, orderId, amount, currency, occurredAt } = parseJsonObject(callbackBody, body);
  return { id, type, orderId, amount, currency, occurredAt };
}

export function isOrderId(value: string): boolean {
  return ORDER_ID.test(value);
}

/**
 * A new order's id: random, or, with an Idempotency-Key, derived from the key and its scope
 * (the account and the API key, or the operator), so a retry finds the same order.
 */
export function orderIdFor(accountId: string, scope: string, idempotencyKey?: string): string {
  if (idempotencyKey === undefined) return `ord_${randomUUID().replaceAll('-', '')}`;
  return `ord_${createHash('sha256').update(`order\u0000${accountId}\u0000${scope}\u0000${idempotencyKey}`).digest('hex').slice(0, 32)}`;
}
