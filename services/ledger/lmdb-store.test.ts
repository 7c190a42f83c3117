// The ledger store contract on LMDB (the embedded default's local database), plus the batch
// append bulk loads use.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { chatUsage, credit, ledgerStoreContract } from './ledger-store.contract';
import { LmdbLedgerStore } from './lmdb-store';

let dir: string;
let db: LocalDb;

ledgerStoreContract('LMDB', async () => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-lmdb-'));
  db = openLocalDb(dir);
  return new LmdbLedgerStore(db);
}, async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}, async (_store, accountId) => {
  // As a version without spending sums left it: no day sums, no base, no spendFrom in the totals.
  await db.root.transaction(() => {
    for (const key of db.ledger.getKeys({ start: `spend\u0000${accountId}\u0000`, end: `spend\u0000${accountId}\u0001` })) db.ledger.removeSync(key);
    db.ledger.removeSync(`spendbase\u0000${accountId}\u0000pool-3`);
    const totalsKey = `totals\u0000${accountId}\u0000pool-3`;
    const { spendFrom: _kept, ...totals } = db.ledger.get(totalsKey) as { spendFrom?: number };
    db.ledger.putSync(totalsKey, totals);
  });
}, async (accountId) => {
  const totalsKey = `totals\u0000${accountId}\u0000pool-3`;
  const { fundsBills: _kept, ...totals } = db.ledger.get(totalsKey) as { fundsBills?: number };
  await db.ledger.put(totalsKey, totals);
});

describe('LMDB ledger batch append', () => {
  it('when a batch repeats an event, then it is appended once and the rows and counts are those of single appends', async () => {
    const batchDir = mkdtempSync(join(tmpdir(), 'ledger-batch-'));
    const local = openLocalDb(batchDir);
    try {
      const store = new LmdbLedgerStore(local);
      const events = [credit('acct_b', 1), chatUsage('acct_b', 'hb', 3000, 1), credit('acct_b', 2)];
      expect(store.appendBatch([...events, events[1]])).toBe(3);
      expect(store.appendBatch(events)).toBe(0);
      expect(await store.account('acct_b', 'pool-3')).toEqual({ accountId: 'acct_b', pool: 'pool-3', balance: 1001 + 1002, bills: 2, fundsBills: 2, usage: 1, usageRows: 2 });
      expect((await store.rows('usage', 'acct_b', 'pool-3', 1, 2)).map((row) => row.id)).toEqual(['hb:usage:TEXT_OUTPUT', 'hb:usage:TEXT_INPUT']);
    } finally {
      await local.close();
      rmSync(batchDir, { recursive: true, force: true });
    }
  });

  it('when a turn\'s events are appended inside the turn\'s own transaction, then they move with it: kept when it commits, gone when it fails', async () => {
    const turnDir = mkdtempSync(join(tmpdir(), 'ledger-turn-'));
    const local = openLocalDb(turnDir);
    try {
      const store = new LmdbLedgerStore(local);
      const committed = [credit('acct_t', 1), credit('acct_u', 5), chatUsage('acct_t', 'ht', 3000, 1), credit('acct_t', 1)];
      const outcomes = local.root.transactionSync(() => {
        local.actorState.putSync('turn', 1);
        return store.appendInTransaction(committed);
      });
      expect(outcomes).toEqual(['appended', 'appended', 'appended', 'duplicate']);
      expect(await store.account('acct_t', 'pool-3')).toEqual({ accountId: 'acct_t', pool: 'pool-3', balance: 1001, bills: 1, fundsBills: 1, usage: 1, usageRows: 2 });
      expect(await store.account('acct_u', 'pool-3')).toMatchObject({ balance: 1005, bills: 1 });
      const failed = credit('acct_t', 2);
      expect(() => local.root.transactionSync(() => {
        store.appendInTransaction([failed]);
        throw new Error('the turn failed');
      })).toThrow('the turn failed');
      expect(await store.has(failed.id)).toBe(false);
      expect(await store.account('acct_t', 'pool-3')).toMatchObject({ balance: 1001, bills: 1, usageRows: 2 });
    } finally {
      await local.close();
      rmSync(turnDir, { recursive: true, force: true });
    }
  });
});

