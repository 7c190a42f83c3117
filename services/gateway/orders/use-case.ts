// Top-up orders, as a story. An order is created for an account (by its owner on the console
// route, or by an operator) and read by its owner only. The payment provider tells the gateway
// what happened through signed checkout callbacks: the signature is checked over the raw bytes
// first, then the payload; the order records the callback (paid at most), and only then is the
// money moved, in the order's next turn (fulfil: one FundsHold credit per order). When that
// credit cannot be made now, the order stays paid and its reminder retries.

import type { Logger } from 'pino';
import type { OrderClient } from '../../../actors/order/client';
import type { OrderCreator, OrderView } from '../../../actors/order/OrderInterface';
import { GatewayError } from '../../../lib/errors';
import { parseIdempotencyKey } from '../images/request';
import { isOrderId, orderIdFor, parseCallbackBody, parseOrderBody } from './request';
import { verifyCheckoutSignature } from './signature';

export interface CheckoutSettings {
  /** HMAC-SHA256 secret shared with the payment provider; unset: callbacks are refused (503). */
  secret?: string;
  toleranceS: number;
}

export interface OrderDeps {
  orders: OrderClient;
  checkout: CheckoutSettings;
  logger: Logger;
}

export interface CreateOrderInput {
  accountId: string;
  createdBy: OrderCreator;
  /** Who may retry with the same Idempotency-Key: the API key, or the operator. */
  scope: string;
  body: unknown;
  idempotencyKey: string | string[] | undefined;
}

export interface CallbackInput {
  raw: Buffer | undefined;
  signature: string | string[] | undefined;
}

export interface CallbackReceipt {
  received: true;
  eventId: string;
  orderId: string;
  /** Whether the callback moved the order (false: recorded only). */
  applied: boolean;
  /** The order's status after the callback and, when it paid the order, after the credit attempt. */
  status: OrderView['status'];
}

export class OrderService {
  constructor(private readonly deps: OrderDeps) {}

  /** The order, and whether it already existed (a retry with the same Idempotency-Key: a replay). */
  async create(input: CreateOrderInput): Promise<{ order: OrderView; replayed: boolean }> {
    const { amount } = parseOrderBody(input.body);
    const key = input.idempotencyKey === undefined ? undefined : parseIdempotencyKey(input.idempotencyKey);
    const orderId = orderIdFor(input.accountId, input.scope, key);
    const outcome = await this.deps.orders.of(orderId).create({ accountId: input.accountId, amount, createdBy: input.createdBy });
    return { order: outcome.order, replayed: !outcome.created };
  }

  /** The caller's own order; another account's, an unknown or a malformed id: the same 404. */
  async get(accountId: string, orderId: string): Promise<OrderView> {
    if (!isOrderId(orderId)) throw new GatewayError('not_found', 'no such order');
    return this.deps.orders.of(orderId).view({ accountId });
  }

  /** Refuses callbacks while no secret is configured: 503, so the provider retries them later. */
  assertCheckoutEnabled(): void {
    if (!this.deps.checkout.secret) throw new GatewayError('checkout_disabled', 'checkout callbacks are off (GATEWAY_CHECKOUT_SECRET is not set)');
  }

  async callback(input: CallbackInput): Promise<CallbackReceipt> {
    this.assertCheckoutEnabled();
    const body = input.raw ?? Buffer.alloc(0);
    verifyCheckoutSignature({ header: input.signature, body, secret: this.deps.checkout.secret as string, toleranceS: this.deps.checkout.toleranceS, nowMs: Date.now() });
    const { orderId, ...event } = parseCallbackBody(body);
    if (!isOrderId(orderId)) throw new GatewayError('not_found', 'no such order', { param: 'orderId' });
    const order = this.deps.orders.of(orderId);
    const recorded = await order.recordPayment(event);
    let status = recorded.order.status;
    if (status === 'paid') {
      try {
        status = (await order.fulfil({})).status;
      } catch (error) {
        // Recorded all the same: the order stays paid and its reminder retries the credit.
        this.deps.logger.warn({ err: error, orderId }, 'order paid, credit not made yet: the reminder retries');
      }
    }
    return { received: true, eventId: event.id, orderId, applied: recorded.applied, status };
  }
}
