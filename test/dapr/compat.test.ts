// Issue 5's suite against the real Dapr topology: FundsHold actors of both pools in the actors
// app (Redis actor state), events over Redis Streams to the ledger app.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { startTopology } from '../../topology/topology';
import { COMPAT_TEST_ENV, compatSuite } from '../contract/compat.suite';
import { writeTestCatalog } from '../support/catalog';
import { startOAuthIssuer } from '../support/oauth';
import { ADMIN_TOKEN } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(180_000);

compatSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-compat-'));
  const upstream = await startUpstream();
  const issuer = await startOAuthIssuer();
  const env = {
    ...COMPAT_TEST_ENV,
    ...issuer.env(),
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
    GATEWAY_LOG_LEVEL: 'warn',
  };
  const topology = await startTopology({ basePort: 32000, dataDir: join(dir, 'topology'), env });
  const ledger = await RedisLedgerStore.connect(topology.redisUrl);
  return {
    url: topology.gatewayUrls[0],
    upstream,
    issuer,
    metricsUrls: [`${topology.gatewayUrls[0]}/metrics`, `http://127.0.0.1:${topology.ports.actors}/metrics`, `http://127.0.0.1:${topology.ports.ledger}/metrics`],
    ledgerBalance: async (accountId, pool) => (await ledger.account(accountId, pool)).balance,
    close: async () => {
      await ledger.close();
      await topology.stop();
      await issuer.close();
      await upstream.close();
    },
  };
});
