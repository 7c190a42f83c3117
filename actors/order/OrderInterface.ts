// The public API of the Order actor: one actor per top-up order, the order id is the actor id.
// An order is paid by the payment provider (its checkout callbacks are recorded here) and
// fulfilled by a credit on the owner's FundsHold, once per order (reference `order:<orderId>`).
// A callback never makes an order fulfilled by itself: fulfillment is the credit, and the order
// shows `fulfilled` only once that credit has been committed (docs/orders.md).
// Callers depend on this file only; the actor type name "Order" is frozen.

import { z } from 'zod';
import { GatewayError } from '../../lib/errors';

export const ORDER_ACTOR_TYPE = 'Order';
export const ORDER_CURRENCY = 'USD';
/** The largest top-up one order may carry: 10,000 USD in nano-USD (docs/orders.md). */
export const MAX_ORDER_AMOUNT = 10_000_000_000_000;

/** The statuses of the transition table in transitions.ts. */
export type OrderStatus = 'created' | 'payment_pending' | 'failed' | 'paid' | 'fulfilled' | 'payment_mismatch';
export type OrderCreator = 'console' | 'operator';

/** 409: the order of this Idempotency-Key was made with another amount (or by another creator). */
export function orderKeyReused(): GatewayError {
  return new GatewayError('idempotency_key_reused', 'this Idempotency-Key was already used for another order', { param: 'Idempotency-Key' });
}

export const PAYMENT_EVENT_TYPES = ['payment.succeeded', 'payment.failed', 'payment.pending'] as const;
export type PaymentEventType = (typeof PAYMENT_EVENT_TYPES)[number];

/** Credit references of this prefix are made by orders only (the operator credit route refuses them). */
export const ORDER_REFERENCE_PREFIX = 'order:';

/** The FundsHold credit reference of an order: the credit is idempotent per reference. */
export function orderCreditReference(orderId: string): string {
  return `${ORDER_REFERENCE_PREFIX}${orderId}`;
}

export interface CreateOrderRequest {
  /** The owner: the account the top-up is credited to. */
  accountId: string;
  /** nano-USD, 1 to MAX_ORDER_AMOUNT. */
  amount: number;
  createdBy: OrderCreator;
}

/** A checkout callback, its signature already verified by the gateway. */
export interface PaymentEvent {
  /** The provider's event id: the same event again is a replay (answered, nothing changed); another payload under an id already processed is refused (callback_replayed). */
  id: string;
  type: PaymentEventType;
  /** What the provider says was paid, in the minor unit of `currency` (nano-USD for USD). */
  amount: number;
  currency: string;
  /** When the provider says it happened (RFC 3339): orders failures and pending notices. */
  occurredAt: string;
}

/** A callback as the order keeps it: every one seen, applied or not, and why. */
export interface PaymentRecord {
  eventId: string;
  type: PaymentEventType;
  amount: number;
  currency: string;
  occurredAt: string;
  receivedAt: string;
  applied: boolean;
  note: string;
}

export interface OrderView {
  orderId: string;
  accountId: string;
  amount: number;
  currency: typeof ORDER_CURRENCY;
  status: OrderStatus;
  createdAt: string;
  createdBy: OrderCreator;
  /** The callbacks seen, in the order they arrived (the first and the latest ones when there are many). */
  payments: PaymentRecord[];
  /** When the succeeded callback that paid the order was recorded. */
  paidAt?: string;
  /** When the credit was committed: present exactly when the status is fulfilled. */
  fulfilledAt?: string;
  creditReference: string;
}

export interface CreateOrderOutcome {
  /** false: the order already existed with this same request (an idempotent retry). */
  created: boolean;
  order: OrderView;
}

export interface PaymentOutcome {
  /** Whether the callback moved the order (false: recorded only; see the note of its record). */
  applied: boolean;
  /** The event was processed before, with this same payload: nothing was recorded or moved again. */
  replayed: boolean;
  order: OrderView;
}

export interface OrderApi {
  /** Creates the order, or returns it when it exists with the same owner, amount and creator. */
  create(request: CreateOrderRequest): Promise<CreateOrderOutcome>;
  /** Records a verified checkout callback; a known event id is a replay (nothing changes), or with another payload refused (callback_replayed). */
  recordPayment(event: PaymentEvent): Promise<PaymentOutcome>;
  /** Credits a paid order's amount to its owner, then shows it fulfilled; retried by reminder until it has. */
  fulfil(request: Record<string, never>): Promise<OrderView>;
  /** The order, for its owner only: anyone else gets not_found. */
  view(owner: { accountId: string }): Promise<OrderView>;
}

export const ORDER_METHODS = ['create', 'recordPayment', 'fulfil', 'view'] as const satisfies readonly (keyof OrderApi)[];

/** Each method's argument, checked by the host before the actor sees it (actors/runtime/args.ts). */
export const ORDER_ARGS = {
  create: z.looseObject({ accountId: z.string().min(1), amount: z.number(), createdBy: z.enum(['console', 'operator']) }),
  recordPayment: z.looseObject({ id: z.string().min(1), type: z.string(), amount: z.number(), currency: z.string(), occurredAt: z.string() }),
  fulfil: z.looseObject({}),
  view: z.looseObject({ accountId: z.string().min(1) }),
} satisfies Record<(typeof ORDER_METHODS)[number], z.ZodType>;
