// The order lifecycle as one explicit table: for each status, the moves it accepts and the
// status each move leads to. A move not in the table is refused (a callback asking for one is
// recorded, and changes nothing).
//
//   (new) ──create──> created ──pending──> payment_pending ──fail──> failed
//                        │  (created, payment_pending and failed take pending, fail, succeed, mismatch)
//                        ├──succeed──> paid ──fulfil (the FundsHold credit committed)──> fulfilled
//                        └──mismatch──> payment_mismatch (paid, but not the order's amount or currency)
//
// A success always wins over failures and pending notices: the provider took the money. A failure
// or a pending notice is applied only if it is not older than the callback the status rests on.

import { GatewayError } from '../../lib/errors';
import { Lifecycle } from '../runtime/lifecycle';
import type { OrderStatus, PaymentEventType } from './OrderInterface';

export type OrderMove =
  /** The order exists; nothing has been paid. */
  | 'create'
  /** The provider says a payment is under way. */
  | 'pending'
  /** The provider says the payment attempt failed (another attempt may follow). */
  | 'fail'
  /** The provider says the order's amount was paid in its currency. */
  | 'succeed'
  /** The provider says a payment succeeded for another amount or currency: kept for review, never credited. */
  | 'mismatch'
  /** The credit of the order's amount has been committed on the owner's FundsHold. */
  | 'fulfil';

export type From = OrderStatus | 'new';

const UNPAID_MOVES = { pending: 'payment_pending', fail: 'failed', succeed: 'paid', mismatch: 'payment_mismatch' } as const;

export const ORDER_TRANSITIONS: Readonly<Record<From, Readonly<Partial<Record<OrderMove, OrderStatus>>>>> = {
  new: { create: 'created' },
  created: UNPAID_MOVES,
  payment_pending: UNPAID_MOVES,
  failed: UNPAID_MOVES,
  paid: { fulfil: 'fulfilled' },
  fulfilled: {},
  payment_mismatch: {},
};

export const ORDER_LIFECYCLE = new Lifecycle(ORDER_TRANSITIONS, (from, move) => new GatewayError('order_state_conflict', `an order cannot ${move} from ${from}`));

/** The status `move` leads to from `from`, or undefined when the table forbids it. */
export const nextStatus = (from: From, move: OrderMove): OrderStatus | undefined => ORDER_LIFECYCLE.next(from, move);

/** The move a callback asks for: a success for the order's exact amount and currency pays it. */
export function paymentMove(type: PaymentEventType, matchesOrder: boolean): OrderMove {
  if (type === 'payment.succeeded') return matchesOrder ? 'succeed' : 'mismatch';
  return type === 'payment.failed' ? 'fail' : 'pending';
}

/**
 * Whether a callback is recent enough to apply: successes always are (money moved); a failure or
 * a pending notice only when it did not happen before the callback the status rests on
 * (`statusAt`, null while no callback has moved the order).
 */
export function isCurrent(move: OrderMove, occurredAtMs: number, statusAt: number | null): boolean {
  if (move !== 'fail' && move !== 'pending') return true;
  return statusAt === null || occurredAtMs >= statusAt;
}
