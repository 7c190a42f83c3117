// One embedded gateway per data directory. The embedded host keeps each actor's state in memory
// and writes it whole, so a second process on the same directory would overwrite the first one's
// acknowledged credits and charges: it is refused at start-up, naming the process that serves the
// directory. A directory left by a killed gateway (kill -9) is taken over by the next one.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { balance, fundedAccount } from '../support/api';
import { startGateway, startRefusedGateway } from '../support/processes';

jest.setTimeout(60_000);

describe('a data directory served by a gateway', () => {
  it('when a second gateway starts on it, then that one exits 1 naming the first, and the first goes on serving with its money intact', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'payg-datadir-'));
    const first = await startGateway({ GATEWAY_DATA_DIR: dataDir });
    try {
      const { apiKey } = await fundedAccount(first.url, 1_000_000);
      const refused = await startRefusedGateway({ GATEWAY_DATA_DIR: dataDir });
      expect(refused.code).toBe(1);
      expect(refused.output).toContain(`the data directory ${dataDir} is in use by process ${first.child.pid}`);
      expect(await balance(first.url, apiKey)).toMatchObject({ balance: 1_000_000 });
    } finally {
      await first.stop();
    }
  });

  it('when the gateway serving it was killed (kill -9), then the next one takes it over with the money it held', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'payg-datadir-'));
    const first = await startGateway({ GATEWAY_DATA_DIR: dataDir });
    const { apiKey } = await fundedAccount(first.url, 2_000_000);
    await first.kill();
    const next = await startGateway({ GATEWAY_DATA_DIR: dataDir });
    try {
      expect(await balance(next.url, apiKey)).toMatchObject({ balance: 2_000_000 });
    } finally {
      await next.stop();
    }
  });
});
