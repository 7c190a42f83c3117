// Issue 5's suite against the real embedded process; the ledger is read from the same local
// database (LMDB is multi-process), the OAuth issuer and the upstream are local HTTP servers.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { COMPAT_TEST_ENV, compatSuite } from '../contract/compat.suite';
import { writeTestCatalog } from '../support/catalog';
import { startOAuthIssuer } from '../support/oauth';
import { startGateway } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(60_000);

compatSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-compat-'));
  const upstream = await startUpstream();
  const issuer = await startOAuthIssuer();
  const env = {
    ...COMPAT_TEST_ENV,
    ...issuer.env(),
    GATEWAY_DATA_DIR: join(dir, 'data'),
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
  };
  const gateway = await startGateway(env);
  let db: LocalDb | undefined;
  return {
    url: gateway.url,
    upstream,
    issuer,
    metricsUrls: [`${gateway.url}/metrics`],
    ledgerBalance: async (accountId, pool) => {
      db ??= openLocalDb(env.GATEWAY_DATA_DIR);
      return (await new LmdbLedgerStore(db).account(accountId, pool)).balance;
    },
    close: async () => {
      await gateway.stop();
      await db?.close();
      await issuer.close();
      await upstream.close();
    },
  };
});
