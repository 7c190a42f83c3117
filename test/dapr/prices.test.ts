// The prices suite against the real Dapr topology: the gateway app (the one process of the
// topology that reads the catalog) has its catalog file edited while it runs, and is sent SIGHUP.

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology } from '../../topology/topology';
import { PricesCatalog, pricesSuite } from '../contract/prices.suite';
import { ADMIN_TOKEN } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(180_000);

pricesSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-prices-'));
  const upstream = await startUpstream();
  const catalog = new PricesCatalog(dir, upstream.url);
  const dataDir = join(dir, 'topology');
  const env = { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_CATALOG_FILE: catalog.path, GATEWAY_LOG_LEVEL: 'info' };
  const topology = await startTopology({ basePort: 20_500, dataDir, env });
  return {
    url: topology.gatewayUrls[0],
    catalog,
    hangUp: async () => void process.kill(topology.pid('gateway')!, 'SIGHUP'),
    logs: () => readFileSync(join(dataDir, 'logs', 'gateway.log'), 'utf8'),
    close: async () => {
      await topology.stop();
      await upstream.close();
    },
  };
});
