// The schema-based fuzzer (test/contract/fuzz.suite.ts) against the real Dapr topology: the
// gateway app and its sidecar, the actors and ledger apps, Redis, placement and scheduler.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology } from '../../topology/topology';
import { FUZZ_ENV, fuzzSuite } from '../contract/fuzz.suite';
import { writeTestCatalog } from '../support/catalog';
import { startOAuthIssuer } from '../support/oauth';
import { ADMIN_TOKEN } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(900_000);

fuzzSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-fuzz-'));
  const upstream = await startUpstream();
  const issuer = await startOAuthIssuer();
  const env = {
    ...FUZZ_ENV,
    ...issuer.env(),
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
    GATEWAY_LOG_LEVEL: 'warn',
  };
  const topology = await startTopology({ basePort: 18400, dataDir: join(dir, 'topology'), env });
  return {
    url: topology.gatewayUrls[0],
    dir,
    issuer,
    close: async () => {
      await topology.stop();
      await issuer.close();
      await upstream.close();
    },
  };
});
