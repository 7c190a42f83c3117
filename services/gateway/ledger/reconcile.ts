// Reconciliation: every account the ledger knows, its balance recomputed from the ledger's bill
// rows, compared with the balance its FundsHold actor holds. A difference is any disagreement
// between the two, or between the rows and the ledger's own running total.
//
// In the Dapr topology events travel from the actor's outbox over pub/sub to the ledger, so an
// account that changed a moment ago can differ for that moment (the ledger lags): a difference
// that persists once traffic is quiet is a real one (docs/console.md).

import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import type { LedgerBalance } from '../../ledger/balances';
import type { LedgerReader } from './reader';

export interface BalanceDifference {
  accountId: string;
  pool: string;
  /** Σ balanceDelta of the ledger's bill rows. */
  ledger: number;
  /** The FundsHold actor's balance. */
  actor: number;
  /** The ledger's running total (equal to `ledger` unless the ledger itself is inconsistent). */
  ledgerRunningTotal: number;
}

export interface Reconciliation {
  accounts: number;
  differences: BalanceDifference[];
}

const CONCURRENT_ACTOR_CALLS = 8;

export async function reconcile(ledger: LedgerReader, funds: FundsHoldClient): Promise<Reconciliation> {
  const balances = ledger.balances()[Symbol.asyncIterator]();
  const differences: BalanceDifference[] = [];
  let accounts = 0;
  const compare = async (entry: LedgerBalance) => {
    const actor = (await funds.of(entry.accountId, entry.pool).getBalance()).balance;
    if (actor !== entry.balance || entry.runningTotal !== entry.balance) {
      differences.push({ accountId: entry.accountId, pool: entry.pool, ledger: entry.balance, actor, ledgerRunningTotal: entry.runningTotal });
    }
  };
  // A few workers share the one stream of ledger balances: bounded actor calls, bounded memory.
  try {
    await Promise.all(Array.from({ length: CONCURRENT_ACTOR_CALLS }, async () => {
      for (let next = await balances.next(); !next.done; next = await balances.next()) {
        accounts += 1;
        await compare(next.value);
      }
    }));
  } catch (error) {
    await balances.return?.();
    throw error;
  }
  differences.sort((a, b) => a.accountId.localeCompare(b.accountId) || a.pool.localeCompare(b.pool));
  return { accounts, differences };
}
