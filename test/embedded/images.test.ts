// The image suite against the real embedded process (`npm start`'s entry point), restarted for
// real; the ledger is read from the same local database (LMDB is multi-process).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { IMAGE_TEST_ENV, imageSuite } from '../contract/images.suite';
import { writeTestCatalog } from '../support/catalog';
import { startGateway, type GatewayProcess } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(60_000);

imageSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-images-'));
  const upstream = await startUpstream();
  const catalogFile = join(dir, 'catalog.json');
  const env = { ...IMAGE_TEST_ENV, GATEWAY_DATA_DIR: join(dir, 'data'), GATEWAY_CATALOG_FILE: writeTestCatalog(catalogFile, upstream.url) };
  let gateway: GatewayProcess = await startGateway(env);
  let db: LocalDb | undefined;
  const restartGateway = async () => {
    await gateway.stop();
    gateway = await startGateway(env, gateway.port);
    return gateway.url;
  };
  return {
    url: gateway.url,
    upstream,
    restartGateway,
    withdraw: async (modelIds) => {
      writeTestCatalog(catalogFile, upstream.url, { withdrawn: modelIds });
      return restartGateway();
    },
    ledger: async (accountId) => {
      db ??= openLocalDb(env.GATEWAY_DATA_DIR);
      return new LmdbLedgerStore(db).account(accountId, 'pool-3');
    },
    close: async () => {
      await gateway.stop();
      await db?.close();
      await upstream.close();
    },
  };
});
