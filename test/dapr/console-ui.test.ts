// The web console in Chromium against the real Dapr topology: the gateway on Dapr serves the
// page, the actors app holds the money, the ledger app answers the pages and exports.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology } from '../../topology/topology';
import { consoleUiSuite } from '../contract/console-ui.suite';
import { startOAuthIssuer } from '../support/oauth';
import { ADMIN_TOKEN } from '../support/processes';
import { ORDER_TEST_ENV } from '../contract/orders.suite';
import { RedisLedgerStore } from '../../services/ledger/redis-store';

jest.setTimeout(180_000);

consoleUiSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-console-ui-'));
  // Member tokens too: a local OAuth issuer the gateway trusts.
  const issuer = await startOAuthIssuer();
  const topology = await startTopology({ basePort: 22_500, dataDir: join(dir, 'topology'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', ...ORDER_TEST_ENV, ...issuer.env() } });
  return {
    url: topology.gatewayUrls[0]!,
    issuer,
    seed: async (events) => {
      const ledger = await RedisLedgerStore.connect(topology.redisUrl);
      try {
        for (const event of events) await ledger.append(event);
      } finally {
        await ledger.close();
      }
    },
    close: async () => {
      await topology.stop();
      await issuer.close();
    },
  };
});
