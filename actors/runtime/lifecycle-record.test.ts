// The checked move of every actor record: the table is consulted before anything changes, the
// change and the new state are written together; records stored before amounts were strings
// (plain numbers) are read and written back as strings.

import { Order } from '../order/Order';
import { ORDER_LIFECYCLE } from '../order/transitions';
import type { OrderStatus } from '../order/OrderInterface';
import { Session } from '../session/Session';
import { LifecycleRecord } from './lifecycle';
import type { ActorContext, ActorState } from './port';

function memoryState(seed: Record<string, unknown> = {}): ActorState & { values: Map<string, unknown> } {
  const values = new Map<string, unknown>(Object.entries(seed));
  return {
    values,
    get: async <T>(key: string) => values.get(key) as T | undefined,
    getUncached: async <T>(key: string) => values.get(key) as T | undefined,
    set: (key, value) => void values.set(key, structuredClone(value)),
    remove: (key) => void values.delete(key),
  };
}

function contextOf(actorType: string, state: ActorState, calls: { method: string; arg: unknown }[]): ActorContext {
  return {
    actorType,
    actorId: 'a1',
    state,
    reminders: { register: async () => undefined, unregister: async () => undefined },
    emit: () => undefined,
    adjustGauge: () => undefined,
    actors: {
      invoke: async <R>(_type: string, _id: string, method: string, arg: unknown) => {
        calls.push({ method, arg });
        return { charged: 0, state: 'released' } as R;
      },
    },
    now: () => 1_700_000_000_000,
  };
}

interface Thing { status: OrderStatus; note: string }

describe('LifecycleRecord', () => {
  const record = (state: ActorState) => new LifecycleRecord<Thing, OrderStatus, Parameters<typeof ORDER_LIFECYCLE.move>[1]>(
    state, 'thing', 'no such thing', ORDER_LIFECYCLE, { of: (t) => t.status, set: (t, to) => { t.status = to; } },
  );

  it('when the table allows a move, then the change and the new state are written together', async () => {
    const state = memoryState({ thing: { status: 'paid', note: '' } });
    const things = record(state);
    const thing = await things.required();
    const to = await things.move(thing, 'fulfil', (t, next) => { t.note = `moving to ${next}`; });
    expect(to).toBe('fulfilled');
    expect(state.values.get('thing')).toEqual({ status: 'fulfilled', note: 'moving to fulfilled' });
  });

  it('when the table refuses a move, then the change does not run and nothing is written', async () => {
    const state = memoryState({ thing: { status: 'fulfilled', note: '' } });
    const things = record(state);
    const thing = await things.required();
    const change = jest.fn();
    await expect(things.move(thing, 'succeed', change)).rejects.toMatchObject({ code: 'order_state_conflict' });
    expect(change).not.toHaveBeenCalled();
    expect(state.values.get('thing')).toEqual({ status: 'fulfilled', note: '' });
    expect(things.allows(thing, 'succeed')).toBe(false);
  });

  it('when a record is created, then it starts in the state the table gives its first move', () => {
    const state = memoryState();
    const thing = record(state).create('create', (status) => ({ status, note: 'new' }));
    expect(thing.status).toBe('created');
    expect(state.values.get('thing')).toEqual({ status: 'created', note: 'new' });
    expect(() => record(state).create('fulfil', (status) => ({ status, note: '' }))).toThrow(expect.objectContaining({ code: 'order_state_conflict' }));
  });
});

describe('amounts stored before they were strings', () => {
  it('when an order stored its amount as a number, then it is credited and shown exactly, and written back as a string', async () => {
    const state = memoryState({
      order: { status: 'paid', accountId: 'acct', amount: 5_000_000_000, createdAt: 1, createdBy: 'operator', statusAt: 1, payments: [] },
    });
    const calls: { method: string; arg: unknown }[] = [];
    const order = new Order(contextOf('Order', state, calls));
    const view = await order.fulfil();
    expect(calls).toEqual([{ method: 'credit', arg: expect.objectContaining({ amount: 5_000_000_000 }) }]);
    expect(view).toMatchObject({ status: 'fulfilled', amount: 5_000_000_000 });
    expect(state.values.get('order')).toMatchObject({ status: 'fulfilled', amount: '5000000000' });
  });

  it('when an order recorded its callback events before it kept their payloads (the time only), then a delivery again is compared with its payment record: the same is a replay, another payload is refused, one no longer listed is a replay', async () => {
    const recorded = { eventId: 'evt_1', type: 'payment.succeeded', amount: 5_000_000_000, currency: 'USD', occurredAt: '2030-01-01T00:00:00.000Z', receivedAt: '2030-01-01T00:00:01.000Z', applied: true, note: 'created → paid' };
    const state = memoryState({
      order: { status: 'fulfilled', accountId: 'acct', amount: '5000000000', createdAt: 1, createdBy: 'console', statusAt: 1, payments: [recorded], paidAt: 2, fulfilledAt: 3 },
      'event:evt_1': 2,
      'event:evt_0': 1,
    });
    const order = new Order(contextOf('Order', state, []));
    const event = { id: 'evt_1', type: 'payment.succeeded' as const, amount: 5_000_000_000, currency: 'USD', occurredAt: '2030-01-01T00:00:00Z' };
    expect(await order.recordPayment(event)).toMatchObject({ applied: false, replayed: true, order: { status: 'fulfilled', payments: [recorded] } });
    await expect(order.recordPayment({ ...event, amount: 1 })).rejects.toMatchObject({ code: 'callback_replayed' });
    expect(await order.recordPayment({ ...event, id: 'evt_0' })).toMatchObject({ applied: false, replayed: true });
    expect(state.values.get('event:evt_1')).toBe(2);
  });

  it('when a session stored its last run\'s charge as a number, then a repeated finish answers it as a number', async () => {
    const state = memoryState({
      session: { owner: { accountId: 'acct', apiKeyId: 'k' }, workspace: 'w', createdAt: 1, log: { lastEventId: 3, firstRetainedId: 1 }, run: null, lastRun: { runId: 'r1', status: 'completed', charged: 1234 } },
    });
    const session = new Session(contextOf('Session', state, []));
    await expect(session.finishRun({ runId: 'r1' } as Parameters<Session['finishRun']>[0])).resolves.toEqual({ runId: 'r1', status: 'completed', charged: 1234, lastEventId: 3 });
  });
});
