// `reconcile`: every ledger account's balance (recomputed from its bill rows) against its
// FundsHold actor. Prints each difference and a summary; exit code 1 when there is a difference.

import type { CliIo } from './main';

interface Difference {
  accountId: string;
  pool: string;
  ledger: number;
  actor: number;
  ledgerRunningTotal: number;
}

export async function reconcileCommand(base: string, token: string, io: CliIo): Promise<number> {
  const response = await io.fetch(`${base}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  if (!response.ok) {
    io.err(`${response.status} ${text}`);
    return 1;
  }
  const result = JSON.parse(text) as { accounts: number; differences: Difference[] };
  for (const d of result.differences) {
    io.out(`difference ${d.accountId} ${d.pool}: ledger ${d.ledger}, actor ${d.actor}, ledger running total ${d.ledgerRunningTotal} (actor − ledger = ${d.actor - d.ledger})`);
  }
  io.out(`${result.accounts} accounts checked, ${result.differences.length} with a difference`);
  return result.differences.length > 0 ? 1 : 0;
}
