// Order actor: one top-up order (see OrderInterface.ts and transitions.ts). A checkout callback is
// recorded in one turn (paid, never fulfilled); the money moves in the next: `fulfil` credits the
// order's amount on the owner's FundsHold under the reference `order:<orderId>` (idempotent per
// reference, so a turn that fails after the credit can simply be run again) and only then shows
// the order fulfilled. A reminder retries `fulfil` until it has.

import { FundsHoldClient } from '../funds-hold/client';
import { DEFAULT_POOL } from '../funds-hold/FundsHoldInterface';
import { GatewayError } from '../../lib/errors';
import type { ActorContext, ActorInstance } from '../runtime/port';
import { LifecycleRecord } from '../runtime/lifecycle';
import { StateRecords } from '../runtime/state-record';
import { fromStored, storedAmount, toJsonAmount, type StoredAmount } from '../../lib/money';
import {
  MAX_ORDER_AMOUNT,
  ORDER_ACTOR_TYPE,
  ORDER_CURRENCY,
  ORDER_ARGS,
  ORDER_METHODS,
  PAYMENT_EVENT_TYPES,
  orderCreditReference,
  orderKeyReused,
  type CreateOrderOutcome,
  type CreateOrderRequest,
  type OrderApi,
  type OrderCreator,
  type OrderStatus,
  type OrderView,
  type PaymentEvent,
  type PaymentOutcome,
  type PaymentRecord,
} from './OrderInterface';
import { isCurrent, ORDER_LIFECYCLE, paymentMove, type OrderMove } from './transitions';

const ORDER_KEY = 'order';
/** One small record per callback event id seen: a replay is recognised however many came since. */
const EVENT_KEY_PREFIX = 'event:';
const FULFIL_REMINDER = 'fulfil';
const FULFIL_RETRY_MS = 2000;
/** The view keeps the first callbacks and the latest ones. */
const MAX_PAYMENT_RECORDS = 50;
const CREATORS: readonly OrderCreator[] = ['console', 'operator'];

interface OrderRecord {
  status: OrderStatus;
  accountId: string;
  /** nano-USD. */
  amount: StoredAmount;
  createdAt: number;
  createdBy: OrderCreator;
  /** occurredAt (ms) of the callback the status rests on; null while no callback has moved it. */
  statusAt: number | null;
  payments: PaymentRecord[];
  paidAt?: number;
  fulfilledAt?: number;
  /** The pending fulfil reminder's name (unique per registration: Dapr Scheduler). */
  fulfilReminder?: string;
}

/** Records written before amounts were stored as strings hold a number: read as the string. */
function upgradeOrder(order: OrderRecord): OrderRecord {
  return typeof order.amount === 'number' ? { ...order, amount: storedAmount(order.amount) } : order;
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `${param} ${message}`, { param });
}

function orderAmount(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_ORDER_AMOUNT) {
    throw invalid('amount', `must be an integer from 1 to ${MAX_ORDER_AMOUNT} (nano-USD)`);
  }
  return value;
}

function text(value: unknown, param: string, maxLength: number): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) throw invalid(param, `must be a string of 1 to ${maxLength} characters`);
  return value;
}

/** What an order keeps of each callback event id it has processed: when, and what it said. */
interface SeenEvent {
  at: number;
  type: PaymentEvent['type'];
  amount: number;
  currency: string;
  /** RFC 3339, as recorded (normalised). */
  occurredAt: string;
}

/** What a callback says, beside its id: a delivery of the same event says the same. */
const payloadOf = (event: Omit<SeenEvent, 'at'>): Omit<SeenEvent, 'at'> => ({ type: event.type, amount: event.amount, currency: event.currency, occurredAt: event.occurredAt });
const samePayload = (a: Omit<SeenEvent, 'at'>, b: Omit<SeenEvent, 'at'>) => JSON.stringify(payloadOf(a)) === JSON.stringify(payloadOf(b));

/** The callback as the actor accepts it (the gateway has validated it already; the actor owns its invariants). */
function checkedEvent(event: PaymentEvent): PaymentEvent & { occurredAtMs: number } {
  const id = text(event?.id, 'id', 200);
  if (!PAYMENT_EVENT_TYPES.includes(event.type)) throw invalid('type', `must be one of ${PAYMENT_EVENT_TYPES.join(', ')}`);
  if (typeof event.amount !== 'number' || !Number.isSafeInteger(event.amount) || event.amount < 0) throw invalid('amount', 'must be a non-negative integer');
  const currency = text(event.currency, 'currency', 16);
  const occurredAtMs = Date.parse(text(event.occurredAt, 'occurredAt', 64));
  if (!Number.isFinite(occurredAtMs)) throw invalid('occurredAt', 'must be an RFC 3339 date-time');
  return { id, type: event.type, amount: event.amount, currency, occurredAt: new Date(occurredAtMs).toISOString(), occurredAtMs };
}

export class Order implements OrderApi, ActorInstance {
  static readonly actorType = ORDER_ACTOR_TYPE;
  static readonly methods = ORDER_METHODS;
  static readonly args = ORDER_ARGS;

  private readonly funds: FundsHoldClient;
  private readonly stored: LifecycleRecord<OrderRecord, OrderStatus, OrderMove>;
  /**
   * Each checkout event recorded, by event id: a delivery of it again is answered as it stands,
   * another payload under its id is refused. (Orders recorded before payloads were kept hold the
   * time only: their payload is read from the order's payment records.)
   */
  private readonly seenEvents: StateRecords<SeenEvent | number>;

  constructor(private readonly ctx: ActorContext) {
    this.funds = new FundsHoldClient(ctx.actors);
    this.stored = new LifecycleRecord(ctx.state, ORDER_KEY, 'no such order', ORDER_LIFECYCLE, { of: (order) => order.status, set: (order, to) => { order.status = to; } }, upgradeOrder);
    this.seenEvents = new StateRecords(ctx.state, EVENT_KEY_PREFIX);
  }

  async create(request: CreateOrderRequest): Promise<CreateOrderOutcome> {
    const accountId = text(request.accountId, 'accountId', 200);
    const amount = orderAmount(request.amount);
    if (!CREATORS.includes(request.createdBy)) throw invalid('createdBy', `must be one of ${CREATORS.join(', ')}`);
    const existing = await this.stored.load();
    if (existing) {
      if (existing.accountId !== accountId || fromStored(existing.amount) !== BigInt(amount) || existing.createdBy !== request.createdBy) {
        throw orderKeyReused();
      }
      return { created: false, order: this.view_(existing) };
    }
    const order = this.stored.create('create', (status): OrderRecord => ({
      status,
      accountId,
      amount: storedAmount(amount),
      createdAt: this.ctx.now(),
      createdBy: request.createdBy,
      statusAt: null,
      payments: [],
    }));
    return { created: true, order: this.view_(order) };
  }

  async recordPayment(raw: PaymentEvent): Promise<PaymentOutcome> {
    const order = await this.stored.required();
    const event = checkedEvent(raw);
    const seen = await this.seenEvents.get(event.id);
    if (seen !== undefined) {
      // The provider delivers an event again until it has its 2xx: the same event is answered
      // as received, and nothing moves or is recorded again.
      const recorded = typeof seen === 'number' ? order.payments.find((p) => p.eventId === event.id) : seen;
      if (!recorded || samePayload(recorded, event)) return { applied: false, replayed: true, order: this.view_(order) };
      throw new GatewayError('callback_replayed', `checkout event ${event.id} was already processed with another payload (type, amount, currency or occurredAt); nothing changed`, { extra: { orderId: this.ctx.actorId, status: order.status } });
    }
    const now = this.ctx.now();
    const matches = BigInt(event.amount) === fromStored(order.amount) && event.currency.toUpperCase() === ORDER_CURRENCY;
    const move: OrderMove = paymentMove(event.type, matches);
    const from = order.status;
    const allowed = this.stored.allows(order, move);
    const applied = allowed && isCurrent(move, event.occurredAtMs, order.statusAt);
    let note = allowed
      ? `ignored: older than the callback the status ${from} rests on`
      : `ignored: an order that is ${from} does not take ${event.type}`;
    if (applied) {
      await this.stored.move(order, move, async (_, to) => {
        note = move === 'mismatch'
          ? `held for review: paid ${event.amount} ${event.currency}, the order is ${order.amount} ${ORDER_CURRENCY}; nothing credited`
          : `${from} → ${to}`;
        order.statusAt = event.occurredAtMs;
        if (to === 'paid') {
          order.paidAt = now;
          // Should the gateway not come back to fulfil (or its credit fail), the reminder does.
          order.fulfilReminder = `${FULFIL_REMINDER}@${now + FULFIL_RETRY_MS}`;
          await this.ctx.reminders.register(order.fulfilReminder, FULFIL_RETRY_MS);
        }
      });
    }
    order.payments.push({
      eventId: event.id, type: event.type, amount: event.amount, currency: event.currency, occurredAt: event.occurredAt,
      receivedAt: new Date(now).toISOString(), applied, note,
    });
    if (order.payments.length > MAX_PAYMENT_RECORDS) order.payments.splice(MAX_PAYMENT_RECORDS / 2, 1);
    this.seenEvents.set(event.id, { at: now, ...payloadOf(event) });
    this.stored.save(order);
    return { applied, replayed: false, order: this.view_(order) };
  }

  async fulfil(): Promise<OrderView> {
    const order = await this.stored.required();
    if (order.status !== 'paid') return this.view_(order);
    await this.stored.move(order, 'fulfil', async () => {
      // The credit first: the order shows fulfilled only once the credit has been committed.
      await this.funds.of(order.accountId, DEFAULT_POOL).credit({ amount: toJsonAmount(fromStored(order.amount)), reference: orderCreditReference(this.ctx.actorId) });
      order.fulfilledAt = this.ctx.now();
      if (order.fulfilReminder) {
        // Were the unregistering lost, the reminder finds the order fulfilled and does nothing.
        await this.ctx.reminders.unregister(order.fulfilReminder).catch(() => undefined);
        delete order.fulfilReminder;
      }
    });
    return this.view_(order);
  }

  async view(owner: { accountId: string }): Promise<OrderView> {
    const order = await this.stored.load();
    // Another account learns nothing, not even that the order exists.
    if (!order || order.accountId !== owner?.accountId) throw new GatewayError('not_found', 'no such order');
    return this.view_(order);
  }

  async onReminder(name: string): Promise<void> {
    // A failure throws: the host retries the reminder until the credit has been made.
    if (name.startsWith(FULFIL_REMINDER)) await this.fulfil();
  }

  private view_(order: OrderRecord): OrderView {
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      orderId: this.ctx.actorId,
      accountId: order.accountId,
      amount: toJsonAmount(fromStored(order.amount)),
      currency: ORDER_CURRENCY,
      status: order.status,
      createdAt: iso(order.createdAt),
      createdBy: order.createdBy,
      payments: order.payments,
      ...(order.paidAt !== undefined ? { paidAt: iso(order.paidAt) } : {}),
      ...(order.fulfilledAt !== undefined ? { fulfilledAt: iso(order.fulfilledAt) } : {}),
      creditReference: orderCreditReference(this.ctx.actorId),
    };
  }
}
