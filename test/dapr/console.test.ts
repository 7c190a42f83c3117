// The console suite against the real Dapr topology: pages and exports served by the ledger app
// over service invocation (exports streamed through both sidecars), the ledger in Redis, filled
// over Redis Streams. Then reconciliation finding a real difference: a bill written into the
// ledger's Redis that no actor ever made.

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { billingEvent } from '../../lib/events';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { CHECKOUT_SECRET } from '../support/orders';
import { consoleSuite } from '../contract/console.suite';
import { fundedAccount, json } from '../support/api';
import { passes } from '../support/eventually';
import { ADMIN_TOKEN, ROOT } from '../support/processes';

jest.setTimeout(180_000);

let topology: RunningTopology;
let ledger: RedisLedgerStore;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-console-'));
  topology = await startTopology({ basePort: 29000, dataDir: join(dir, 'topology'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', GATEWAY_CHECKOUT_SECRET: CHECKOUT_SECRET } });
  ledger = await RedisLedgerStore.connect(topology.redisUrl);
});
afterAll(async () => {
  await ledger?.close();
  await topology?.stop();
});

consoleSuite('Dapr', async () => ({
  url: topology.gatewayUrls[0],
  seed: async (events) => {
    for (let i = 0; i < events.length; i += 500) await Promise.all(events.slice(i, i + 500).map((event) => ledger.append(event)));
  },
  close: async () => {},
}));

describe('reconciliation on the Dapr topology', () => {
  const run = promisify(execFile);
  const reconcileCli = () => run(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'reconcile'], { env: { ...process.env, GATEWAY_URL: topology.gatewayUrls[0], GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN } });

  it('when the ledger holds a bill its actor never made, then the route and the CLI report that account and the CLI exits 1', async () => {
    const tampered = await fundedAccount(topology.gatewayUrls[0], 7000);
    await passes(async () => expect((await reconcileCli()).stdout).toMatch(/ 0 with a difference$/m));
    await ledger.append(billingEvent(`credit:${tampered.accountId}:pool-3:forged`, Date.now(), {
      kind: 'credit', accountId: tampered.accountId, pool: 'pool-3', balanceDelta: 300, amount: 300, reference: 'forged',
    }));
    const answer = await json(`${topology.gatewayUrls[0]}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    // The forged bill is one the actor never emitted: its initial credit is the one bill it counts.
    expect(answer.body.differences).toEqual([{ accountId: tampered.accountId, pool: 'pool-3', ledger: 7300, actor: 7000, ledgerRunningTotal: 7300, bills: { ledger: 2, actor: 1 }, missing: [] }]);
    const failed = await reconcileCli().then(() => undefined, (error: { code: number; stdout: string }) => error);
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toContain(`difference ${tampered.accountId} pool-3: ledger 7300, actor 7000`);
  });
});
