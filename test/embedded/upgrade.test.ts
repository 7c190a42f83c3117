// An in-place upgrade: today's gateway started on a data directory an older build wrote
// (test/fixtures/upgrade-<commit>: accounts, keys, calls, an order, a suspension, a hold and a
// funds lease left open by kill -9). What the older build answered is in its facts.json.

import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { admin, balance, chat, hello, imageTask, json } from '../support/api';
import { writeTestCatalog } from '../support/catalog';
import { eventually } from '../support/eventually';
import { CHECKOUT_SECRET, checkoutCallback } from '../support/orders';
import { ADMIN_TOKEN, ROOT, startGateway, type GatewayProcess } from '../support/processes';
import { startUpstream, type Upstream } from '../support/upstream';

jest.setTimeout(90_000);

const run = promisify(execFile);

function get(base: string, path: string, token: string) {
  return json(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
}

// Each: a data directory an older build wrote, named by its commit.
describe.each(['1231b5e', '784b357'])('a data directory written by an older build (%s), served by this one', (commit) => {
  const fixture = join(ROOT, 'test/fixtures', `upgrade-${commit}`);
  const facts = JSON.parse(readFileSync(join(fixture, 'facts.json'), 'utf8'));
  let upstream: Upstream;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-upgrade-'));
    cpSync(join(fixture, 'store'), join(dir, 'data'), { recursive: true });
    upstream = await startUpstream();
    gateway = await startGateway({
      GATEWAY_DATA_DIR: join(dir, 'data'),
      GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
      GATEWAY_CHECKOUT_SECRET: CHECKOUT_SECRET,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it('then the hold and the funds lease left open end (expired), and balances, bills and usage are what the older build showed', async () => {
    // The image call left running holds its price until its task is resolved or its deadline
    // (24 h after it was reserved) passes; the chat's carved hold ends with its lease's expiry.
    const resolved = (body: any) => body.status === 'unknown' || (body.status === 'unresolved' && Date.parse(body.deadline) > Date.now());
    const task = await eventually(() => imageTask(gateway.url, facts.c.apiKey, facts.c.openImageTaskId, 'hanging-upstream-image'), (t) => resolved(t.body), 30_000);
    expect(task.status).toBe(503);
    expect(resolved(task.body)).toBe(true);
    const imageHeld = task.body.status === 'unresolved' ? facts.c.whileOpen.held : 0;
    const c = await eventually(() => balance(gateway.url, facts.c.apiKey), (b) => b.held === imageHeld && (b.openLeases ?? 0) === 0, 60_000);
    expect(c).toMatchObject({ balance: facts.c.whileOpen.balance, held: imageHeld, available: facts.c.whileOpen.balance - imageHeld, openHolds: imageHeld ? 1 : 0, leased: 0 });
    const a = await eventually(() => balance(gateway.url, facts.a.apiKey), (b) => (b.openLeases ?? 0) === 0, 60_000);
    expect(a).toMatchObject({ balance: facts.a.balance.balance, held: 0, available: facts.a.balance.balance });
    for (const kind of ['bills', 'usage']) {
      const page = await get(gateway.url, `/api/distribution/api-credit/${kind}/page?page=1&size=50`, facts.a.apiKey);
      expect(page.status).toBe(200);
      expect(page.body.items).toEqual(facts.a[kind].items);
      expect(page.body.total ?? page.body.items.length).toBe(facts.a[kind].total ?? facts.a[kind].items.length);
      const exported = await fetch(`${gateway.url}/api/distribution/api-credit/${kind}/export?format=jsonl&from=2020-01-01T00:00:00Z`, { headers: { authorization: `Bearer ${facts.a.apiKey}` } });
      expect(exported.status).toBe(200);
      const rows = (await exported.text()).split('\n').filter(Boolean).map((line) => JSON.parse(line));
      expect(rows.map((row) => row.id).sort()).toEqual(facts.a[kind].items.map((item: { id: string }) => item.id).sort());
    }
  });

  it("then the console's spending chart counts each of the older build's charges once", async () => {
    const exported = await fetch(`${gateway.url}/api/distribution/api-credit/bills/export?format=jsonl&from=2020-01-01T00:00:00Z`, { headers: { authorization: `Bearer ${facts.a.apiKey}` } });
    const charged: Record<string, number> = {};
    const days: string[] = [];
    for (const bill of (await exported.text()).split('\n').filter(Boolean).map((line) => JSON.parse(line))) {
      days.push(bill.occurredAt.slice(0, 10));
      if (bill.kind === 'charge') charged[bill.model] = (charged[bill.model] ?? 0) + bill.amount;
    }
    days.sort();
    // The days the older build charged on, named (the chart's default is the last 30 days, which a
    // fixture leaves behind a month after it was written).
    const spending = await get(gateway.url, `/api/distribution/api-credit/spending?from=${days[0]}&to=${days[days.length - 1]}`, facts.a.apiKey);
    expect(spending.status).toBe(200);
    const charted: Record<string, number> = {};
    for (const item of spending.body.items) charted[item.model] = (charted[item.model] ?? 0) + item.charged;
    expect(charted).toEqual(charged);
  });

  it("then the older build's image task reads as it was", async () => {
    const done = await imageTask(gateway.url, facts.a.apiKey, facts.a.image.body.taskId);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ taskId: facts.a.image.body.taskId, status: 'succeeded', charged: facts.a.image.body.charged });
  });

  it('then keys work or are refused as before: revoked 401, the rotated one until its grace ends, the limited one 402 counting what it spent before', async () => {
    expect((await chat(gateway.url, facts.a.revoked, hello)).status).toBe(401);
    expect((await chat(gateway.url, facts.a.rotated, hello)).status).toBe(Date.now() < Date.parse(facts.a.oldKeyRefusedFrom) ? 200 : 401);
    expect((await chat(gateway.url, facts.a.successor, hello)).status).toBe(200);
    const refused = await chat(gateway.url, facts.a.limited, hello);
    expect(refused.status).toBe(402);
    // What the key spent under the older build still counts: its one charge, nothing held.
    expect(refused.body.error).toMatchObject({ code: 'spend_limit_exceeded', limit: 'spend_total', scope: 'key', spent: facts.a.limitedRefused.body.error.spent, held: 0 });
    const limits = await get(gateway.url, '/api/distribution/api-credit/limits', facts.a.limited);
    expect(limits.body.key).toEqual(facts.a.limitedLimits.key);
  });

  it('then the suspended account stays suspended, and once lifted shows its paid order and balance', async () => {
    expect((await chat(gateway.url, facts.b.apiKey, hello)).status).toBe(403);
    expect((await admin(gateway.url, `/admin/v1/accounts/${facts.b.accountId}/unsuspend`, {})).status).toBe(200);
    expect(await balance(gateway.url, facts.b.apiKey)).toMatchObject({ balance: facts.b.balance.balance });
    const order = await get(gateway.url, `/api/consumer/orders/${facts.b.orderId}`, facts.b.apiKey);
    expect(order.body).toEqual(facts.b.order);
    // The older build kept of a callback event only when it was seen: a delivery of it again is
    // answered as a replay, another payload under its id refused, and neither credits again.
    const again = await checkoutCallback(gateway.url, undefined, { raw: facts.b.callback });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ replayed: true });
    const altered = await checkoutCallback(gateway.url, { ...JSON.parse(facts.b.callback), amount: 1 });
    expect(altered.status).toBe(409);
    expect(altered.body.error.code).toBe('callback_replayed');
    expect(await balance(gateway.url, facts.b.apiKey)).toMatchObject({ balance: facts.b.balance.balance });
  });

  it('then a new chat on an old account is billed once, the audit log reads, and reconciliation finds no difference', async () => {
    const before = await balance(gateway.url, facts.c.apiKey);
    const answer = await chat(gateway.url, facts.c.apiKey, hello);
    expect(answer.status).toBe(200);
    const bills = await eventually(() => get(gateway.url, '/api/distribution/api-credit/bills/page?page=1&size=50', facts.c.apiKey), (r) => r.body.items.length > facts.c.bills.items.length);
    const charge = bills.body.items[0];
    expect(charge).toMatchObject({ kind: 'charge', model: 'sim-chat' });
    expect(await eventually(() => balance(gateway.url, facts.c.apiKey), (b) => b.balance !== before.balance)).toMatchObject({ balance: before.balance - charge.amount });
    const audit = await json(`${gateway.url}/admin/v1/audit?limit=100`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(audit.status).toBe(200);
    expect(audit.body.items.length).toBeGreaterThanOrEqual(facts.audit.items.length);
    const reconciliation = await eventually(() => json(`${gateway.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }), (r) => r.status === 200 && r.body.differences.length === 0);
    expect(reconciliation.body.accounts).toBe(facts.reconciliation.accounts);
    const cli = await run(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'reconcile'], { env: { ...process.env, GATEWAY_URL: gateway.url, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN } });
    expect(cli.stdout).toBeTruthy();
  });

  it('then the console loads', async () => {
    const page = await fetch(`${gateway.url}/console`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script');
  });
});
