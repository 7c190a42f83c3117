// The order suite against the real embedded process (`npm start`'s entry point); the ledger is
// read from the same local database (LMDB is multi-process). And the callback route of a
// deployment without a checkout secret.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { ORDER_TEST_ENV, orderSuite } from '../contract/orders.suite';
import { fundedAccount } from '../support/api';
import { checkoutCallback, createOrder, getOrder, paymentEvent } from '../support/orders';
import { startGateway } from '../support/processes';

jest.setTimeout(60_000);

orderSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-orders-'));
  const env = { ...ORDER_TEST_ENV, GATEWAY_DATA_DIR: join(dir, 'data') };
  const gateway = await startGateway(env);
  let db: LocalDb | undefined;
  const ledger = () => new LmdbLedgerStore((db ??= openLocalDb(env.GATEWAY_DATA_DIR)));
  return {
    url: gateway.url,
    ledger: (accountId) => ledger().account(accountId, 'pool-3'),
    ledgerHas: (eventId) => ledger().has(eventId),
    close: async () => {
      await gateway.stop();
      await db?.close();
    },
  };
});

describe('checkout callbacks without a checkout secret', () => {
  it('when GATEWAY_CHECKOUT_SECRET is not set, then the callback route answers 503 checkout_disabled and orders still work', async () => {
    const gateway = await startGateway({ GATEWAY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'gw-orders-off-')), 'data') });
    try {
      const { apiKey } = await fundedAccount(gateway.url, 0);
      const order = await createOrder(gateway.url, apiKey, { amount: 1000 });
      expect(order.status).toBe(201);
      const answer = await checkoutCallback(gateway.url, paymentEvent(order.body.orderId, 1000, 'payment.succeeded'));
      expect([answer.status, answer.body.error?.code]).toEqual([503, 'checkout_disabled']);
      expect((await getOrder(gateway.url, apiKey, order.body.orderId)).body).toMatchObject({ status: 'created', payments: [] });
    } finally {
      await gateway.stop();
    }
  });
});
