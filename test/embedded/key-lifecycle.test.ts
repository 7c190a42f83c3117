// The key and account lifecycle suite against the real embedded process (`npm start`'s entry point).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyLifecycleSuite } from '../contract/key-lifecycle.suite';
import { startGateway } from '../support/processes';

jest.setTimeout(60_000);

keyLifecycleSuite('embedded', async () => {
  const gateway = await startGateway({ GATEWAY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'gw-keys-')), 'data') });
  return { urls: [gateway.url, gateway.url], close: () => gateway.stop() };
});
