// The image suite against the real Dapr topology: the ImageTask actor in the actors app (Redis
// actor state, Scheduler reminders for the UNKNOWN_IMAGE_V1 deadline), FundsHold called actor to
// actor, events over Redis Streams to the ledger app, which the gateway asks for acknowledgments.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { IMAGE_TEST_ENV, imageSuite } from '../contract/images.suite';
import { writeTestCatalog } from '../support/catalog';
import { ADMIN_TOKEN } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(180_000);

imageSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-images-'));
  const upstream = await startUpstream();
  const catalogFile = join(dir, 'catalog.json');
  const env = {
    ...IMAGE_TEST_ENV,
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEWAY_CATALOG_FILE: writeTestCatalog(catalogFile, upstream.url),
    GATEWAY_LOG_LEVEL: 'warn',
  };
  const topology: RunningTopology = await startTopology({ basePort: 28000, dataDir: join(dir, 'topology'), env });
  const ledger = await RedisLedgerStore.connect(topology.redisUrl);
  const restartGateway = async () => {
    await topology.restart('gateway');
    return topology.gatewayUrls[0];
  };
  return {
    url: topology.gatewayUrls[0],
    upstream,
    restartGateway,
    withdraw: async (modelIds) => {
      writeTestCatalog(catalogFile, upstream.url, { withdrawn: modelIds });
      return restartGateway();
    },
    ledger: (accountId) => ledger.account(accountId, 'pool-3'),
    close: async () => {
      await ledger.close();
      await topology.stop();
      await upstream.close();
    },
  };
});
