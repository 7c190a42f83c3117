// The ImageTask contract against the actors app through a real daprd sidecar: Redis actor state,
// Scheduler reminders (the UNKNOWN_IMAGE_V1 deadline), FundsHold called actor to actor, Redis
// Streams pub/sub to the ledger. The restart case restarts the actors app and its sidecar.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaprActorInvoker } from '../../actors/runtime/dapr-invoker';
import { DaprSidecar } from '../../lib/dapr-http';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { startTopology } from '../../topology/topology';
import { imageTaskContract } from '../contract/image-task.contract';
import { ADMIN_TOKEN } from '../support/processes';

jest.setTimeout(180_000);

imageTaskContract('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'image-dapr-'));
  const topology = await startTopology({ basePort: 27000, dataDir: join(dir, 'topology'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' } });
  const sidecar = new DaprSidecar('127.0.0.1', topology.ports['daprd-gateway-http']);
  const ledger = await RedisLedgerStore.connect(topology.redisUrl);
  const invoker = new DaprActorInvoker(sidecar);
  return {
    invoker,
    restart: async () => {
      await topology.restart('actors');
      await topology.restart('daprd-actors');
      return invoker;
    },
    ledger: (accountId) => ledger.account(accountId, 'pool-3'),
    ledgerHas: (eventId) => ledger.has(eventId),
    close: async () => {
      await sidecar.close();
      await ledger.close();
      await topology.stop();
    },
  };
}, { deadlineMs: 2000 });
