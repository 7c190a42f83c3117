// The prices suite against the real embedded process (`npm start`'s entry point): its catalog
// file edited while it runs, and SIGHUP sent to it.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PricesCatalog, pricesSuite } from '../contract/prices.suite';
import { startGateway } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(120_000);

pricesSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-prices-'));
  const upstream = await startUpstream();
  const catalog = new PricesCatalog(dir, upstream.url);
  const gateway = await startGateway({ GATEWAY_CATALOG_FILE: catalog.path, GATEWAY_DATA_DIR: join(dir, 'data'), GATEWAY_LOG_LEVEL: 'info' });
  return {
    url: gateway.url,
    catalog,
    hangUp: async () => void gateway.child.kill('SIGHUP'),
    logs: () => gateway.output(),
    close: async () => {
      await gateway.stop();
      await upstream.close();
    },
  };
});
