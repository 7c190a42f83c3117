// The ledger's side of reconciliation: each account's balance recomputed from its bill rows
// (Σ balanceDelta, exact), beside the running total the store keeps. Read as of one moment per
// account: the totals first, then exactly the bill rows they count (rows never move, so the sum
// of rows 1 to n, read at any later time, is the balance of the moment the ledger had n bills).

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
  /** Of the bills, those a FundsHold actor's events made (absent: not counted for this account, AccountLedgerView). */
  fundsBills?: number;
}

/** An account's running total and how many bill rows it counts, read at one moment (one read). */
export interface LedgerTotals {
  balance: number;
  bills: number;
  /** As in LedgerBalance. */
  fundsBills?: number;
}

/** The FundsHold bill count of a totals read, when the ledger keeps one. */
export const fundsBillsOf = (totals: { fundsBills?: number }) => (totals.fundsBills !== undefined ? { fundsBills: totals.fundsBills } : {});

export async function ledgerTotals(store: LedgerStore, accountId: string, pool: string): Promise<LedgerTotals> {
  const totals = await store.account(accountId, pool);
  return { balance: totals.balance, bills: totals.bills, ...fundsBillsOf(totals) };
}

/** Σ balanceDelta of the account's bill rows 1 to `upTo`: its balance when the ledger held `upTo` bills. */
export async function billsSum(store: LedgerStore, accountId: string, pool: string, upTo: number): Promise<number> {
  let sum = 0n;
  for (let newest = upTo; newest >= 1; newest -= EXPORT_CHUNK_ROWS) {
    const rows = await store.rows('billing', accountId, pool, newest - EXPORT_CHUNK_ROWS + 1, newest);
    sum += sumOf(rows.map((row) => (row as BillEntry).balanceDelta));
  }
  return toJsonAmount(sum);
}

/** The most bills one balancesAt read spans. */
export const MAX_BALANCES_SPAN = 1000;

/**
 * The account's balance at each bill count from `from` to `to` (Σ balanceDelta of bill rows 1 to
 * k, for each k; rows never move, so each is the balance of the moment the ledger had k bills),
 * oldest first; the counts past the rows it has are left out.
 */
export async function balancesAt(store: LedgerStore, accountId: string, pool: string, from: number, to: number): Promise<number[]> {
  let balance = BigInt(await billsSum(store, accountId, pool, from));
  const balances = [toJsonAmount(balance)];
  const rows = (await store.rows('billing', accountId, pool, from + 1, to)).reverse();
  for (const row of rows) balances.push(toJsonAmount((balance += BigInt((row as BillEntry).balanceDelta))));
  return balances;
}

export async function ledgerBalance(store: LedgerStore, accountId: string, pool: string): Promise<LedgerBalance> {
  const totals = await store.account(accountId, pool);
  return { accountId, pool, balance: await billsSum(store, accountId, pool, totals.bills), runningTotal: totals.balance, bills: totals.bills, ...fundsBillsOf(totals) };
}

/** Every account the ledger knows, each with its recomputed balance. */
export async function* ledgerBalances(store: LedgerStore): AsyncGenerator<LedgerBalance> {
  for await (const { accountId, pool } of store.accounts()) yield await ledgerBalance(store, accountId, pool);
}
