// Issue 13, defect 8: money events are never lost while the ledger app is down. The ledger app is
// killed (SIGKILL, its sidecar stays up) for about ten seconds while chats are charged and
// accounts credited; once it is back, every charge and credit reaches the ledger without an
// operator, and reconciliation, which covers every account the gateway created (one of them has
// no ledger row before the outage), is clean.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { admin, chat, fundedAccount, hello, json } from '../support/api';
import { passes } from '../support/eventually';
import { ADMIN_TOKEN } from '../support/processes';

jest.setTimeout(300_000);

const OUTAGE_MS = 10_000;
const CHATS = 5;
/** Once the ledger is back, everything must be there within this (its outbox confirms in seconds). */
const CATCH_UP_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Bill {
  id: string;
  kind: string;
  amount: number;
}

describe('ledger outage (Dapr)', () => {
  let topology: RunningTopology;
  let url: string;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-ledger-outage-'));
    topology = await startTopology({ basePort: 15600, dataDir: join(dir, 'topology'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' } });
    url = topology.gatewayUrls[0];
  });

  afterAll(async () => {
    await topology?.stop();
  });

  const bills = async (apiKey: string, pool = 'api-credit'): Promise<Bill[]> => {
    const page = await json(`${url}/api/distribution/${pool}/bills/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(page.status).toBe(200);
    return page.body.items as Bill[];
  };
  const reconciliation = () => json(`${url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  it('when the ledger app is killed while chats are charged and accounts credited, then once it is back every event reaches the ledger and reconciliation is clean with no repair', async () => {
    const payer = await fundedAccount(url, 10_000_000);
    // An account with no money and so no ledger row yet: credited only during the outage.
    const late = await fundedAccount(url, 0);
    await passes(async () => expect((await bills(payer.apiKey)).map((b) => b.kind)).toEqual(['credit']));

    await topology.kill('ledger');
    const outageEnds = Date.now() + OUTAGE_MS;
    const charged: number[] = [];
    for (let i = 0; i < CHATS; i++) {
      const answer = await chat(url, payer.apiKey, { ...hello, max_tokens: 5 });
      expect(answer.status).toBe(200);
      charged.push(Number(answer.headers.get('x-payg-charged')));
    }
    expect((await admin(url, `/admin/v1/accounts/${payer.accountId}/credits`, { amount: 5_000, reference: 'during-outage' })).status).toBe(200);
    expect((await admin(url, `/admin/v1/accounts/${late.accountId}/credits`, { amount: 7_000, reference: 'during-outage' })).status).toBe(200);
    await sleep(Math.max(0, outageEnds - Date.now()));
    await topology.restart('ledger');

    const payerBills = await passes(async () => {
      const now = await bills(payer.apiKey);
      expect(now.filter((b) => b.kind === 'charge')).toHaveLength(CHATS);
      expect(now.filter((b) => b.kind === 'credit')).toHaveLength(2);
      return now;
    }, CATCH_UP_MS);
    expect(payerBills.filter((b) => b.kind === 'charge').map((b) => b.amount).sort()).toEqual([...charged].sort());
    await passes(async () => expect((await bills(late.apiKey)).map((b) => [b.kind, b.amount])).toEqual([['credit', 7_000]]), CATCH_UP_MS);

    const answer = await passes(async () => {
      const now = await reconciliation();
      expect(now.status).toBe(200);
      expect(now.body.differences).toEqual([]);
      return now;
    }, CATCH_UP_MS);
    // Both accounts (and both pools of each) are covered, the one with no row before the outage too.
    expect(answer.body.accounts).toBeGreaterThanOrEqual(4);
  });
});
