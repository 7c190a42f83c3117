// The chat suite against the real embedded process (`npm start`'s entry point), restarted and
// killed for real; the ledger is read from the same local database (LMDB is multi-process).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { chatSuite } from '../contract/chat.suite';
import { writeTestCatalog } from '../support/catalog';
import { startGateway, type GatewayProcess } from '../support/processes';
import { startUpstream } from '../support/upstream';

chatSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-embedded-'));
  const upstream = await startUpstream();
  const env = {
    GATEWAY_DATA_DIR: join(dir, 'data'),
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
    GATEWAY_MAX_BODY_BYTES: String(256 * 1024),
    GATEWAY_PROVIDER_TIMEOUT_MS: '1500',
    GATEWAY_HOLD_TTL_MS: '4000',
    // A hold that expires in seconds: only test mode accepts a ttl this close to the provider timeout.
    GATEWAY_TEST_MODE: 'true',
  };
  let gateway: GatewayProcess = await startGateway(env);
  let db: LocalDb | undefined;
  const ledger = () => {
    db ??= openLocalDb(env.GATEWAY_DATA_DIR);
    return new LmdbLedgerStore(db);
  };
  return {
    url: gateway.url,
    restart: async () => {
      await gateway.stop();
      gateway = await startGateway(env, gateway.port);
      return gateway.url;
    },
    crashAndRestart: async () => {
      await gateway.kill();
      gateway = await startGateway(env, gateway.port);
      return gateway.url;
    },
    ledgerBalance: async (accountId) => (await ledger().account(accountId, 'pool-3')).balance,
    close: async () => {
      await gateway.stop();
      await db?.close();
      await upstream.close();
    },
  };
});
