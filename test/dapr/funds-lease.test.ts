// Funds leases on the Dapr topology with two gateway instances (GATEWAY_FUNDS_LEASE=on, the Dapr
// default): each gateway carves its calls' holds from a lease on the account's FundsHold actor and
// settles them in batches. The money guarantees hold: a stream is charged as before, 1,000
// concurrent chats on one account through both gateways never overdraw and spend exactly
// admitted × cost, and kill -9 of a gateway holding a lease loses no customer money: its lease
// expires, charging what its streams delivered and returning the rest; reconciliation is clean.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { balance, chat, fundedAccount, hello, json } from '../support/api';
import { eventually, passes } from '../support/eventually';
import { ADMIN_TOKEN } from '../support/processes';
import { startClientStream } from '../support/streams';

jest.setTimeout(600_000);

interface LeaseView {
  balance: number;
  held: number;
  available: number;
  leased: number;
  openLeases: number;
}

const view = (url: string, apiKey: string) => balance(url, apiKey) as Promise<LeaseView>;
const quiet = (b: LeaseView) => b.held === 0 && b.leased === 0 && b.openLeases === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('funds leases on the Dapr topology (two gateways)', () => {
  let topology: RunningTopology;

  beforeAll(async () => {
    topology = await startTopology({
      basePort: 16700,
      gatewayInstances: 2,
      dataDir: join(mkdtempSync(join(tmpdir(), 'gw-dapr-lease-')), 'topology'),
      env: {
        GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
        GATEWAY_LOG_LEVEL: 'warn',
        GATEWAY_FUNDS_LEASE: 'on',
        GATEWAY_FUNDS_LEASE_IDLE_MS: '2000',
        // A lease lives 6 s without news (test mode allows TTL ≥ provider timeout + 1 s).
        GATEWAY_TEST_MODE: 'true',
        GATEWAY_PROVIDER_TIMEOUT_MS: '5000',
        GATEWAY_HOLD_TTL_MS: '6000',
        GATEWAY_HOLD_PROGRESS_TOKENS: '16',
        GATEWAY_HOLD_PROGRESS_MS: '300',
      },
    });
  });
  afterAll(async () => {
    await topology?.stop();
  });

  const reconciledClean = (accountId: string) => passes(async () => {
    const answer = await json(`${topology.gatewayUrls[0]}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(answer.status).toBe(200);
    expect(answer.body.differences.filter((d: { accountId: string }) => d.accountId === accountId)).toEqual([]);
  }, 60_000);

  it('when a stream completes through a leased gateway, then it is charged its usage exactly, with one charge row, and the lease is returned when idle', async () => {
    const url = topology.gatewayUrls[0];
    const funds = 100_000_000;
    const { accountId, apiKey } = await fundedAccount(url, funds);
    const stream = startClientStream(url, apiKey, 'tokens=50;stream-delay=5', 60);
    await stream.ended;
    expect(stream.done()).toBe(true);
    const usage = stream.usage()!;
    expect(usage.completion_tokens).toBe(50);
    const charge = usage.prompt_tokens * 100 + usage.completion_tokens * 400;
    // The charge is durable before [DONE]; the hold came from a lease (leased, not held).
    const during = await view(url, apiKey);
    expect(during).toMatchObject({ balance: funds - charge, held: 0, openLeases: 1 });
    expect(during.leased).toBeGreaterThan(0);
    const bills = await passes(async () => {
      const page = await json(`${url}/api/distribution/api-credit/bills/page?size=20`, { headers: { authorization: `Bearer ${apiKey}` } });
      const charges = page.body.items.filter((item: { kind: string }) => item.kind === 'charge');
      expect(charges).toHaveLength(1);
      return charges;
    });
    expect(bills[0]).toMatchObject({ amount: charge, balanceDelta: -charge });
    expect(await eventually(() => view(url, apiKey), quiet, 30_000)).toMatchObject({ balance: funds - charge, held: 0, leased: 0, available: funds - charge });
    await reconciledClean(accountId);
  });

  it('when 1,000 chats race on one account through both gateways, then nothing is overdrawn and spent = admitted × cost exactly', async () => {
    const [a, b] = topology.gatewayUrls;
    // About 220 estimates' worth (each chat holds ≈ 10,000): only part is admitted.
    const funds = 2_300_000;
    const { accountId, apiKey } = await fundedAccount(a, funds);
    const responses = await Promise.all(Array.from({ length: 1000 }, (_, i) =>
      chat(i % 2 ? b : a, apiKey, { ...hello, max_tokens: 10 }, { headers: { 'x-sim-directive': 'tokens=10' } })));
    const admitted = responses.filter((r) => r.status === 200);
    for (const r of responses) if (r.status !== 200) expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 402, code: 'insufficient_funds' });
    expect(admitted.length).toBeGreaterThan(100);
    expect(admitted.length).toBeLessThan(1000);
    // A settle that took longer than the answer's wait (5 s) answers without x-payg-charged and lands after.
    const charges = new Set(admitted.flatMap((r) => (r.headers.has('x-payg-charged') ? [Number(r.headers.get('x-payg-charged'))] : [])));
    expect(charges.size).toBe(1);
    const cost = [...charges][0];
    expect(cost).toBeGreaterThan(0);
    const after = await eventually(() => view(b, apiKey), quiet, 60_000);
    expect(after).toMatchObject({ balance: funds - admitted.length * cost, held: 0, leased: 0, available: funds - admitted.length * cost });
    expect(after.balance).toBeGreaterThanOrEqual(0);
    await reconciledClean(accountId);
  });

  it('when a gateway holding a lease is killed with streams in flight, then its lease expires: what its streams delivered is charged, the rest is available again', async () => {
    const [survivor, doomed] = topology.gatewayUrls;
    const funds = 100_000_000;
    const accounts = await Promise.all([0, 1, 2].map(() => fundedAccount(doomed, funds)));
    const streams = accounts.map(({ apiKey }) => startClientStream(doomed, apiKey, 'tokens=200;stream-delay=20', 200));
    await eventually(async () => streams.every((s) => s.received() >= 40), Boolean, 30_000);
    // Each account's calls are carved from the doomed gateway's lease.
    for (const { apiKey } of accounts) expect(await view(survivor, apiKey)).toMatchObject({ held: 0, openLeases: 1 });
    await sleep(400);
    await topology.kill('gateway-2', 'SIGKILL');
    await Promise.all(streams.map((s) => s.ended));
    for (const [i, { accountId, apiKey }] of accounts.entries()) {
      const stream = streams[i];
      expect(stream.done()).toBe(false);
      const after = await eventually(() => view(survivor, apiKey), quiet, 60_000);
      expect(after).toMatchObject({ held: 0, leased: 0, openLeases: 0 });
      expect(after.available).toBe(after.balance);
      const charged = funds - after.balance;
      // Charged for what was delivered up to the last progress record: something, never more than
      // the client received (its output at 400 per token, the input at most its body's bytes × 100).
      expect(charged).toBeGreaterThan(0);
      expect(charged).toBeLessThanOrEqual(stream.received() * 400 + 200 * 100);
      expect(charged).toBeGreaterThanOrEqual(Math.max(0, stream.received() - 60) * 400);
      await reconciledClean(accountId);
    }
    // The survivor serves the same accounts at once.
    const next = await chat(survivor, accounts[0].apiKey, { ...hello, max_tokens: 10 }, { headers: { 'x-sim-directive': 'tokens=10' } });
    expect(next.status).toBe(200);
  });
});
