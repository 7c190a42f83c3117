// The Order contract: the same cases against every actor host (embedded and Dapr). Each path of
// the order table is driven through the actor, with the real FundsHold and the real ledger behind
// it: an order is fulfilled only by its one credit, and the balance and the ledger agree.

import { randomUUID } from 'node:crypto';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import { OrderClient } from '../../actors/order/client';
import { MAX_ORDER_AMOUNT, type OrderApi, type PaymentEvent } from '../../actors/order/OrderInterface';
import type { ActorHostUnderTest } from '../support/actor-hosts';
import { passes } from '../support/eventually';

const AMOUNT = 5_000_000_000;

export function orderContract(hostName: string, start: () => Promise<ActorHostUnderTest>): void {
  describe(`Order contract on the ${hostName} host`, () => {
    let host: ActorHostUnderTest;
    let orders: OrderClient;
    let funds: FundsHoldClient;

    beforeAll(async () => {
      host = await start();
      orders = new OrderClient(host.invoker);
      funds = new FundsHoldClient(host.invoker);
    });
    afterAll(async () => {
      await host?.close();
    });

    const newAccount = () => `acct_${randomUUID().replaceAll('-', '')}`;
    const newOrderId = () => `ord_${randomUUID().replaceAll('-', '')}`;
    const creditEventId = (accountId: string, orderId: string) => `credit:${accountId}:pool-3:order:${orderId}`;

    let clock = Date.parse('2030-01-01T00:00:00Z');
    function payment(type: PaymentEvent['type'], overrides: Partial<PaymentEvent> = {}): PaymentEvent {
      clock += 1000;
      return { id: `evt_${randomUUID()}`, type, amount: AMOUNT, currency: 'USD', occurredAt: new Date(clock).toISOString(), ...overrides };
    }

    async function newOrder(accountId = newAccount(), amount = AMOUNT): Promise<{ accountId: string; orderId: string; order: OrderApi }> {
      const orderId = newOrderId();
      const order = orders.of(orderId);
      await order.create({ accountId, amount, createdBy: 'console' });
      return { accountId, orderId, order };
    }

    /** FundsHold and the ledger agree on `balance`, and the order's credit is in the ledger (or not). */
    async function agree(accountId: string, orderId: string, balance: number, credited: boolean): Promise<void> {
      expect(await funds.of(accountId).getBalance()).toMatchObject({ balance, held: 0 });
      await passes(async () => {
        expect((await host.ledger(accountId)).balance).toBe(balance);
        expect(await host.ledgerHas(creditEventId(accountId, orderId))).toBe(credited);
      });
    }

    it('when created, then it is created for its owner; the same request again returns it; another amount conflicts', async () => {
      const accountId = newAccount();
      const orderId = newOrderId();
      const order = orders.of(orderId);
      const first = await order.create({ accountId, amount: AMOUNT, createdBy: 'operator' });
      expect(first).toMatchObject({ created: true, order: { orderId, accountId, amount: AMOUNT, currency: 'USD', status: 'created', createdBy: 'operator', payments: [], creditReference: `order:${orderId}` } });
      expect(first.order.fulfilledAt).toBeUndefined();
      const again = await order.create({ accountId, amount: AMOUNT, createdBy: 'operator' });
      expect(again).toEqual({ created: false, order: first.order });
      await expect(order.create({ accountId, amount: AMOUNT + 1, createdBy: 'operator' })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
      await expect(order.create({ accountId: newAccount(), amount: AMOUNT, createdBy: 'operator' })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
      expect(await order.view({ accountId })).toEqual(first.order);
    });

    it('when the amount or the creator is invalid, then the order is refused and does not exist', async () => {
      const accountId = newAccount();
      for (const amount of [0, -1, 1.5, MAX_ORDER_AMOUNT + 1, '100' as unknown as number]) {
        const order = orders.of(newOrderId());
        await expect(order.create({ accountId, amount, createdBy: 'console' })).rejects.toMatchObject({ code: 'invalid_request', param: 'amount' });
        await expect(order.view({ accountId })).rejects.toMatchObject({ code: 'not_found' });
      }
      const order = orders.of(newOrderId());
      await expect(order.create({ accountId, amount: AMOUNT, createdBy: 'someone' as 'console' })).rejects.toMatchObject({ code: 'invalid_request', param: 'createdBy' });
      expect((await orders.of(newOrderId()).create({ accountId, amount: MAX_ORDER_AMOUNT, createdBy: 'console' })).order.amount).toBe(MAX_ORDER_AMOUNT);
    });

    it('when asked by another account, or about an unknown order, then it is not found; a callback for an unknown order creates nothing', async () => {
      const { order } = await newOrder();
      await expect(order.view({ accountId: newAccount() })).rejects.toMatchObject({ code: 'not_found' });
      const unknown = orders.of(newOrderId());
      await expect(unknown.view({ accountId: newAccount() })).rejects.toMatchObject({ code: 'not_found' });
      await expect(unknown.recordPayment(payment('payment.succeeded'))).rejects.toMatchObject({ code: 'not_found' });
      await expect(unknown.fulfil({})).rejects.toMatchObject({ code: 'not_found' });
    });

    it('when a matching success is recorded, then the order is paid but not fulfilled and nothing is credited until fulfil has credited once', async () => {
      const { accountId, orderId, order } = await newOrder();
      const event = payment('payment.succeeded');
      const paid = await order.recordPayment(event);
      expect(paid).toMatchObject({ applied: true, order: { status: 'paid', payments: [{ eventId: event.id, type: 'payment.succeeded', applied: true }] } });
      expect(paid.order.paidAt).toBeDefined();
      expect(paid.order.fulfilledAt).toBeUndefined();
      expect(await funds.of(accountId).getBalance()).toMatchObject({ balance: 0 });

      const fulfilled = await order.fulfil({});
      expect(fulfilled.status).toBe('fulfilled');
      expect(Date.parse(fulfilled.fulfilledAt!)).toBeGreaterThanOrEqual(Date.parse(fulfilled.paidAt!));
      expect(await order.fulfil({})).toEqual(fulfilled);
      await agree(accountId, orderId, AMOUNT, true);
      expect((await host.ledger(accountId)).bills).toBe(1);
    });

    it('when callbacks are replayed, duplicated or come late, then the order is credited exactly once and nothing moves it back', async () => {
      const { accountId, orderId, order } = await newOrder();
      const succeeded = payment('payment.succeeded');
      const failedEarlier = payment('payment.failed', { occurredAt: new Date(clock - 60_000).toISOString() });
      expect(await order.recordPayment(succeeded)).toMatchObject({ applied: true, replayed: false });
      await order.fulfil({});
      // The provider delivering the same event again is answered as received; nothing is recorded again.
      expect(await order.recordPayment(succeeded)).toMatchObject({ applied: false, replayed: true, order: { orderId, status: 'fulfilled', payments: [{ eventId: succeeded.id, applied: true }] } });
      for (const late of [payment('payment.succeeded'), failedEarlier, payment('payment.failed'), payment('payment.pending')]) {
        const outcome = await order.recordPayment(late);
        expect([late.type, outcome.applied, outcome.order.status]).toEqual([late.type, false, 'fulfilled']);
      }
      // Another payload under an id already processed is refused, whatever field differs.
      for (const other of [{ type: 'payment.failed' as const }, { amount: AMOUNT + 1 }, { currency: 'EUR' }, { occurredAt: new Date(clock + 1000).toISOString() }]) {
        await expect(order.recordPayment({ ...succeeded, ...other })).rejects.toMatchObject({ code: 'callback_replayed', extra: { orderId, status: 'fulfilled' } });
      }
      const view = await order.fulfil({});
      expect(view.payments.map((p) => p.applied)).toEqual([true, false, false, false, false]);
      await agree(accountId, orderId, AMOUNT, true);
      expect((await host.ledger(accountId)).bills).toBe(1);
    });

    it('when a second success arrives before fulfil, then it is recorded only and one credit is made', async () => {
      const { accountId, orderId, order } = await newOrder();
      await order.recordPayment(payment('payment.succeeded'));
      expect(await order.recordPayment(payment('payment.succeeded'))).toMatchObject({ applied: false, order: { status: 'paid' } });
      await Promise.all([order.fulfil({}), order.fulfil({})]);
      await agree(accountId, orderId, AMOUNT, true);
      expect((await host.ledger(accountId)).bills).toBe(1);
    });

    it('when only failures and pending notices arrive, then the latest one counts, nothing is credited, and a later success still pays', async () => {
      const { accountId, orderId, order } = await newOrder();
      const failed = payment('payment.failed');
      const pending = payment('payment.pending');
      const staleFailure = payment('payment.failed', { occurredAt: new Date(clock - 10_000).toISOString() });
      expect(await order.recordPayment(failed)).toMatchObject({ applied: true, order: { status: 'failed' } });
      expect(await order.fulfil({})).toMatchObject({ status: 'failed' });
      expect(await order.recordPayment(pending)).toMatchObject({ applied: true, order: { status: 'payment_pending' } });
      expect(await order.recordPayment(staleFailure)).toMatchObject({ applied: false, order: { status: 'payment_pending' } });
      expect(await order.recordPayment(payment('payment.failed'))).toMatchObject({ applied: true, order: { status: 'failed' } });
      await agree(accountId, orderId, 0, false);
      // The money moved: a success pays the order even when it is older than the failure.
      const success = payment('payment.succeeded', { occurredAt: new Date(clock - 30_000).toISOString() });
      expect(await order.recordPayment(success)).toMatchObject({ applied: true, order: { status: 'paid' } });
      expect(await order.fulfil({})).toMatchObject({ status: 'fulfilled' });
      await agree(accountId, orderId, AMOUNT, true);
    });

    it('when a success does not match the amount or currency, then it is held for review and never credited; a lowercase currency code matches', async () => {
      for (const mismatch of [{ amount: AMOUNT - 1 }, { amount: AMOUNT * 2 }, { currency: 'EUR' }]) {
        const { accountId, orderId, order } = await newOrder();
        const outcome = await order.recordPayment(payment('payment.succeeded', mismatch));
        expect(outcome).toMatchObject({ applied: true, order: { status: 'payment_mismatch' } });
        expect(outcome.order.payments[0].note).toContain('review');
        expect(await order.fulfil({})).toMatchObject({ status: 'payment_mismatch' });
        expect(await order.recordPayment(payment('payment.succeeded'))).toMatchObject({ applied: false, order: { status: 'payment_mismatch' } });
        await agree(accountId, orderId, 0, false);
      }
      const { accountId, orderId, order } = await newOrder();
      expect(await order.recordPayment(payment('payment.succeeded', { currency: 'usd' }))).toMatchObject({ order: { status: 'paid' } });
      await order.fulfil({});
      await agree(accountId, orderId, AMOUNT, true);
    });

    it('when a callback is malformed, then it is refused and not remembered: the same id, well formed, is processed', async () => {
      const { order } = await newOrder();
      const good = payment('payment.pending');
      const bad: Array<[Partial<PaymentEvent> | Record<string, unknown>, string]> = [
        [{ type: 'payment.refunded' as PaymentEvent['type'] }, 'type'],
        [{ amount: -1 }, 'amount'],
        [{ amount: 1.5 }, 'amount'],
        [{ occurredAt: 'yesterday' }, 'occurredAt'],
        [{ currency: '' }, 'currency'],
        [{ id: '' }, 'id'],
      ];
      for (const [change, param] of bad) {
        await expect(order.recordPayment({ ...good, ...change } as PaymentEvent)).rejects.toMatchObject({ code: 'invalid_request', param });
      }
      expect(await order.recordPayment(good)).toMatchObject({ applied: true, order: { status: 'payment_pending', payments: [{ eventId: good.id }] } });
    });

    it('when the gateway never comes back to fulfil a paid order, then the reminder credits it', async () => {
      const { accountId, orderId, order } = await newOrder();
      expect(await order.recordPayment(payment('payment.succeeded'))).toMatchObject({ order: { status: 'paid' } });
      await passes(async () => expect(await order.view({ accountId })).toMatchObject({ status: 'fulfilled' }));
      await agree(accountId, orderId, AMOUNT, true);
    });

    it('when the credit fails, then the order stays paid, across a restart, until the reminder\'s retry credits it once', async () => {
      const accountId = newAccount();
      // A balance so close to 2^53-1 that the order's credit is refused until some of it is spent.
      await funds.of(accountId).credit({ amount: Number.MAX_SAFE_INTEGER - 10, reference: 'seed' });
      const { orderId, order } = await newOrder(accountId, 100);
      await order.recordPayment(payment('payment.succeeded', { amount: 100 }));
      await expect(order.fulfil({})).rejects.toMatchObject({ code: 'invalid_request' });
      await new Promise((r) => setTimeout(r, 2500)); // the reminder has tried, and failed
      expect(await order.view({ accountId })).toMatchObject({ status: 'paid' });
      expect(await host.ledgerHas(creditEventId(accountId, orderId))).toBe(false);

      const invoker = await host.restart();
      orders = new OrderClient(invoker);
      funds = new FundsHoldClient(invoker);
      expect(await orders.of(orderId).view({ accountId })).toMatchObject({ status: 'paid' });
      const spend = { holdId: 'spend', amount: 1000, ttlMs: 600_000, requestId: 'req', model: 'sim-image', profileId: 'p' };
      await funds.of(accountId).reserve(spend);
      await funds.of(accountId).settle({ holdId: 'spend', lines: [{ unit: 'IMAGE', quantity: 1, unitPrice: 1000 }] });
      await passes(async () => expect(await orders.of(orderId).view({ accountId })).toMatchObject({ status: 'fulfilled' }), 30_000);
      await agree(accountId, orderId, Number.MAX_SAFE_INTEGER - 10 - 1000 + 100, true);
    });
  });
}
