// The web console in Chromium against the real embedded process (`npm start`'s entry point);
// this run writes the screenshots the README shows.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consoleUiSuite } from '../contract/console-ui.suite';
import { startOAuthIssuer } from '../support/oauth';
import { ROOT, startGateway } from '../support/processes';
import { ORDER_TEST_ENV } from '../contract/orders.suite';
import { embeddedLedgerSeed } from '../support/ledger-seed';

jest.setTimeout(60_000);

consoleUiSuite('embedded', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-console-ui-')), 'data');
  // Member tokens too: a local OAuth issuer the gateway trusts.
  const issuer = await startOAuthIssuer();
  const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir, ...ORDER_TEST_ENV, ...issuer.env() });
  return {
    url: gateway.url,
    issuer,
    seed: embeddedLedgerSeed(dataDir),
    close: async () => {
      await gateway.stop();
      await issuer.close();
    },
  };
}, { screenshots: join(ROOT, 'docs/console') });
