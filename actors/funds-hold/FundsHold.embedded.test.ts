// The FundsHold contract on the embedded host, with a real local database and a real restart
// (the host and the database are closed and opened again on the same directory). Events go
// through the outbox and the publisher here (not the in-commit delivery), so that path is covered.

import { exposition } from '../../lib/metrics';
import { fundsHoldContract } from '../../test/contract/funds-hold.contract';
import { startEmbeddedActors } from '../../test/support/actor-hosts';

jest.setTimeout(120_000);

fundsHoldContract('embedded', async () => {
  const host = await startEmbeddedActors('funds-', { deliverInCommit: false });
  return Object.assign(host, {
    ledgerBalance: async (accountId: string) => (await host.ledger(accountId)).balance,
    ledgerFundsBills: async (accountId: string) => (await host.ledger(accountId)).fundsBills,
    // The embedded host runs its actors in this process: its registry is this one.
    metrics: async () => (await exposition()).body,
  });
});
