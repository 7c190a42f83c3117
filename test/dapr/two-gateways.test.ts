// 1,000 concurrent holds on one account, sent through two gateway instances (each with its own
// sidecar): the FundsHold actor is one per account cluster-wide, so nothing is ever overdrawn.

import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import { DaprActorInvoker } from '../../actors/runtime/dapr-invoker';
import { DaprSidecar } from '../../lib/dapr-http';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { balance, chat, fundedAccount, hello, image, picture } from '../support/api';
import { ADMIN_TOKEN } from '../support/processes';

jest.setTimeout(180_000);

describe('two gateway instances on the Dapr topology', () => {
  let topology: RunningTopology;
  let sidecars: DaprSidecar[];

  beforeAll(async () => {
    topology = await startTopology({ basePort: 25000, gatewayInstances: 2, dataDir: join(mkdtempSync(join(tmpdir(), 'two-gw-')), 'topology'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' } });
    sidecars = [topology.ports['daprd-gateway-http'], topology.ports['daprd-gateway-2-http']].map((port) => new DaprSidecar('127.0.0.1', port));
  });
  afterAll(async () => {
    await Promise.all((sidecars ?? []).map((s) => s.close()));
    await topology?.stop();
  });

  it('when 1,000 holds race on one account through both gateways, then exactly the funded number is held and nothing is overdrawn', async () => {
    const accountId = `acct_${randomUUID().slice(0, 8)}`;
    const clients = sidecars.map((s) => new FundsHoldClient(new DaprActorInvoker(s)).of(accountId));
    await clients[0].credit({ amount: 100 * 7, reference: 'funding' });
    const outcomes = await Promise.allSettled(Array.from({ length: 1000 }, (_, i) =>
      clients[i % 2].reserve({ holdId: randomUUID(), amount: 7, ttlMs: 600_000, requestId: `r${i}`, model: 'sim-chat', profileId: 'p' })));
    const held = outcomes.filter((o) => o.status === 'fulfilled').length;
    expect(held).toBe(100);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'insufficient_funds' });
    for (const client of clients) expect(await client.getBalance()).toMatchObject({ balance: 700, held: 700, available: 0 });
  });

  it('when chats race through both gateways on one account, then balance = credits − Σ charges on either gateway', async () => {
    const [a, b] = topology.gatewayUrls;
    const { apiKey } = await fundedAccount(a, 2_100_000);
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => chat(i % 2 ? b : a, apiKey, { ...hello, max_tokens: 1000 }, { headers: { 'x-sim-directive': 'tokens=1000' } })));
    const ok = responses.filter((r) => r.status === 200);
    expect(ok.length).toBeLessThanOrEqual(5);
    const charged = ok.reduce((sum, r) => sum + Number(r.headers.get('x-payg-charged')), 0);
    expect(await balance(b, apiKey)).toMatchObject({ balance: 2_100_000 - charged, held: 0 });
  });

  it('when one image request with one Idempotency-Key races through both gateways, then all get the same task and the account is charged once', async () => {
    const [a, b] = topology.gatewayUrls;
    const { apiKey } = await fundedAccount(a, 100_000_000);
    const key = randomUUID();
    const headers = { 'x-sim-directive': 'late-artifact=300' };
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => image(i % 2 ? b : a, apiKey, picture, { key, headers })));
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(responses.map((r) => r.body.taskId)).size).toBe(1);
    expect(new Set(responses.map((r) => r.body.data[0].b64_json)).size).toBe(1);
    expect(await balance(b, apiKey)).toMatchObject({ balance: 100_000_000 - 40_000_000, held: 0 });
  });
});
