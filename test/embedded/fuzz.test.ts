// The schema-based fuzzer (test/contract/fuzz.suite.ts) against the real embedded process.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FUZZ_ENV, fuzzSuite } from '../contract/fuzz.suite';
import { writeTestCatalog } from '../support/catalog';
import { startOAuthIssuer } from '../support/oauth';
import { startGateway } from '../support/processes';
import { startUpstream } from '../support/upstream';

fuzzSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-fuzz-'));
  const upstream = await startUpstream();
  const issuer = await startOAuthIssuer();
  const gateway = await startGateway({
    ...FUZZ_ENV,
    ...issuer.env(),
    GATEWAY_DATA_DIR: join(dir, 'data'),
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
  });
  return {
    url: gateway.url,
    dir,
    issuer,
    close: async () => {
      await gateway.stop();
      await upstream.close();
      await issuer.close();
    },
  };
});
