// The gateway's port to the ledger's reads: the console's pages and exports of the caller's own
// account, and every account's recomputed balance (reconciliation). Embedded: the ledger store is
// in this process and the shared implementation (services/ledger/console.ts) runs here. Dapr:
// the ledger app runs it and this side relays (dapr-reader.ts).

import type { Readable } from 'node:stream';
import { balancesAt, ledgerBalances, ledgerTotals, type LedgerBalance, type LedgerTotals } from '../../ledger/balances';
import { exportItems, readPage, type ConsolePage, type RowStore } from '../../ledger/console';
import type { RowSource } from '../../ledger/row-reader';
import type { ConsoleKind, ExportQuery, PageQuery, SpendingDaysQuery } from '../../ledger/console-query';
import { readSpending, type SpendingAnswer } from '../../ledger/spending';
import type { LedgerStore } from '../../ledger/entries';
import { exportStream } from '../../ledger/export-format';

export interface LedgerReader {
  page(kind: ConsoleKind, accountId: string, pool: string, query: PageQuery): Promise<ConsolePage>;
  /** The export body (bytes of the query's format), streamed. */
  export(kind: ConsoleKind, accountId: string, pool: string, query: ExportQuery): Promise<Readable>;
  /** Charged per UTC day and model (services/ledger/spending.ts). */
  spending(accountId: string, pool: string, query: SpendingDaysQuery): Promise<SpendingAnswer>;
  balances(): AsyncIterable<LedgerBalance>;
  /** One account's running total and bill count, now (one read: reconciliation's check of a difference). */
  totals(accountId: string, pool: string): Promise<LedgerTotals>;
  /**
   * The account's balance at each bill count from `from` to `to` (at most MAX_BALANCES_SPAN apart):
   * Σ balanceDelta of its bill rows 1 to k (rows never move: the balance when it had k bills).
   */
  balancesAt(accountId: string, pool: string, from: number, to: number): Promise<number[]>;
  /** Enters an account's pool in the ledger's index (no money rows): reconciliation covers it from then on. */
  register(accountId: string, pool: string): Promise<void>;
}

/**
 * `exportRows`, when given, reads the exports' rows in place of the store (embedded: in a child
 * process, services/ledger/row-reader.ts); counts are the store's.
 */
export function storeLedgerReader(store: LedgerStore, exportRows?: RowSource): LedgerReader {
  const exported: RowStore = exportRows ? { count: (...args) => store.count(...args), rows: (...args) => exportRows.rows(...args) } : store;
  return {
    page: (kind, accountId, pool, query) => readPage(store, kind, accountId, pool, query),
    export: async (kind, accountId, pool, query) => exportStream(kind, query.format, exportItems(exported, kind, accountId, pool, query)),
    spending: (accountId, pool, query) => readSpending(store, accountId, pool, query),
    balances: () => ledgerBalances(store),
    totals: (accountId, pool) => ledgerTotals(store, accountId, pool),
    balancesAt: (accountId, pool, from, to) => balancesAt(store, accountId, pool, from, to),
    register: (accountId, pool) => store.register(accountId, pool),
  };
}
