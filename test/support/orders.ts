// HTTP helpers for orders and checkout callbacks. Callbacks are signed here with node:crypto
// directly (not with the gateway's own signer), as a payment provider would sign them.

import { createHmac, randomUUID } from 'node:crypto';
import { admin, json } from './api';

export const CHECKOUT_SECRET = 'test-checkout-secret-0123456789abcdef';

export function createOrder(base: string, apiKey: string, body: unknown, headers: Record<string, string> = {}, raw?: string) {
  return json(`${base}/api/consumer/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: raw ?? JSON.stringify(body),
  });
}

export function getOrder(base: string, apiKey: string, orderId: string) {
  return json(`${base}/api/consumer/orders/${orderId}`, { headers: { authorization: `Bearer ${apiKey}` } });
}

export function operatorOrder(base: string, accountId: string, body: unknown) {
  return admin(base, `/admin/v1/accounts/${accountId}/orders`, body);
}

export function signature(body: string, options: { secret?: string; timestampS?: number } = {}): string {
  const t = options.timestampS ?? Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', options.secret ?? CHECKOUT_SECRET).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${v1}`;
}

export interface CheckoutPayload {
  id: string;
  type: 'payment.succeeded' | 'payment.failed' | 'payment.pending';
  orderId: string;
  amount: number;
  currency: string;
  occurredAt: string;
}

export function paymentEvent(orderId: string, amount: number, type: CheckoutPayload['type'], overrides: Partial<CheckoutPayload> = {}): CheckoutPayload {
  return { id: `evt_${randomUUID()}`, type, orderId, amount, currency: 'USD', occurredAt: new Date().toISOString(), ...overrides };
}

/** Posts a callback: signed over its exact bytes unless `header` says otherwise (null: no header). */
export function checkoutCallback(base: string, payload: unknown, options: { raw?: string; header?: string | null; secret?: string; timestampS?: number; contentType?: string } = {}) {
  const body = options.raw ?? JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json' };
  const header = options.header === undefined ? signature(body, options) : options.header;
  if (header !== null) headers['checkout-signature'] = header;
  return json(`${base}/api/consumer/checkout/callback`, { method: 'POST', headers, body });
}
