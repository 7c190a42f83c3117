// The routing suite against the real embedded process (`npm start`'s entry point).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROUTING_ENV, routingSuite, writeRoutingCatalog } from '../contract/routing.suite';
import { startGateway } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(60_000);

routingSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-routing-'));
  const upstream = await startUpstream();
  const gateway = await startGateway({ ...ROUTING_ENV, GATEWAY_CATALOG_FILE: writeRoutingCatalog(join(dir, 'catalog.json'), upstream.url), GATEWAY_DATA_DIR: join(dir, 'data') });
  return {
    url: gateway.url,
    upstream,
    close: async () => {
      await gateway.stop();
      await upstream.close();
    },
  };
});
