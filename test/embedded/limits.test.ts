// The limits suite against the real embedded process (`npm start`'s entry point).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIMITS_TEST_ENV, limitsSuite } from '../contract/limits.suite';
import { startGateway } from '../support/processes';

jest.setTimeout(120_000);

limitsSuite('embedded', async () => {
  const gateway = await startGateway({ ...LIMITS_TEST_ENV, GATEWAY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'gw-limits-')), 'data') });
  return { urls: [gateway.url, gateway.url], close: () => gateway.stop() };
});
