// The limits suite against the Dapr topology with two gateway instances: the rates are counted by
// each account's one Account actor and the spend by its one FundsHold, whichever instance a call
// comes through, so 1,000 concurrent calls through both never pass a limit.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology } from '../../topology/topology';
import { LIMITS_TEST_ENV, limitsSuite } from '../contract/limits.suite';
import { ADMIN_TOKEN } from '../support/processes';

jest.setTimeout(180_000);

limitsSuite('Dapr', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-dapr-limits-')), 'topology');
  const topology = await startTopology({ basePort: 19_600, gatewayInstances: 2, dataDir, env: { ...LIMITS_TEST_ENV, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' } });
  const [a, b] = topology.gatewayUrls;
  return { urls: [a, b], close: () => topology.stop() };
});
