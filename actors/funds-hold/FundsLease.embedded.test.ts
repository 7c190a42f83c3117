// The FundsHold lease contract on the embedded host, events through the outbox and the publisher.

import { fundsLeaseContract } from '../../test/contract/funds-lease.contract';
import { startEmbeddedActors } from '../../test/support/actor-hosts';

jest.setTimeout(120_000);

fundsLeaseContract('embedded', async () => {
  const host = await startEmbeddedActors('funds-lease-', { deliverInCommit: false });
  return Object.assign(host, { ledgerBalance: async (accountId: string) => (await host.ledger(accountId)).balance });
});
