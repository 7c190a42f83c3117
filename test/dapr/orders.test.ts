// The order suite against the real Dapr topology: the Order actor in the actors app (Redis actor
// state, a Scheduler reminder retrying the credit), FundsHold credited actor to actor, the credit
// event over Redis Streams to the ledger app.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { startTopology } from '../../topology/topology';
import { ORDER_TEST_ENV, orderSuite } from '../contract/orders.suite';
import { ADMIN_TOKEN } from '../support/processes';

jest.setTimeout(180_000);

orderSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-orders-'));
  const env = { ...ORDER_TEST_ENV, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' };
  const topology = await startTopology({ basePort: 30_500, dataDir: join(dir, 'topology'), env });
  const ledger = await RedisLedgerStore.connect(topology.redisUrl);
  return {
    url: topology.gatewayUrls[0],
    ledger: (accountId) => ledger.account(accountId, 'pool-3'),
    ledgerHas: (eventId) => ledger.has(eventId),
    close: async () => {
      await ledger.close();
      await topology.stop();
    },
  };
});
