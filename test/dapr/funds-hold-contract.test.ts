// The FundsHold contract against the actors app through a real daprd sidecar (Redis state
// store, Scheduler reminders, Redis Streams pub/sub to the ledger). A restart restarts the
// actors, ledger and gateway apps.

import { fundsHoldContract } from '../contract/funds-hold.contract';
import { startDaprActors } from '../support/actor-hosts';

jest.setTimeout(180_000);

fundsHoldContract('Dapr', async () => {
  const host = await startDaprActors('funds-dapr-', 22000, { restart: ['actors', 'ledger', 'gateway'] });
  return Object.assign(host, {
    ledgerBalance: async (accountId: string) => (await host.ledger(accountId)).balance,
    ledgerFundsBills: async (accountId: string) => (await host.ledger(accountId)).fundsBills,
  });
});
