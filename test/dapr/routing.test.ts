// The routing suite against the real Dapr topology: the gateway app keeps its own circuits.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology } from '../../topology/topology';
import { ROUTING_ENV, routingSuite, writeRoutingCatalog } from '../contract/routing.suite';
import { ADMIN_TOKEN } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(180_000);

routingSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-routing-'));
  const upstream = await startUpstream();
  const env = { ...ROUTING_ENV, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_CATALOG_FILE: writeRoutingCatalog(join(dir, 'catalog.json'), upstream.url) };
  const topology = await startTopology({ basePort: 21_500, dataDir: join(dir, 'topology'), env });
  return {
    url: topology.gatewayUrls[0],
    upstream,
    close: async () => {
      await topology.stop();
      await upstream.close();
    },
  };
});
