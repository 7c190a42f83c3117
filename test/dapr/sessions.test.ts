// The prototype sessions suite against the Dapr topology with two gateway instances: runs start
// on the first, readers follow through either (the stream reads from the Session actor). The
// kill -9 takes the first gateway only; the actors app stays up and the lease reminder (Dapr
// Scheduler) fails the run and releases its hold while a reader on the second gateway watches.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { startTopology } from '../../topology/topology';
import { sessionsSuite } from '../contract/sessions.suite';
import { writeTestCatalog } from '../support/catalog';
import { ADMIN_TOKEN } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(180_000);

sessionsSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-sessions-'));
  const upstream = await startUpstream();
  const env = {
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEWAY_LOG_LEVEL: 'warn',
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
    GATEWAY_CAPABILITY_DELIVERY: 'agent_run:session_events',
    GATEWAY_SESSION_RUN_LEASE_MS: '2000',
    GATEWAY_SESSION_POLL_MS: '100',
    GATEWAY_HOLD_TTL_MS: '600000',
    GATEWAY_DRAIN_TIMEOUT_MS: '8000',
  };
  const topology = await startTopology({ basePort: 24000, gatewayInstances: 2, dataDir: join(dir, 'topology'), env });
  const ledger = await RedisLedgerStore.connect(topology.redisUrl);
  return {
    urls: topology.gatewayUrls,
    killGateway: async (whileDown?: () => Promise<void>) => {
      await topology.kill('gateway', 'SIGKILL');
      await whileDown?.();
      await topology.restart('gateway');
    },
    restartGateway: () => topology.restart('gateway'),
    ledgerBalance: async (accountId) => (await ledger.account(accountId, 'pool-3')).balance,
    close: async () => {
      await ledger.close();
      await topology.stop();
      await upstream.close();
    },
  };
});
