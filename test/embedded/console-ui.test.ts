// The web console in Chromium against the real embedded process (`npm start`'s entry point);
// this run writes the screenshots the README shows.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consoleUiSuite } from '../contract/console-ui.suite';
import { ROOT, startGateway } from '../support/processes';

jest.setTimeout(60_000);

consoleUiSuite('embedded', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-console-ui-')), 'data');
  const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir });
  return { url: gateway.url, close: () => gateway.stop() };
}, { screenshots: join(ROOT, 'docs/console') });
