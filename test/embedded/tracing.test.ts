// Issue 6's traces on the embedded process: every span comes from the one gateway process.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tracingEnv, tracingSuite } from '../contract/tracing.suite';
import { writeTestCatalog } from '../support/catalog';
import { startOtlpReceiver } from '../support/otlp-receiver';
import { startGateway } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(60_000);

tracingSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-traces-'));
  const upstream = await startUpstream();
  const receiver = await startOtlpReceiver();
  const gateway = await startGateway({
    ...tracingEnv(receiver),
    GATEWAY_DATA_DIR: join(dir, 'data'),
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
    // The suite follows a chat's own actor calls (reserve, settle): per-request holds.
    GATEWAY_FUNDS_LEASE: 'off',
  });
  return {
    url: gateway.url,
    receiver,
    upstream,
    services: { gateway: 'gateway', actors: 'gateway', ledger: 'gateway' },
    close: async () => {
      await gateway.stop();
      await receiver.close();
      await upstream.close();
    },
  };
});
