// The console suite against the real embedded process; and reconciliation finding a real
// difference: a bill written into the ledger (LMDB is multi-process) that no actor ever made.

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { billingEvent } from '../../lib/events';
import { embeddedLedgerSeed } from '../support/ledger-seed';
import { openLocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { CHECKOUT_SECRET } from '../support/orders';
import { consoleSuite } from '../contract/console.suite';
import { balance, chat, fundedAccount, hello, json } from '../support/api';
import { ADMIN_TOKEN, ROOT, startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(60_000);

consoleSuite('embedded', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-console-')), 'data');
  const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_CHECKOUT_SECRET: CHECKOUT_SECRET });
  return {
    url: gateway.url,
    seed: embeddedLedgerSeed(dataDir),
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
    // Both accounts in both pools (pool-3 and member): each registered with the ledger at creation.
    expect(clean.stdout).toMatch(/^4 account pools checked \(an account in one funding pool each\), 0 with a difference$/m);

    const db = openLocalDb(dataDir);
    try {
      new LmdbLedgerStore(db).appendSync(billingEvent(`credit:${tampered.accountId}:pool-3:forged`, Date.now(), {
        kind: 'credit', accountId: tampered.accountId, pool: 'pool-3', balanceDelta: 300, amount: 300, reference: 'forged',
      }));
    } finally {
      await db.close();
    }
    const answer = await json(`${gateway.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    // The forged bill is one the actor never emitted: its initial credit is the one bill it counts.
    expect(answer.body).toEqual({ accounts: 4, differences: [{ accountId: tampered.accountId, pool: 'pool-3', ledger: 7300, actor: 7000, ledgerRunningTotal: 7300, bills: { ledger: 2, actor: 1 }, missing: [] }] });
    const failed = await reconcileCli().then(() => undefined, (error: { code: number; stdout: string }) => error);
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toContain(`difference ${tampered.accountId} pool-3: ledger 7300, actor 7000, ledger running total 7300 (actor − ledger = -300); bills: ledger 2, actor 1`);
    expect(failed?.stdout).not.toContain(honest.accountId);
  });

  it('when chats settle while reconciliation runs, then no difference is reported (the ledger and the actor are compared as of one moment)', async () => {
    const busy = await fundedAccount(gateway.url, 1_000_000_000);
    let stop = false;
    const chatter = async () => {
      while (!stop) await chat(gateway.url, busy.apiKey, hello);
    };
    const chatters = [chatter(), chatter(), chatter(), chatter()];
    const found: unknown[] = [];
    try {
      for (let round = 0; round < 40; round++) {
        const answer = await json(`${gateway.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect(answer.status).toBe(200);
        found.push(...answer.body.differences.filter((d: { accountId: string }) => d.accountId === busy.accountId));
      }
    } finally {
      stop = true;
      await Promise.all(chatters);
    }
    expect(found).toEqual([]);
    expect((await balance(gateway.url, busy.apiKey)).balance).toBeLessThan(1_000_000_000);
  });

  it('when an account has no ledger row at all, then reconciliation still covers both its pools (registered at creation)', async () => {
    const before = (await json(`${gateway.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.accounts;
    await fundedAccount(gateway.url, 0);
    const after = await json(`${gateway.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(after.body.accounts).toBe(before + 2);
  });

  it('when a repair is asked with nothing missing (the embedded ledger is written in the commit), then nothing is delivered and the CLI exits 1 only for the real difference', async () => {
    const repaired = await run(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'reconcile', '--repair'], { env: { ...process.env, GATEWAY_URL: gateway.url, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN } })
      .then(({ stdout }) => ({ code: 0, stdout }), (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }));
    expect(repaired.stdout).toMatch(/^0 account\(s\) repaired; reconciled again:$/m);
    expect(repaired.stdout).toMatch(/ 1 with a difference$/m);
    expect(repaired.code).toBe(1);
  });
});
