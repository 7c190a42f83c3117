// The ledger store contract on a real Redis (a redis-server of its own on a free port).

import { createClient } from 'redis';
import { startRedis, type TestRedis } from '../../test/support/redis';
import { credit, ledgerStoreContract } from './ledger-store.contract';
import { RedisLedgerStore } from './redis-store';

jest.setTimeout(30_000);

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

let contractStore: RedisLedgerStore;
ledgerStoreContract('Redis', async () => {
  contractStore = await RedisLedgerStore.connect(redis.url);
  return contractStore;
}, async () => {
  await contractStore?.close();
}, async (_store, accountId) => {
  // As a version without spending sums left it: no day sums, no base, no spendFrom in the totals.
  const admin = createClient({ url: redis.url });
  await admin.connect();
  try {
    const sums: string[] = [];
    for await (const keys of admin.scanIterator({ MATCH: `ledger:spend:${accountId}:*` })) sums.push(...keys);
    await admin.del([...sums, `ledger:spendbase:${accountId}:pool-3`]);
    await admin.hDel(`ledger:totals:${accountId}:pool-3`, 'spendFrom');
  } finally {
    await admin.quit();
  }
}, async (accountId) => {
  const admin = createClient({ url: redis.url });
  await admin.connect();
  try {
    await admin.hDel(`ledger:totals:${accountId}:pool-3`, 'fundsBills');
  } finally {
    await admin.quit();
  }
});

describe('Redis ledger append script', () => {
  it('when Redis has forgotten the append script (SCRIPT FLUSH, a restart), then the next append loads it again', async () => {
    const store = await RedisLedgerStore.connect(redis.url);
    const admin = createClient({ url: redis.url });
    await admin.connect();
    try {
      expect(await store.append(credit('acct_flush', 1))).toBe('appended');
      await admin.scriptFlush();
      expect(await store.append(credit('acct_flush', 2))).toBe('appended');
      expect(await store.account('acct_flush', 'pool-3')).toMatchObject({ bills: 2, balance: 1001 + 1002 });
    } finally {
      await admin.quit();
      await store.close();
    }
  });
});
