// The ledger's side of reconciliation: each account's balance recomputed from its bill rows
// (Σ balanceDelta, exact), beside the running total the store keeps. Read as of one moment per
// account: the totals first, then exactly the bill rows they count.

import { sumOf, toJsonAmount } from '../../lib/money';
import { EXPORT_CHUNK_ROWS } from './console';
import type { BillEntry, LedgerStore } from './entries';

export interface LedgerBalance {
  accountId: string;
  pool: string;
  /** Σ balanceDelta of the bill rows. */
  balance: number;
  /** The store's running total, which must equal `balance`. */
  runningTotal: number;
  bills: number;
}

export async function ledgerBalance(store: LedgerStore, accountId: string, pool: string): Promise<LedgerBalance> {
  const totals = await store.account(accountId, pool);
  let sum = 0n;
  for (let newest = totals.bills; newest >= 1; newest -= EXPORT_CHUNK_ROWS) {
    const rows = await store.rows('billing', accountId, pool, newest - EXPORT_CHUNK_ROWS + 1, newest);
    sum += sumOf(rows.map((row) => (row as BillEntry).balanceDelta));
  }
  return { accountId, pool, balance: toJsonAmount(sum), runningTotal: totals.balance, bills: totals.bills };
}

/** Every account the ledger knows, each with its recomputed balance. */
export async function* ledgerBalances(store: LedgerStore): AsyncGenerator<LedgerBalance> {
  for await (const { accountId, pool } of store.accounts()) yield await ledgerBalance(store, accountId, pool);
}
