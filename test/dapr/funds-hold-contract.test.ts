// The FundsHold contract against the actors app through a real daprd sidecar (Redis state
// store, Scheduler reminders, Redis Streams pub/sub to the ledger).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaprActorInvoker } from '../../actors/runtime/dapr-invoker';
import { DaprSidecar } from '../../lib/dapr-http';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { startTopology } from '../../topology/topology';
import { fundsHoldContract } from '../contract/funds-hold.contract';
import { ADMIN_TOKEN } from '../support/processes';

jest.setTimeout(180_000);

fundsHoldContract('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'funds-dapr-'));
  const topology = await startTopology({ basePort: 22000, dataDir: join(dir, 'topology'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' } });
  const sidecar = new DaprSidecar('127.0.0.1', topology.ports['daprd-gateway-http']);
  const ledger = await RedisLedgerStore.connect(topology.redisUrl);
  const invoker = new DaprActorInvoker(sidecar);
  return {
    invoker,
    restart: async () => {
      for (const app of ['actors', 'ledger', 'gateway'] as const) await topology.restart(app);
      return invoker;
    },
    ledgerBalance: async (accountId) => (await ledger.account(accountId, 'pool-3')).balance,
    close: async () => {
      await sidecar.close();
      await ledger.close();
      await topology.stop();
    },
  };
});
