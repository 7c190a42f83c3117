// Issue 13, defect 8: a reconciliation difference names the events the ledger lacks, and an
// operator command repairs it from the actors' records. The ledger app is killed while two
// accounts are credited (one has no ledger row at all: it was only registered at creation), and
// daprd gives the deliveries up; the actors' confirmation rounds are pushed out of the test's
// reach (test mode), so the events stay missing until the operator repairs them.

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { admin, fundedAccount, json } from '../support/api';
import { passes } from '../support/eventually';
import { ADMIN_TOKEN, ROOT } from '../support/processes';

jest.setTimeout(300_000);

/** Past daprd's delivery retries (dapr/resiliency.yaml `deliver`: 3 × 1 s), with room. */
const GIVE_UP_MS = 8_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const run = promisify(execFile);

describe('reconciliation names and repairs missing events (Dapr)', () => {
  let topology: RunningTopology;
  let url: string;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-reconcile-repair-'));
    topology = await startTopology({
      basePort: 15700,
      dataDir: join(dir, 'topology'),
      env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', GATEWAY_TEST_MODE: 'true', GATEWAY_OUTBOX_CONFIRM_MS: '600000' },
    });
    url = topology.gatewayUrls[0];
  });

  afterAll(async () => {
    await topology?.stop();
  });

  const cli = (...args: string[]) =>
    run(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'reconcile', ...args], { env: { ...process.env, GATEWAY_URL: url, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN } })
      .then(({ stdout }) => ({ code: 0, stdout }), (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }));
  const reconciliation = () => json(`${url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  it('when credits made while the ledger was down never reach it, then the difference names them, an account with no ledger row included, and --repair makes reconciliation clean', async () => {
    const payer = await fundedAccount(url, 50_000);
    const late = await fundedAccount(url, 0);
    await passes(async () => expect((await reconciliation()).body.differences).toEqual([]), 60_000);

    await topology.kill('ledger');
    expect((await admin(url, `/admin/v1/accounts/${payer.accountId}/credits`, { amount: 5_000, reference: 'held-back' })).status).toBe(200);
    expect((await admin(url, `/admin/v1/accounts/${late.accountId}/credits`, { amount: 7_000, reference: 'held-back' })).status).toBe(200);
    await sleep(GIVE_UP_MS);
    await topology.restart('ledger');

    const payerCredit = `credit:${payer.accountId}:pool-3:held-back`;
    const lateCredit = `credit:${late.accountId}:pool-3:held-back`;
    const answer = await passes(async () => {
      const now = await reconciliation();
      expect(now.status).toBe(200);
      return now;
    }, 30_000);
    const missing = (id: string, amount: number) => ({ id, topic: 'billing', type: 'billing.credit', occurredAt: expect.any(String), balanceDelta: amount, amount });
    expect(answer.body.differences).toEqual([
      { accountId: payer.accountId, pool: 'pool-3', ledger: 50_000, actor: 55_000, ledgerRunningTotal: 50_000, bills: { ledger: 1, actor: 2 }, missing: [missing(payerCredit, 5_000)] },
      { accountId: late.accountId, pool: 'pool-3', ledger: 0, actor: 7_000, ledgerRunningTotal: 0, bills: { ledger: 0, actor: 1 }, missing: [missing(lateCredit, 7_000)] },
    ].sort((a, b) => a.accountId.localeCompare(b.accountId)));

    const reported = await cli();
    expect(reported.code).toBe(1);
    expect(reported.stdout).toContain(`  missing ${payerCredit} (billing.credit, balance +5000)`);
    expect(reported.stdout).toContain(`  missing ${lateCredit} (billing.credit, balance +7000)`);

    const repaired = await cli('--repair');
    expect(repaired.stdout).toContain(`delivered ${payerCredit}`);
    expect(repaired.stdout).toContain(`delivered ${lateCredit}`);
    expect(repaired.stdout).toMatch(/ 0 with a difference$/m);
    expect(repaired.code).toBe(0);

    const after = await reconciliation();
    expect(after.body.differences).toEqual([]);
    const bills = await json(`${url}/api/distribution/api-credit/bills/page?size=100`, { headers: { authorization: `Bearer ${late.apiKey}` } });
    expect(bills.body.items.map((b: { id: string; amount: number }) => [b.id, b.amount])).toEqual([[lateCredit, 7_000]]);
  });
});
