// The key and account lifecycle suite against the Dapr topology with two gateway instances, each
// with its own sidecar and its own key cache: a key revoked or an account suspended through one
// is refused by both within one second.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology } from '../../topology/topology';
import { keyLifecycleSuite } from '../contract/key-lifecycle.suite';
import { ADMIN_TOKEN } from '../support/processes';

jest.setTimeout(180_000);

keyLifecycleSuite('Dapr', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-dapr-keys-')), 'topology');
  const topology = await startTopology({ basePort: 19_000, gatewayInstances: 2, dataDir, env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' } });
  const [a, b] = topology.gatewayUrls;
  return { urls: [a, b], close: () => topology.stop() };
});
