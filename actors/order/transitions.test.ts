import { isCurrent, nextStatus, ORDER_TRANSITIONS, paymentMove, type From, type OrderMove } from './transitions';

const MOVES: OrderMove[] = ['create', 'pending', 'fail', 'succeed', 'mismatch', 'fulfil'];
const FROM = Object.keys(ORDER_TRANSITIONS) as From[];

// Every allowed move, spelled out once more: the table may only change together with this list.
const ALLOWED: Array<[From, OrderMove, string]> = [
  ['new', 'create', 'created'],
  ['created', 'pending', 'payment_pending'],
  ['created', 'fail', 'failed'],
  ['created', 'succeed', 'paid'],
  ['created', 'mismatch', 'payment_mismatch'],
  ['payment_pending', 'pending', 'payment_pending'],
  ['payment_pending', 'fail', 'failed'],
  ['payment_pending', 'succeed', 'paid'],
  ['payment_pending', 'mismatch', 'payment_mismatch'],
  ['failed', 'pending', 'payment_pending'],
  ['failed', 'fail', 'failed'],
  ['failed', 'succeed', 'paid'],
  ['failed', 'mismatch', 'payment_mismatch'],
  ['paid', 'fulfil', 'fulfilled'],
];

describe('order transitions', () => {
  it.each(ALLOWED)('when the order is %s and the move is %s, then it becomes %s', (from, move, to) => {
    expect(nextStatus(from, move)).toBe(to);
  });

  const forbidden = FROM.flatMap((from) => MOVES.filter((move) => !ALLOWED.some(([f, m]) => f === from && m === move)).map((move) => [from, move] as const));
  it.each(forbidden)('when the order is %s, then the move %s is refused', (from, move) => {
    expect(nextStatus(from, move)).toBeUndefined();
  });

  it('when an order is fulfilled or its payment mismatched, then no move is left', () => {
    expect(MOVES.filter((m) => nextStatus('fulfilled', m))).toEqual([]);
    expect(MOVES.filter((m) => nextStatus('payment_mismatch', m))).toEqual([]);
  });

  it('when a status is anything but paid, then no move leads to fulfilled (a callback never fulfils)', () => {
    for (const from of FROM.filter((f) => f !== 'paid')) expect(MOVES.filter((m) => nextStatus(from, m) === 'fulfilled')).toEqual([]);
  });

  it('when an order is paid, then no callback moves it (only the credit does)', () => {
    for (const move of ['pending', 'fail', 'succeed', 'mismatch'] as const) expect(nextStatus('paid', move)).toBeUndefined();
  });
});

describe('payment callbacks', () => {
  it.each([
    ['payment.succeeded', true, 'succeed'],
    ['payment.succeeded', false, 'mismatch'],
    ['payment.failed', true, 'fail'],
    ['payment.failed', false, 'fail'],
    ['payment.pending', true, 'pending'],
    ['payment.pending', false, 'pending'],
  ] as const)('when a %s callback matches the order: %s, then it asks for %s', (type, matches, move) => {
    expect(paymentMove(type, matches)).toBe(move);
  });

  it('when no callback has moved the order yet, then any failure or pending notice is current', () => {
    expect(isCurrent('fail', 0, null)).toBe(true);
    expect(isCurrent('pending', 0, null)).toBe(true);
  });

  it('when a failure or pending notice happened before the callback the status rests on, then it is not current', () => {
    expect(isCurrent('fail', 999, 1000)).toBe(false);
    expect(isCurrent('pending', 999, 1000)).toBe(false);
    expect(isCurrent('fail', 1000, 1000)).toBe(true);
    expect(isCurrent('pending', 1001, 1000)).toBe(true);
  });

  it('when a success is older than the failure the status rests on, then it is still current (the money moved)', () => {
    expect(isCurrent('succeed', 1, 1000)).toBe(true);
    expect(isCurrent('mismatch', 1, 1000)).toBe(true);
  });
});
