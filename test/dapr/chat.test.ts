// The chat suite against the real Dapr topology: Redis, placement, scheduler, the gateway,
// actors and ledger apps each with its daprd sidecar. Restarts kill the apps and sidecars.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { chatSuite } from '../contract/chat.suite';
import { writeTestCatalog } from '../support/catalog';
import { ADMIN_TOKEN } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(180_000);

chatSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-'));
  const upstream = await startUpstream();
  const env = {
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
    GATEWAY_MAX_BODY_BYTES: String(256 * 1024),
    GATEWAY_PROVIDER_TIMEOUT_MS: '1500',
    GATEWAY_HOLD_TTL_MS: '4000',
    // A hold that expires in seconds: only test mode accepts a ttl this close to the provider timeout.
    GATEWAY_TEST_MODE: 'true',
    GATEWAY_LOG_LEVEL: 'warn',
  };
  const topology: RunningTopology = await startTopology({ basePort: 21000, dataDir: join(dir, 'topology'), env });
  const ledger = await RedisLedgerStore.connect(topology.redisUrl);
  return {
    url: topology.gatewayUrls[0],
    crashAndRestart: async () => {
      // kill -9 of the gateway holding the request in flight, and of the actors app holding the hold.
      await topology.kill('gateway', 'SIGKILL');
      await topology.kill('actors', 'SIGKILL');
      await topology.restart('actors');
      await topology.restart('gateway');
      return topology.gatewayUrls[0];
    },
    restart: async () => {
      for (const app of ['gateway', 'actors', 'ledger'] as const) await topology.restart(app);
      return topology.gatewayUrls[0];
    },
    ledgerBalance: async (accountId) => (await ledger.account(accountId, 'pool-3')).balance,
    close: async () => {
      await ledger.close();
      await topology.stop();
      await upstream.close();
    },
  };
});
