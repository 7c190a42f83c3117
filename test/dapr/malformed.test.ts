// Malformed input against the Dapr topology (gateway, actors and ledger apps with sidecars).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { startTopology } from '../../topology/topology';
import { malformedSuite } from '../contract/malformed.suite';
import { startOAuthIssuer } from '../support/oauth';
import { CHECKOUT_SECRET } from '../support/orders';
import { ADMIN_TOKEN } from '../support/processes';

jest.setTimeout(180_000);

malformedSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-malformed-'));
  const issuer = await startOAuthIssuer();
  const topology = await startTopology({ basePort: 31000, dataDir: join(dir, 'topology'), env: { ...issuer.env(), GATEWAY_COMPAT_ENABLED: 'true', GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', GATEWAY_PROVIDER_TIMEOUT_MS: '1000', GATEWAY_CHECKOUT_SECRET: CHECKOUT_SECRET } });
  const ledger = await RedisLedgerStore.connect(topology.redisUrl);
  return {
    url: topology.gatewayUrls[0],
    ledgerBalance: async (accountId) => (await ledger.account(accountId, 'pool-3')).balance,
    close: async () => {
      await ledger.close();
      await topology.stop();
      await issuer.close();
    },
  };
});
