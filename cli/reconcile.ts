// `reconcile`: every account's balance in the ledger (recomputed from its bill rows) against its
// FundsHold actor. Prints each difference with the events the actor emitted that the ledger lacks,
// and a summary; exit code 1 when there is a difference, 3 when nothing could be checked. `reconcile --repair`: the differing
// accounts' actors deliver those events to the ledger, then the result is reconciled again.

import type { CliIo } from './main';

interface MissingEvent {
  id: string;
  type: string;
  balanceDelta?: number;
}

interface Difference {
  accountId: string;
  pool: string;
  ledger: number;
  actor: number;
  ledgerRunningTotal: number;
  bills?: { ledger: number; actor: number };
  missing?: MissingEvent[];
}

interface Reconciliation {
  accounts: number;
  differences: Difference[];
}

interface Repair {
  repaired: { accountId: string; pool: string; delivered: string[]; pending: string[] }[];
  after: Reconciliation;
}

export async function reconcileCommand(base: string, token: string, io: CliIo, options: { repair?: boolean } = {}): Promise<number> {
  const response = options.repair
    ? await io.fetch(`${base}/admin/v1/reconciliation/repair`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    : await io.fetch(`${base}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  if (!response.ok) {
    // Not a difference: nothing was checked (the token refused, the gateway or its actors unavailable).
    io.err(`could not reconcile: the gateway answered ${response.status} ${text}`);
    return 3;
  }
  let result: Reconciliation;
  if (options.repair) {
    const repair = JSON.parse(text) as Repair;
    for (const r of repair.repaired) {
      io.out(`repaired ${r.accountId} ${r.pool}: ${r.delivered.length} event(s) delivered${r.delivered.map((id) => `\n  delivered ${id}`).join('')}${r.pending.map((id) => `\n  still missing ${id}`).join('')}`);
    }
    io.out(`${repair.repaired.length} account(s) repaired; reconciled again:`);
    result = repair.after;
  } else {
    result = JSON.parse(text) as Reconciliation;
  }
  for (const d of result.differences) {
    const bills = d.bills === undefined ? '' : `; bills: ledger ${d.bills.ledger}, actor ${d.bills.actor}`;
    io.out(`difference ${d.accountId} ${d.pool}: ledger ${d.ledger}, actor ${d.actor}, ledger running total ${d.ledgerRunningTotal} (actor − ledger = ${d.actor - d.ledger})${bills}`);
    for (const event of d.missing ?? []) io.out(`  missing ${event.id} (${event.type}${event.balanceDelta === undefined ? '' : `, balance ${event.balanceDelta >= 0 ? '+' : ''}${event.balanceDelta}`})`);
  }
  const missing = result.differences.reduce((n, d) => n + (d.missing?.length ?? 0), 0);
  io.out(`${result.accounts} account pools checked (an account in one funding pool each), ${result.differences.length} with a difference${missing > 0 ? `, ${missing} event(s) missing from the ledger (repair: reconcile --repair)` : ''}`);
  return result.differences.length > 0 ? 1 : 0;
}
