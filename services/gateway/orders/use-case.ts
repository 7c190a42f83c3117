// Top-up orders, as a story. An order is created for an account (by its owner on the console
// route, or by an operator) and read by its owner only. The payment provider tells the gateway
// what happened through signed checkout callbacks: the signature is checked over the raw bytes
// first, then the payload; the order records the callback (paid at most), and only then is the
// money moved, in the order's next turn (fulfil: one FundsHold credit per order). When that
// credit cannot be made now, the order stays paid and its reminder retries.

import type { Logger } from 'pino';
import type { AccountClient } from '../../../actors/account/client';
import type { OrderClient } from '../../../actors/order/client';
import { orderKeyReused, type OrderCreator, type OrderView } from '../../../actors/order/OrderInterface';
import { GatewayError, NO_RETRY } from '../../../lib/errors';
import { parseIdempotencyKey } from '../images/request';
import { isOrderId, orderIdFor, parseCallbackBody, parseOrderBody } from './request';
import { verifyCheckoutSignature } from './signature';

/** The longest Retry-After OpenAI's Python SDK waits for before retrying (a longer one it ignores). */
const SDK_MAX_RETRY_AFTER_S = 60;

export interface CheckoutSettings {
  /** HMAC-SHA256 secret shared with the payment provider; unset: callbacks are refused (503). */
  secret?: string;
  toleranceS: number;
}

export interface OrderDeps {
  orders: OrderClient;
  checkout: CheckoutSettings;
  logger: Logger;
  /**
   * How many orders an account may create on the console route per UTC day, counted by its
   * Account actor (so across every gateway instance). Each order is kept for good, paid or not.
   */
  daily?: { accounts: AccountClient; perDay: number };
}

export interface CreateOrderInput {
  accountId: string;
  createdBy: OrderCreator;
  /** Who may retry with the same Idempotency-Key: the API key, or the operator. */
  scope: string;
  body: unknown;
  idempotencyKey: string | string[] | undefined;
}

/** Counts a new creation as one request of its caller's requests_per_minute (routes/orders.ts): its rate headers beside its result. */
export type RequestCount = <T extends { replayed: boolean }>(call: () => Promise<T>) => Promise<{ result: T; headers: Record<string, string> }>;

/** No rate limit counts the creation (the operator's route). */
const uncounted: RequestCount = async (call) => ({ result: await call(), headers: {} });

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
  /** The same event was processed before (a delivery again): nothing was recorded or moved again. */
  replayed: boolean;
  /** The order's status after the callback and, when it paid the order, after the credit attempt. */
  status: OrderView['status'];
}

export class OrderService {
  constructor(private readonly deps: OrderDeps) {}

  /**
   * The order, and whether it already existed (a retry with the same Idempotency-Key: a replay),
   * with the rate headers of `count` when it counted the creation.
   */
  async create(input: CreateOrderInput, count: RequestCount = uncounted): Promise<{ order: OrderView; replayed: boolean; headers: Record<string, string> }> {
    const { amount } = parseOrderBody(input.body);
    const key = input.idempotencyKey === undefined ? undefined : parseIdempotencyKey(input.idempotencyKey);
    const order = this.deps.orders.of(orderIdFor(input.accountId, input.scope, key));
    const create = async () => {
      const outcome = await order.create({ accountId: input.accountId, amount, createdBy: input.createdBy });
      return { order: outcome.order, replayed: !outcome.created };
    };
    // A retry of an order already made stores nothing new and does no new work: it is answered
    // before anything is counted, neither in the day's orders nor in the caller's
    // requests_per_minute, so it never holds a place of either, even for a moment, from a new order.
    const made = key === undefined ? undefined : await this.stored(input.accountId, order);
    if (made && made.amount === amount && made.createdBy === input.createdBy) return { ...(await create()), headers: {} };
    // The same key with another order is refused (409) there too, before anything is counted: no
    // retry of it can succeed, so it is not told to wait for a window (429) first. A replay found
    // only once counted (its first attempt concurrent with this one) gives its request back.
    if (made) throw orderKeyReused();
    const { result, headers } = await count(() => this.createCounted(input, key, order, create));
    return { ...result, headers };
  }

  /** A creation counted in the account's orders of the day (the operator's are not). */
  private async createCounted(input: CreateOrderInput, key: string | undefined, order: ReturnType<OrderClient['of']>, create: () => Promise<{ order: OrderView; replayed: boolean }>): Promise<{ order: OrderView; replayed: boolean }> {
    const daily = this.deps.daily;
    // The operator's orders are not counted: the cap bounds what a customer's credential can store.
    if (!daily || input.createdBy === 'operator') return create();
    const account = daily.accounts.of(input.accountId);
    const counted = await account.countOrder({ limit: daily.perDay });
    if (!counted.admitted) {
      // A retry of an order made meanwhile (its first attempt concurrent with this one) is answered as always.
      if (key !== undefined && (await this.exists(input.accountId, order))) return create();
      const retryAfter = Math.max(1, Math.ceil(counted.retryAfterMs / 1000));
      throw new GatewayError('rate_limit_exceeded', `the account has created its ${counted.limit} orders of ${counted.day} (UTC); more can be created from the next UTC day, in ${retryAfter} s`, {
        param: 'orders_per_day',
        // Past a minute an SDK's retry is no use: OpenAI's Python SDK ignores so long a Retry-After
        // and retries within seconds, the others would hold the call for up to that long.
        headers: { 'retry-after': String(retryAfter), 'retry-after-ms': String(Math.max(0, counted.retryAfterMs)), ...(retryAfter > SDK_MAX_RETRY_AFTER_S ? NO_RETRY : {}) },
      });
    }
    const giveBack = () => account.uncountOrder({ day: counted.day }).catch((error: unknown) => this.deps.logger.warn({ err: error, accountId: input.accountId }, 'an order count was not given back; the day counts one order more'));
    let created: Awaited<ReturnType<typeof create>>;
    try {
      created = await create();
    } catch (error) {
      // A failure may still have made the order (an answer lost on its way back, a timeout):
      // the count is given back only once the order is known not to exist. The actor answers
      // the look after the creation's turn, whatever became of it; a look that fails too keeps
      // the count (the day then counts one order more: the cap errs on its own side).
      if (!(await this.exists(input.accountId, order).catch(() => true))) await giveBack();
      throw error;
    }
    // A replay made nothing new: it does not count.
    if (created.replayed) await giveBack();
    return created;
  }

  /** The order as this account sees it, or undefined when it does not exist for it (a view answers 404). */
  private async stored(accountId: string, order: ReturnType<OrderClient['of']>): Promise<OrderView | undefined> {
    try {
      return await order.view({ accountId });
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'not_found') return undefined;
      throw error;
    }
  }

  /** Whether the order exists for this account. */
  private async exists(accountId: string, order: ReturnType<OrderClient['of']>): Promise<boolean> {
    return (await this.stored(accountId, order)) !== undefined;
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
    return { received: true, eventId: event.id, orderId, applied: recorded.applied, replayed: recorded.replayed, status };
  }
}
