// Malformed input against the real embedded process.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { malformedSuite } from '../contract/malformed.suite';
import { startOAuthIssuer } from '../support/oauth';
import { CHECKOUT_SECRET } from '../support/orders';
import { startGateway } from '../support/processes';

jest.setTimeout(60_000);

malformedSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-malformed-'));
  const issuer = await startOAuthIssuer();
  const env = { ...issuer.env(), GATEWAY_COMPAT_ENABLED: 'true', GATEWAY_DATA_DIR: join(dir, 'data'), GATEWAY_PROVIDER_TIMEOUT_MS: '1000', GATEWAY_CHECKOUT_SECRET: CHECKOUT_SECRET };
  const gateway = await startGateway(env);
  let db: LocalDb | undefined;
  return {
    url: gateway.url,
    ledgerBalance: async (accountId) => {
      db ??= openLocalDb(env.GATEWAY_DATA_DIR);
      return (await new LmdbLedgerStore(db).account(accountId, 'pool-3')).balance;
    },
    close: async () => {
      await gateway.stop();
      await db?.close();
      await issuer.close();
    },
  };
});
