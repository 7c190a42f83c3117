// The FundsHold lease contract against the actors app through a real daprd sidecar (Redis state
// store, Scheduler reminders, Redis Streams pub/sub to the ledger).

import { fundsLeaseContract } from '../contract/funds-lease.contract';
import { startDaprActors } from '../support/actor-hosts';

jest.setTimeout(180_000);

fundsLeaseContract('Dapr', async () => {
  const host = await startDaprActors('funds-lease-dapr-', 16600);
  return Object.assign(host, { ledgerBalance: async (accountId: string) => (await host.ledger(accountId)).balance });
});
