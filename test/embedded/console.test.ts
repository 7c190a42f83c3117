// The console suite against the real embedded process; and reconciliation finding a real
// difference: a bill written into the ledger (LMDB is multi-process) that no actor ever made.

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { billingEvent } from '../../lib/events';
import { openLocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { CHECKOUT_SECRET } from '../support/orders';
import { consoleSuite } from '../contract/console.suite';
import { fundedAccount, json } from '../support/api';
import { ADMIN_TOKEN, ROOT, startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(60_000);

consoleSuite('embedded', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-console-')), 'data');
  const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_CHECKOUT_SECRET: CHECKOUT_SECRET });
  return {
    url: gateway.url,
    seed: async (events) => {
      const db = openLocalDb(dataDir);
      try {
        new LmdbLedgerStore(db).appendBatch(events);
      } finally {
        await db.close();
      }
    },
    close: () => gateway.stop(),
  };
});

describe('reconciliation on the embedded host', () => {
  const run = promisify(execFile);
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-reconcile-')), 'data');
  let gateway: GatewayProcess;
  const reconcileCli = () => run(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'reconcile'], { env: { ...process.env, GATEWAY_URL: gateway.url, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN } });

  beforeAll(async () => {
    gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('when the ledger holds a bill its actor never made, then the route and the CLI report that account and the CLI exits 1', async () => {
    const honest = await fundedAccount(gateway.url, 5000);
    const tampered = await fundedAccount(gateway.url, 7000);
    const clean = await reconcileCli();
    expect(clean.stdout).toMatch(/^2 accounts checked, 0 with a difference$/m);

    const db = openLocalDb(dataDir);
    try {
      new LmdbLedgerStore(db).appendSync(billingEvent(`credit:${tampered.accountId}:pool-3:forged`, Date.now(), {
        kind: 'credit', accountId: tampered.accountId, pool: 'pool-3', balanceDelta: 300, amount: 300, reference: 'forged',
      }));
    } finally {
      await db.close();
    }
    const answer = await json(`${gateway.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(answer.body).toEqual({ accounts: 2, differences: [{ accountId: tampered.accountId, pool: 'pool-3', ledger: 7300, actor: 7000, ledgerRunningTotal: 7300 }] });
    const failed = await reconcileCli().then(() => undefined, (error: { code: number; stdout: string }) => error);
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toContain(`difference ${tampered.accountId} pool-3: ledger 7300, actor 7000`);
    expect(failed?.stdout).not.toContain(honest.accountId);
  });
});
