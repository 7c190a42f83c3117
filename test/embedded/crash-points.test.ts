// Crashes at the points where a hold could be stranded, on the real embedded process: the process
// kills itself at a test-only fault point (GATEWAY_FAULT_POINTS, docs/testing.md), is started
// again on the same data directory, and every hold must still end, nothing held or charged twice.

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { admin, balance, chat, fundedAccount, hello, image, json, picture } from '../support/api';
import { eventually, passes } from '../support/eventually';
import { ADMIN_TOKEN, ROOT, startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(90_000);

const FUNDS = 100_000_000;
const IMAGE_PRICE = 40_000_000;

describe('crash points on the embedded host', () => {
  const dbs: LocalDb[] = [];
  const gateways: GatewayProcess[] = [];
  afterAll(async () => {
    for (const gateway of gateways) await gateway.kill();
    for (const db of dbs) await db.close();
  });

  function ledgerOf(dataDir: string) {
    const db = openLocalDb(dataDir);
    dbs.push(db);
    return new LmdbLedgerStore(db);
  }

  async function exitOf(gateway: GatewayProcess): Promise<NodeJS.Signals | null> {
    if (gateway.child.exitCode !== null || gateway.child.signalCode !== null) return gateway.child.signalCode;
    return new Promise((resolve) => gateway.child.once('exit', (_code, signal) => resolve(signal)));
  }

  it('when the process dies after an expiry reminder ran but before its turn committed, then after a restart the hold still expires', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-crash-reminder-')), 'data');
    // A hold outlives its call's deadline (GATEWAY_HOLD_TTL_MS ≥ timeout + margin), so an orphan
    // hold is made first: a call is left hanging and its process killed before anything renews it.
    // The orphan is a per-request hold (a lease's expiry is the funds-lease suites' own case).
    const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_TEST_MODE: 'true', GATEWAY_HOLD_TTL_MS: '3000', GATEWAY_PROVIDER_TIMEOUT_MS: '2000', GATEWAY_FUNDS_LEASE: 'off' };
    const first = await startGateway(env);
    gateways.push(first);
    const { accountId, apiKey } = await fundedAccount(first.url, FUNDS);
    const hanging = chat(first.url, apiKey, { ...hello, max_tokens: 16 }, { headers: { 'x-sim-directive': 'hang' } }).catch(() => undefined);
    await passes(async () => expect((await balance(first.url, apiKey)).held).toBeGreaterThan(0), 10_000);
    await first.kill();
    await hanging;

    // The orphan's expiry reminder fires in the next process (at its start: it is due), which dies
    // in that turn, before its commit: spawned bare, since it may die before it answers /healthz.
    const second = spawn(process.execPath, [join(ROOT, 'dist/services/gateway/main.js')], {
      cwd: ROOT,
      env: { ...process.env, ...env, GATEWAY_FAULT_POINTS: 'reminder-before-commit', GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', PORT: String(first.port), HOST: '127.0.0.1' },
      stdio: 'ignore',
    });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => second.once('exit', (_code, s) => resolve(s)));
    expect(signal).toBe('SIGKILL');

    const third = await startGateway(env, first.port);
    gateways.push(third);
    const ledger = ledgerOf(dataDir);
    // The account is not touched: the expiry comes from the reminder alone (credit + release = 2 bills).
    const view = await eventually(() => ledger.account(accountId, 'pool-3'), (v) => v.bills === 2, 20_000);
    expect(view).toMatchObject({ bills: 2, balance: FUNDS });
    expect(await balance(third.url, apiKey)).toMatchObject({ balance: FUNDS, held: 0, available: FUNDS });
    await third.stop();
  });

  it("when the process dies after an image's hold was taken but before its task was committed, then a retry with the same Idempotency-Key completes once, before and after that hold expired", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-crash-image-')), 'data');
    // An image hold lives for the deadline + the hold TTL: 11 s here.
    const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_TEST_MODE: 'true', GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS: '8000', GATEWAY_HOLD_TTL_MS: '3000', GATEWAY_PROVIDER_TIMEOUT_MS: '2000' };
    const armed = { ...env, GATEWAY_FAULT_POINTS: 'image-after-hold' };
    let gateway = await startGateway(armed);
    gateways.push(gateway);
    const { accountId, apiKey } = await fundedAccount(gateway.url, FUNDS);
    const crashWith = async (key: string) => {
      // The connection breaks: the process died while answering.
      expect(await image(gateway.url, apiKey, picture, { key }).then(() => 'answered', () => 'broken')).toBe('broken');
      expect(await exitOf(gateway)).toBe('SIGKILL');
      gateway = await startGateway(env, gateway.port);
      gateways.push(gateway);
    };

    // A retry before the orphan hold expired takes that same hold: nothing is held twice.
    const early = randomUUID();
    await crashWith(early);
    expect(await balance(gateway.url, apiKey)).toMatchObject({ balance: FUNDS, held: IMAGE_PRICE });
    const retried = await image(gateway.url, apiKey, picture, { key: early });
    expect(retried.body).toMatchObject({ status: 'succeeded', charged: IMAGE_PRICE });
    expect(retried.status).toBe(200);
    expect(await balance(gateway.url, apiKey)).toMatchObject({ balance: FUNDS - IMAGE_PRICE, held: 0 });

    // A retry after the orphan hold expired (released, nothing charged) still completes, charged once.
    await gateway.stop();
    gateway = await startGateway(armed, gateway.port);
    gateways.push(gateway);
    const late = randomUUID();
    await crashWith(late);
    await passes(async () => expect(await balance(gateway.url, apiKey)).toMatchObject({ balance: FUNDS - IMAGE_PRICE, held: 0 }), 20_000);
    const afterExpiry = await image(gateway.url, apiKey, picture, { key: late });
    expect(afterExpiry.body).toMatchObject({ status: 'succeeded', charged: IMAGE_PRICE });
    expect(afterExpiry.status).toBe(200);
    expect(await image(gateway.url, apiKey, picture, { key: late })).toMatchObject({ status: 200, body: { taskId: afterExpiry.body.taskId, charged: IMAGE_PRICE } });

    const expected = FUNDS - 2 * IMAGE_PRICE;
    expect(await balance(gateway.url, apiKey)).toMatchObject({ balance: expected, held: 0, available: expected });
    const ledger = ledgerOf(dataDir);
    await passes(async () => expect(await ledger.account(accountId, 'pool-3')).toMatchObject({ balance: expected, usage: 2 }));
    // One charge per image, each under its task (the retry's own hold names the task too).
    const bills = await json(`${gateway.url}/api/distribution/api-credit/bills/page?size=20`, { headers: { authorization: `Bearer ${apiKey}` } });
    const charges = bills.body.items.filter((item: { kind: string }) => item.kind === 'charge');
    expect(charges.map((item: { taskId?: string; amount: number }) => [item.taskId, item.amount]).sort()).toEqual([[retried.body.taskId, IMAGE_PRICE], [afterExpiry.body.taskId, IMAGE_PRICE]].sort());
    await gateway.stop();
  });
  it('when the process dies after an operator credit, debit or order was committed but before its audit entry, then the repeat writes that entry, once', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-crash-audit-')), 'data');
    const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_TEST_MODE: 'true' };
    let gateway = await startGateway(env);
    gateways.push(gateway);
    const { accountId, apiKey } = await fundedAccount(gateway.url, FUNDS);
    const orderKey = randomUUID();
    const actions: Array<[string, string, unknown, Record<string, string>]> = [
      ['account.credit', `/admin/v1/accounts/${accountId}/credits`, { amount: 5_000, reference: 'crash-credit' }, {}],
      ['account.debit', `/admin/v1/accounts/${accountId}/debits`, { amount: 2_000, reference: 'crash-debit', reason: 'correction' }, {}],
      ['order.create', `/admin/v1/accounts/${accountId}/orders`, { amount: 7_000 }, { 'idempotency-key': orderKey }],
    ];
    const send = (path: string, body: unknown, headers: Record<string, string>) => json(`${gateway.url}${path}`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
    });
    for (const [, path, body, headers] of actions) {
      // The change commits, then the process dies before its audit entry: the operator gets no answer.
      await gateway.stop();
      gateway = await startGateway({ ...env, GATEWAY_FAULT_POINTS: 'audit-before-append' }, gateway.port);
      gateways.push(gateway);
      expect(await send(path, body, headers).then(() => 'answered', () => 'broken')).toBe('broken');
      expect(await exitOf(gateway)).toBe('SIGKILL');
      gateway = await startGateway(env, gateway.port);
      gateways.push(gateway);
      // The operator repeats it: applied once, and now in the audit log; a third time adds nothing.
      for (let i = 0; i < 2; i++) expect((await send(path, body, headers)).status).toBeLessThan(300);
    }
    expect(await balance(gateway.url, apiKey)).toMatchObject({ balance: FUNDS + 5_000 - 2_000, held: 0 });
    const audit = await json(`${gateway.url}/admin/v1/audit?accountId=${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const entries = audit.body.items.map((e: { action: string; details: Record<string, unknown> }) => [e.action, e.details.reference ?? e.details.amount]);
    expect(entries).toEqual([['order.create', 7_000], ['account.debit', 'crash-debit'], ['account.credit', 'crash-credit'], ['account.credit', 'initial'], ['api_key.create', undefined], ['account.create', undefined]]);
    // A repeat of an action whose entry was written adds none either (the funded account's first credit).
    expect((await admin(gateway.url, `/admin/v1/accounts/${accountId}/credits`, { amount: FUNDS, reference: 'initial' })).body.applied).toBe(false);
    const again = await json(`${gateway.url}/admin/v1/audit?accountId=${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(again.body.items).toHaveLength(entries.length);
    await gateway.stop();
  });

  it('when the process dies after a key revocation, a suspension or its lifting was committed but before its audit entry, then the repeat writes that entry, once', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-crash-audit-')), 'data');
    const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_TEST_MODE: 'true' };
    let gateway = await startGateway(env);
    gateways.push(gateway);
    const { accountId } = await fundedAccount(gateway.url, FUNDS);
    const operator = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const apiKeyId = (await json(`${gateway.url}/admin/v1/accounts/${accountId}/api-keys`, { headers: operator })).body.items[0].apiKeyId;
    const actions: Array<[string, string]> = [
      ['DELETE', `/admin/v1/api-keys/${apiKeyId}`],
      ['POST', `/admin/v1/accounts/${accountId}/suspend`],
      ['POST', `/admin/v1/accounts/${accountId}/unsuspend`],
    ];
    const send = (method: string, path: string) => json(`${gateway.url}${path}`, { method, headers: { ...operator, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) }, ...(method === 'POST' ? { body: '{}' } : {}) });
    for (const [method, path] of actions) {
      // The change commits, then the process dies before its audit entry: the operator gets no answer.
      await gateway.stop();
      gateway = await startGateway({ ...env, GATEWAY_FAULT_POINTS: 'audit-before-append' }, gateway.port);
      gateways.push(gateway);
      expect(await send(method, path).then(() => 'answered', () => 'broken')).toBe('broken');
      expect(await exitOf(gateway)).toBe('SIGKILL');
      gateway = await startGateway(env, gateway.port);
      gateways.push(gateway);
      // The operator repeats it: it changes nothing more, and is now in the audit log; a third time adds nothing.
      for (let i = 0; i < 2; i++) expect((await send(method, path)).status).toBeLessThan(300);
    }
    const audit = await json(`${gateway.url}/admin/v1/audit?accountId=${accountId}`, { headers: operator });
    expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(['account.unsuspend', 'account.suspend', 'api_key.revoke', 'account.credit', 'api_key.create', 'account.create']);
    const [unsuspended, suspended, revoked] = audit.body.items;
    const key = (await json(`${gateway.url}/admin/v1/accounts/${accountId}/api-keys`, { headers: operator })).body.items[0];
    expect(revoked.details).toEqual({ revokedAt: key.revokedAt });
    expect(suspended.details).toEqual({ suspendedAt: expect.any(String) });
    expect(unsuspended.details).toEqual({ suspendedAt: null });
    // An unsuspension of an account not suspended lifts nothing new and adds no entry; a new suspension is a new entry.
    expect((await send('POST', `/admin/v1/accounts/${accountId}/unsuspend`)).status).toBe(200);
    expect((await send('POST', `/admin/v1/accounts/${accountId}/suspend`)).status).toBe(200);
    const again = await json(`${gateway.url}/admin/v1/audit?accountId=${accountId}`, { headers: operator });
    expect(again.body.items.map((e: { action: string }) => e.action)).toEqual(['account.suspend', 'account.unsuspend', 'account.suspend', 'api_key.revoke', 'account.credit', 'api_key.create', 'account.create']);
    await gateway.stop();
  });
});
