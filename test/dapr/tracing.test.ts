// Issue 6's traces on the Dapr topology: the gateway, actors and ledger apps export their spans
// over OTLP and every daprd exports its own (dapr/config.yaml's tracing section), to one receiver.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology } from '../../topology/topology';
import { tracingEnv, tracingSuite } from '../contract/tracing.suite';
import { writeTestCatalog } from '../support/catalog';
import { startOtlpReceiver } from '../support/otlp-receiver';
import { ADMIN_TOKEN } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(180_000);

/** The apps' spans come from this code base's tracer; everything else is daprd's. */
const APP_SCOPE = 'payg-gateway';

tracingSuite('Dapr', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-traces-'));
  const upstream = await startUpstream();
  const receiver = await startOtlpReceiver();
  const topology = await startTopology({
    basePort: 24200,
    dataDir: join(dir, 'topology'),
    otelEndpoint: receiver.endpoint,
    env: {
      ...tracingEnv(receiver),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
      GATEWAY_LOG_LEVEL: 'warn',
      // The suite follows a chat's own actor calls (reserve, settle): per-request holds.
      GATEWAY_FUNDS_LEASE: 'off',
    },
  });
  return {
    url: topology.gatewayUrls[0],
    receiver,
    upstream,
    services: { gateway: 'gateway', actors: 'actors', ledger: 'ledger' },
    sidecarSpans: (spans) => spans.filter((s) => s.scope !== APP_SCOPE),
    close: async () => {
      await topology.stop();
      await receiver.close();
      await upstream.close();
    },
  };
});
