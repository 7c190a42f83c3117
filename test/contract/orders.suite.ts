// End-to-end order suite over HTTP: the same cases against the embedded process and the Dapr
// topology. Orders are created on the console and operator routes, read by their owner only, and
// paid through signed checkout callbacks; fulfillment is read from the order, and the balance and
// the ledger must show exactly one credit `order:<orderId>` per fulfilled order, and none otherwise.

import { randomUUID } from 'node:crypto';
import type { AccountLedgerView } from '../../services/ledger/entries';
import { admin, apiKeyFor, balance, fundedAccount } from '../support/api';
import { passes } from '../support/eventually';
import { CHECKOUT_SECRET, checkoutCallback, createOrder, getOrder, operatorOrder, paymentEvent, signature } from '../support/orders';
import { itConformsToOpenApi, recordAnswers } from '../support/openapi-conformance';

export const ORDER_TEST_ENV = { GATEWAY_CHECKOUT_SECRET: CHECKOUT_SECRET };
const FUNDS = 1_000_000_000;
const AMOUNT = 25_000_000_000;
const MAX_ORDER_AMOUNT = 10_000_000_000_000;

export interface OrderDeploymentUnderTest {
  url: string;
  ledger(accountId: string): Promise<AccountLedgerView>;
  ledgerHas(eventId: string): Promise<boolean>;
  close(): Promise<void>;
}

export function orderSuite(hostName: string, start: () => Promise<OrderDeploymentUnderTest>): void {
  describe(`top-up orders and checkout callbacks on the ${hostName} host`, () => {
    let d: OrderDeploymentUnderTest;
    const openApi = recordAnswers(() => d?.url);
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    const creditEventId = (accountId: string, orderId: string) => `credit:${accountId}:pool-3:order:${orderId}`;

    async function ownerWithOrder(amount = AMOUNT): Promise<{ accountId: string; apiKey: string; orderId: string }> {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const created = await createOrder(d.url, apiKey, { amount });
      expect(created.status).toBe(201);
      return { accountId, apiKey, orderId: created.body.orderId };
    }

    /** The balance, the ledger and the order agree: credited once (or never), nothing else changed. */
    async function agree(accountId: string, apiKey: string, orderId: string, credited: boolean): Promise<void> {
      const expected = FUNDS + (credited ? AMOUNT : 0);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: expected, held: 0 });
      await passes(async () => {
        const ledger = await d.ledger(accountId);
        expect({ balance: ledger.balance, bills: ledger.bills }).toEqual({ balance: expected, bills: credited ? 2 : 1 });
        expect(await d.ledgerHas(creditEventId(accountId, orderId))).toBe(credited);
      });
      const order = await getOrder(d.url, apiKey, orderId);
      expect(order.body.status === 'fulfilled').toBe(credited);
      expect(order.body.fulfilledAt !== undefined).toBe(credited);
    }

    it('when an owner creates an order, then 201 with the order created by the console, and the owner reads the same order', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const created = await createOrder(d.url, apiKey, { amount: AMOUNT });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ accountId, amount: AMOUNT, currency: 'USD', scale: 9, status: 'created', createdBy: 'console', payments: [] });
      expect(created.body.orderId).toMatch(/^ord_[0-9a-f]{32}$/);
      expect(created.body.creditReference).toBe(`order:${created.body.orderId}`);
      expect(Date.parse(created.body.createdAt)).toBeGreaterThan(Date.now() - 60_000);
      const read = await getOrder(d.url, apiKey, created.body.orderId);
      expect(read).toMatchObject({ status: 200, body: created.body });
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: FUNDS });
    });

    it('when anyone but the owner asks (another account, an unknown id, a malformed id), then the same 404 revealing nothing; without a key 401', async () => {
      const { apiKey, orderId } = await ownerWithOrder();
      const stranger = await fundedAccount(d.url, 0);
      const answers = await Promise.all([
        getOrder(d.url, stranger.apiKey, orderId),
        getOrder(d.url, apiKey, `ord_${randomUUID().replaceAll('-', '')}`),
        getOrder(d.url, apiKey, 'not-an-order'),
        getOrder(d.url, apiKey, orderId.toUpperCase()),
        getOrder(d.url, apiKey, `${orderId}x`),
      ]);
      for (const answer of answers) {
        expect(answer.status).toBe(404);
        expect({ ...answer.body.error, request_id: undefined }).toEqual({ ...answers[0].body.error, request_id: undefined });
        expect(JSON.stringify(answer.body)).not.toContain(orderId.slice(4));
      }
      expect(answers[0].body.error.code).toBe('not_found');
      expect((await getOrder(d.url, '', orderId)).status).toBe(401);
      expect((await createOrder(d.url, 'sk-payg-unknown', { amount: AMOUNT })).status).toBe(401);
    });

    it('when an operator creates an order, then 201 created by the operator for that account, which its owner reads; an unknown account 404', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const created = await operatorOrder(d.url, accountId, { amount: AMOUNT });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ accountId, amount: AMOUNT, status: 'created', createdBy: 'operator' });
      expect((await getOrder(d.url, apiKey, created.body.orderId)).body).toEqual(created.body);
      expect((await operatorOrder(d.url, 'acct_missing', { amount: AMOUNT })).body.error.code).toBe('account_not_found');
      expect((await operatorOrder(d.url, 'acct_missing', { amount: AMOUNT })).status).toBe(404);
      const forged = await fetch(`${d.url}/admin/v1/accounts/${accountId}/orders`, { method: 'POST', headers: { authorization: 'Bearer wrong-token-wrong-token', 'content-type': 'application/json' }, body: JSON.stringify({ amount: AMOUNT }) });
      expect(forged.status).toBe(401);
      // Order credits are made by orders only.
      const reserved = await admin(d.url, `/admin/v1/accounts/${accountId}/credits`, { amount: AMOUNT, reference: `order:${created.body.orderId}` });
      expect([reserved.status, reserved.body.error?.param]).toEqual([400, 'reference']);
      await agree(accountId, apiKey, created.body.orderId, false);
    });

    it('when the order request is invalid, then 400 and no order is made', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const cases: Array<[unknown, string | undefined, string]> = [
        [{ amount: 0 }, undefined, 'invalid_request'],
        [{ amount: -5 }, undefined, 'invalid_request'],
        [{ amount: 1.5 }, undefined, 'invalid_request'],
        [{ amount: '100' }, undefined, 'invalid_request'],
        [{ amount: MAX_ORDER_AMOUNT + 1 }, undefined, 'invalid_request'],
        [{}, undefined, 'invalid_request'],
        [{ amount: AMOUNT, accountId: 'acct_other' }, undefined, 'invalid_request'],
        [[{ amount: AMOUNT }], undefined, 'invalid_request'],
        [undefined, '{"amount":', 'invalid_json'],
      ];
      for (const [body, raw, code] of cases) {
        const answer = await createOrder(d.url, apiKey, body, {}, raw);
        expect([body, answer.status, answer.body.error?.code]).toEqual([body, 400, code]);
      }
      const badKey = await createOrder(d.url, apiKey, { amount: AMOUNT }, { 'idempotency-key': 'not-a-uuid' });
      expect([badKey.status, badKey.body.error.code]).toEqual([400, 'idempotency_key_invalid']);
      expect((await operatorOrder(d.url, accountId, { amount: 0 })).status).toBe(400);
      const largest = await createOrder(d.url, apiKey, { amount: MAX_ORDER_AMOUNT });
      expect([largest.status, largest.body.amount]).toEqual([201, MAX_ORDER_AMOUNT]);
    });

    it('when an order is created again with the same Idempotency-Key, then the same order; with another amount 409; another API key makes its own', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const key = randomUUID();
      const first = await createOrder(d.url, apiKey, { amount: AMOUNT }, { 'idempotency-key': key });
      const again = await createOrder(d.url, apiKey, { amount: AMOUNT }, { 'idempotency-key': `"${key}"` });
      expect([first.status, again.status]).toEqual([201, 201]);
      expect(again.body).toEqual(first.body);
      // The retry says it is a replay; the first answer does not.
      expect([first.headers.get('x-payg-replayed'), again.headers.get('x-payg-replayed')]).toEqual([null, 'true']);
      const other = await createOrder(d.url, apiKey, { amount: AMOUNT + 1 }, { 'idempotency-key': key });
      expect([other.status, other.body.error.code]).toEqual([409, 'idempotency_key_reused']);
      const secondKey = await apiKeyFor(d.url, accountId);
      const separate = await createOrder(d.url, secondKey, { amount: AMOUNT }, { 'idempotency-key': key });
      expect(separate.status).toBe(201);
      expect(separate.body.orderId).not.toBe(first.body.orderId);
    });

    it('when a valid payment.succeeded callback arrives, then the order is fulfilled and the balance grew exactly once, by one ledger credit order:<id>', async () => {
      const { accountId, apiKey, orderId } = await ownerWithOrder();
      const event = paymentEvent(orderId, AMOUNT, 'payment.succeeded');
      const answer = await checkoutCallback(d.url, event);
      expect(answer).toMatchObject({ status: 200, body: { received: true, eventId: event.id, orderId, applied: true, status: 'fulfilled' } });
      const order = await getOrder(d.url, apiKey, orderId);
      expect(order.body).toMatchObject({ status: 'fulfilled', payments: [{ eventId: event.id, type: 'payment.succeeded', applied: true }] });
      expect(Date.parse(order.body.fulfilledAt)).toBeGreaterThanOrEqual(Date.parse(order.body.paidAt));
      await agree(accountId, apiKey, orderId, true);
    });

    it('when a callback is delivered again (at once, later), then 200 replayed and nothing changes; another payload under its id is 409 callback_replayed; another succeeded event is recorded only; the order is credited once', async () => {
      const { accountId, apiKey, orderId } = await ownerWithOrder();
      const event = paymentEvent(orderId, AMOUNT, 'payment.succeeded');
      const [first, second] = await Promise.all([checkoutCallback(d.url, event), checkoutCallback(d.url, event)]);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect([first.body.applied, second.body.applied].sort()).toEqual([false, true]);
      expect([first.body.replayed, second.body.replayed].sort()).toEqual([false, true]);
      const replay = await checkoutCallback(d.url, event);
      expect([replay.status, replay.headers.get('x-should-retry')]).toEqual([200, null]);
      expect(replay.body).toEqual({ received: true, eventId: event.id, orderId, applied: false, replayed: true, status: 'fulfilled' });
      const conflicting = await checkoutCallback(d.url, { ...event, amount: AMOUNT * 2 });
      expect([conflicting.status, conflicting.headers.get('x-should-retry')]).toEqual([409, 'false']);
      expect(conflicting.body.error).toMatchObject({ code: 'callback_replayed', orderId, status: 'fulfilled' });
      const another = await checkoutCallback(d.url, paymentEvent(orderId, AMOUNT, 'payment.succeeded'));
      expect(another.body).toMatchObject({ applied: false, replayed: false, status: 'fulfilled' });
      expect((await getOrder(d.url, apiKey, orderId)).body.payments.map((p: { applied: boolean }) => p.applied)).toEqual([true, false]);
      await agree(accountId, apiKey, orderId, true);
    });

    it('when the signature is forged, from another secret, missing, malformed, stale or over another body, then 401 and nothing changes', async () => {
      const { accountId, apiKey, orderId } = await ownerWithOrder();
      const event = paymentEvent(orderId, AMOUNT, 'payment.succeeded');
      const body = JSON.stringify(event);
      const now = Math.floor(Date.now() / 1000);
      const cases: Array<[Parameters<typeof checkoutCallback>[2], string]> = [
        [{ header: `t=${now},v1=${'ab'.repeat(32)}` }, 'signature_invalid'],
        [{ secret: 'another-secret-another-secret-0123' }, 'signature_invalid'],
        [{ header: null }, 'signature_required'],
        [{ header: '' }, 'signature_required'],
        [{ header: 'sha256=abc' }, 'signature_invalid'],
        [{ header: signature(body).replace(/t=\d+/, `t=${now + 1}`) }, 'signature_invalid'],
        [{ header: signature(body), raw: body.replace(`"amount":${AMOUNT}`, `"amount":${AMOUNT * 2}`) }, 'signature_invalid'],
        [{ header: signature(body), raw: `${body} ` }, 'signature_invalid'],
        [{ timestampS: now - 400 }, 'signature_stale'],
        [{ timestampS: now + 400 }, 'signature_stale'],
        [{ timestampS: now - 86_400 }, 'signature_stale'],
      ];
      for (const [options, code] of cases) {
        const answer = await checkoutCallback(d.url, event, options);
        expect([options, answer.status, answer.body.error?.code]).toEqual([options, 401, code]);
      }
      expect((await getOrder(d.url, apiKey, orderId)).body).toMatchObject({ status: 'created', payments: [] });
      await agree(accountId, apiKey, orderId, false);
      // None of them was remembered: the same event, properly signed, is processed once.
      expect((await checkoutCallback(d.url, event)).body).toMatchObject({ applied: true, status: 'fulfilled' });
      await agree(accountId, apiKey, orderId, true);
    });

    it('when callbacks come out of order (a failure older than the success, pending or failed after it), then nothing changes', async () => {
      const { accountId, apiKey, orderId } = await ownerWithOrder();
      const paidAt = Date.now();
      await checkoutCallback(d.url, paymentEvent(orderId, AMOUNT, 'payment.succeeded', { occurredAt: new Date(paidAt).toISOString() }));
      const late = [
        paymentEvent(orderId, AMOUNT, 'payment.failed', { occurredAt: new Date(paidAt - 60_000).toISOString() }),
        paymentEvent(orderId, AMOUNT, 'payment.pending', { occurredAt: new Date(paidAt + 1000).toISOString() }),
        paymentEvent(orderId, AMOUNT, 'payment.failed', { occurredAt: new Date(paidAt + 2000).toISOString() }),
      ];
      for (const event of late) {
        const answer = await checkoutCallback(d.url, event);
        expect([event.type, answer.status, answer.body.applied, answer.body.status]).toEqual([event.type, 200, false, 'fulfilled']);
      }
      await agree(accountId, apiKey, orderId, true);
    });

    it('when only payment.failed (or pending) arrives, then the order is not fulfilled and the balance is unchanged; a success for another amount is held, not credited', async () => {
      const { accountId, apiKey, orderId } = await ownerWithOrder();
      const failed = await checkoutCallback(d.url, paymentEvent(orderId, AMOUNT, 'payment.failed'));
      expect(failed.body).toMatchObject({ applied: true, status: 'failed' });
      const pending = await checkoutCallback(d.url, paymentEvent(orderId, AMOUNT, 'payment.pending', { occurredAt: new Date(Date.now() + 1000).toISOString() }));
      expect(pending.body).toMatchObject({ applied: true, status: 'payment_pending' });
      await agree(accountId, apiKey, orderId, false);

      const other = await ownerWithOrder();
      for (const mismatch of [{ amount: AMOUNT - 1 }, { currency: 'EUR' }]) {
        const answer = await checkoutCallback(d.url, paymentEvent(other.orderId, AMOUNT, 'payment.succeeded', mismatch));
        expect(answer.status).toBe(200);
      }
      const held = await getOrder(d.url, other.apiKey, other.orderId);
      expect(held.body).toMatchObject({ status: 'payment_mismatch', payments: [{ applied: true }, { applied: false }] });
      expect(held.body.paidAt).toBeUndefined();
      await agree(other.accountId, other.apiKey, other.orderId, false);
    });

    it('when no valid succeeded callback arrives, whatever else does, then the order is never fulfilled', async () => {
      const { accountId, apiKey, orderId } = await ownerWithOrder();
      const succeeded = paymentEvent(orderId, AMOUNT, 'payment.succeeded');
      await checkoutCallback(d.url, succeeded, { secret: 'another-secret-another-secret-0123' });
      await checkoutCallback(d.url, succeeded, { timestampS: Math.floor(Date.now() / 1000) - 3600 });
      await checkoutCallback(d.url, paymentEvent(orderId, AMOUNT, 'payment.pending'));
      await checkoutCallback(d.url, paymentEvent(orderId, AMOUNT, 'payment.failed', { occurredAt: new Date(Date.now() + 5000).toISOString() }));
      await checkoutCallback(d.url, { ...succeeded, type: 'payment.refunded' });
      await checkoutCallback(d.url, { ...succeeded, amount: String(AMOUNT) });
      await getOrder(d.url, apiKey, orderId);
      await new Promise((r) => setTimeout(r, 2500)); // a fulfil reminder, were there one, would have fired
      expect((await getOrder(d.url, apiKey, orderId)).body.status).toBe('failed');
      await agree(accountId, apiKey, orderId, false);
    });

    it('when a callback body is malformed or names no known order, then 4xx (never 5xx) and nothing changes', async () => {
      const { accountId, apiKey, orderId } = await ownerWithOrder();
      const event = paymentEvent(orderId, AMOUNT, 'payment.succeeded');
      const cases: Array<[Parameters<typeof checkoutCallback>[2] & { payload?: unknown }, number, string]> = [
        [{ raw: '{"id":' }, 400, 'invalid_json'],
        [{ raw: '' }, 400, 'invalid_request'],
        [{ raw: 'null' }, 400, 'invalid_request'],
        [{ raw: '"payment.succeeded"' }, 400, 'invalid_request'],
        [{ payload: [event] }, 400, 'invalid_request'],
        [{ payload: { ...event, id: undefined } }, 400, 'invalid_request'],
        [{ payload: { ...event, id: '' } }, 400, 'invalid_request'],
        [{ payload: { ...event, type: 'payment.refunded' } }, 400, 'invalid_request'],
        [{ payload: { ...event, amount: String(AMOUNT) } }, 400, 'invalid_request'],
        [{ payload: { ...event, amount: 1.5 } }, 400, 'invalid_request'],
        [{ payload: { ...event, amount: -1 } }, 400, 'invalid_request'],
        [{ payload: { ...event, amount: 2 ** 60 } }, 400, 'invalid_request'],
        [{ payload: { ...event, currency: 7 } }, 400, 'invalid_request'],
        [{ payload: { ...event, occurredAt: 'yesterday' } }, 400, 'invalid_request'],
        [{ payload: { ...event, orderId: 42 } }, 400, 'invalid_request'],
        [{ raw: '\u0000\u00ff' }, 400, 'invalid_json'],
        [{ payload: { ...event, orderId: `ord_${randomUUID().replaceAll('-', '')}` } }, 404, 'not_found'],
        [{ payload: { ...event, orderId: '../../admin' } }, 404, 'not_found'],
        [{ contentType: 'text/plain' }, 415, 'unsupported_media_type'],
        [{ raw: JSON.stringify({ ...event, padding: 'x'.repeat(70 * 1024) }) }, 413, 'payload_too_large'],
      ];
      for (const [options, status, code] of cases) {
        const answer = await checkoutCallback(d.url, options.payload ?? event, options);
        const label = JSON.stringify(options).slice(0, 120);
        expect([label, answer.status, answer.body.error?.code]).toEqual([label, status, code]);
      }
      expect((await getOrder(d.url, apiKey, orderId)).body).toMatchObject({ status: 'created', payments: [] });
      await agree(accountId, apiKey, orderId, false);
    });

    itConformsToOpenApi(openApi);
  });
}
