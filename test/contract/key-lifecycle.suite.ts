// End-to-end suite of the operator's key and account lifecycle over HTTP, against one or two
// gateway instances (the Dapr topology runs two, each with its own sidecar and key cache): keys
// listed without their secret, revoked and refused by every instance within one second, rotated
// with a grace, expiring; accounts listed, suspended and lifted, debited exactly once; every
// action in the audit log, which holds no secret.

import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { admin, balance, chat, fundedAccount, hello, image, imageTask, json, picture } from '../support/api';
import { ADMIN_TOKEN } from '../support/processes';
import { itConformsToOpenApi, recordAnswers } from '../support/openapi-conformance';
import { follow, newSession, runEnded, startRun } from '../support/sessions';

export interface KeyLifecycleDeploymentUnderTest {
  /** Every gateway instance (the same one twice where only one runs). */
  urls: [string, string];
  close(): Promise<void>;
}

/** The bound every instance keeps: a revoked key is refused within it (GATEWAY_API_KEY_CACHE_MS ≤ 1 s). */
const CACHE_BOUND_MS = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function keyLifecycleSuite(hostName: string, start: () => Promise<KeyLifecycleDeploymentUnderTest>): void {
  describe(`API key and account lifecycle on the ${hostName} host`, () => {
    let d: KeyLifecycleDeploymentUnderTest;
    const openApi = recordAnswers(() => d?.urls[0]);
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    const operator = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const get = (path: string, base = d.urls[0]) => json(`${base}${path}`, { headers: operator });
    const del = (path: string, base = d.urls[0]) => json(`${base}${path}`, { method: 'DELETE', headers: operator });
    const post = (path: string, body: unknown, base = d.urls[0]) => admin(base, path, body);
    const works = async (apiKey: string) => Promise.all(d.urls.map(async (url) => (await chat(url, apiKey, hello)).status));
    const keyOf = async (accountId: string, apiKeyId: string) => (await get(`/admin/v1/accounts/${accountId}/api-keys`)).body.items.find((k: { apiKeyId: string }) => k.apiKeyId === apiKeyId);

    it('when a key is made with a name and an expiry, then it is listed with its prefix, scopes and dates, and never with the key itself', async () => {
      const { accountId } = await fundedAccount(d.urls[0], 1_000_000_000);
      const expiresAt = new Date(Date.now() + 3600_000).toISOString();
      const made = await post(`/admin/v1/accounts/${accountId}/api-keys`, { name: 'ci deploy', scopes: ['compat'], expiresAt });
      expect(made.status).toBe(201);
      expect(made.body).toMatchObject({ accountId, name: 'ci deploy', scopes: ['compat'], expiresAt, prefix: made.body.apiKey.slice(0, 12) });
      expect(await works(made.body.apiKey)).toEqual([200, 200]);
      const list = await get(`/admin/v1/accounts/${accountId}/api-keys`);
      expect(list.status).toBe(200);
      expect(list.body.items[0]).toMatchObject({ apiKeyId: made.body.apiKeyId, name: 'ci deploy', scopes: ['compat'], state: 'expiring', expiresAt, revokedAt: null, prefix: made.body.prefix });
      expect(list.body.items[0].lastUsedAt).not.toBeNull();
      expect(JSON.stringify(list.body)).not.toContain(made.body.apiKey);
      expect(list.body.items).toHaveLength(2);
    });

    it('when a key is revoked through one instance, then every instance refuses it within one second, and a repeat answers the same', async () => {
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 1_000_000_000);
      const apiKeyId = (await get(`/admin/v1/accounts/${accountId}/api-keys`)).body.items[0].apiKeyId;
      // Both instances hold the key in their caches.
      expect(await works(apiKey)).toEqual([200, 200]);
      const revoked = await del(`/admin/v1/api-keys/${apiKeyId}`, d.urls[1]);
      expect(revoked.status).toBe(204);
      const answeredAt = Date.now();
      await sleep(CACHE_BOUND_MS + 50 - (Date.now() - answeredAt));
      for (const url of d.urls) {
        const refused = await chat(url, apiKey, hello);
        expect([refused.status, refused.body.error?.code, refused.body.error?.message]).toEqual([401, 'unauthorized', 'this API key has been revoked']);
      }
      expect(await keyOf(accountId, apiKeyId)).toMatchObject({ state: 'revoked', revokedAt: expect.any(String) });
      expect((await del(`/admin/v1/api-keys/${apiKeyId}`)).status).toBe(204);
      expect(await del('/admin/v1/api-keys/key_nosuchkey')).toMatchObject({ status: 404, body: { error: { code: 'api_key_not_found' } } });
    });

    it('when a key is revoked, its account suspended or its limits changed while a call\'s body is still on the way, then the call is answered as a new one would be: refused, nothing held or charged', async () => {
      /** A chat whose headers are sent now and whose body is finished only once `meanwhile` has run and the cache bound has passed. */
      const slowChat = async (base: string, apiKey: string, meanwhile: () => Promise<void>) => {
        const body = JSON.stringify({ ...hello, max_tokens: 16 });
        const { hostname, port } = new URL(base);
        const sent = httpRequest({ hostname, port, method: 'POST', path: '/api/open/v1/models/sim-chat/chat', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
        const answered = new Promise<{ status: number; body: any }>((resolve, reject) => {
          sent.once('error', reject);
          sent.once('response', (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.once('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          });
        });
        sent.write(body.slice(0, 10));
        await sleep(200);
        await meanwhile();
        await sleep(CACHE_BOUND_MS + 200);
        sent.end(body.slice(10));
        return answered;
      };
      const untouched = async (apiKey: string) => expect(await balance(d.urls[0], apiKey)).toMatchObject({ balance: 1_000_000_000, held: 0 });

      const revokedKey = await fundedAccount(d.urls[0], 1_000_000_000);
      const apiKeyId = (await get(`/admin/v1/accounts/${revokedKey.accountId}/api-keys`)).body.items[0].apiKeyId;
      // A second key of the account reads the balance once the first is refused.
      const reader = (await post(`/admin/v1/accounts/${revokedKey.accountId}/api-keys`, {})).body.apiKey as string;
      const revoked = await slowChat(d.urls[1], revokedKey.apiKey, async () => expect((await del(`/admin/v1/api-keys/${apiKeyId}`)).status).toBe(204));
      expect([revoked.status, revoked.body.error?.code, revoked.body.error?.message]).toEqual([401, 'unauthorized', 'this API key has been revoked']);
      await untouched(reader);

      const suspendedKey = await fundedAccount(d.urls[0], 1_000_000_000);
      const suspended = await slowChat(d.urls[1], suspendedKey.apiKey, async () => expect((await post(`/admin/v1/accounts/${suspendedKey.accountId}/suspend`, {})).status).toBe(200));
      expect([suspended.status, suspended.body.error?.code]).toEqual([403, 'account_suspended']);
      expect((await post(`/admin/v1/accounts/${suspendedKey.accountId}/unsuspend`, {})).status).toBe(200);
      await sleep(CACHE_BOUND_MS + 50);
      await untouched(suspendedKey.apiKey);

      const limitedKey = await fundedAccount(d.urls[0], 1_000_000_000);
      const limited = await slowChat(d.urls[1], limitedKey.apiKey, async () => {
        const set = await json(`${d.urls[0]}/admin/v1/accounts/${limitedKey.accountId}`, { method: 'PATCH', headers: { ...operator, 'content-type': 'application/json' }, body: JSON.stringify({ limits: { spend_total: 1 } }) });
        expect(set.status).toBe(200);
      });
      expect([limited.status, limited.body.error?.code, limited.body.error?.param]).toEqual([402, 'spend_limit_exceeded', 'spend_total']);
      await untouched(limitedKey.apiKey);
    });

    it('when a revocation is sent a body, then it is refused naming the field, and the key still works, unrevoked and unlogged', async () => {
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 1_000_000_000);
      const apiKeyId = (await get(`/admin/v1/accounts/${accountId}/api-keys`)).body.items[0].apiKeyId;
      const auditBefore = (await get(`/admin/v1/audit?accountId=${accountId}&limit=1`)).body.items[0].id;
      const revoke = (body: string) => json(`${d.urls[0]}/admin/v1/api-keys/${apiKeyId}`, { method: 'DELETE', headers: { ...operator, 'content-type': 'application/json' }, body });
      const refused = await revoke(JSON.stringify({ graceSeconds: 3600 }));
      expect([refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([400, 'invalid_request', 'graceSeconds']);
      expect(await keyOf(accountId, apiKeyId)).toMatchObject({ state: 'active', revokedAt: null });
      await sleep(CACHE_BOUND_MS + 50);
      expect(await works(apiKey)).toEqual([200, 200]);
      expect((await get(`/admin/v1/audit?accountId=${accountId}&limit=1`)).body.items[0].id).toBe(auditBefore);
      // An empty object is no field: the revocation goes through.
      expect((await revoke('{}')).status).toBe(204);
    });

    it('when a key is revoked while it follows a session, then its event stream ends within a second and a quarter, and it sees no later run', async () => {
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 1_000_000_000);
      const apiKeyId = (await get(`/admin/v1/accounts/${accountId}/api-keys`)).body.items[0].apiKeyId;
      const other = (await post(`/admin/v1/accounts/${accountId}/api-keys`, { name: 'the other key' })).body.apiKey;
      const sessionId = await newSession(d.urls[0], apiKey);
      const first = await startRun(d.urls[0], apiKey, sessionId, { model: 'sim-chat', ...hello, max_tokens: 16 });
      expect(first.status).toBe(202);
      // The stream is open, and has read the first run, when the key is revoked.
      const following = follow(d.urls[0], apiKey, sessionId, { timeoutMs: 15_000 });
      const watched = follow(d.urls[0], other, sessionId, { until: runEnded(first.body.run_id), timeoutMs: 15_000 });
      expect((await watched).ended).toBe('until');
      await sleep(300);
      expect((await del(`/admin/v1/api-keys/${apiKeyId}`, d.urls[1])).status).toBe(204);
      const revokedAt = Date.now();
      const followed = await following;
      // Ended by the server (not by the test's time-out), within the key lookup's bound plus one re-check.
      expect(followed.ended).toBe('closed');
      expect(Date.now() - revokedAt).toBeLessThan(CACHE_BOUND_MS + 250 + 500);
      // The other key's run after it: the revoked key's stream is gone, and a reconnect is refused.
      const second = await startRun(d.urls[0], other, sessionId, { model: 'sim-chat', ...hello, max_tokens: 16 });
      expect(second.status).toBe(202);
      expect(followed.events.some((e) => e.data.run_id === second.body.run_id)).toBe(false);
      expect(followed.events.some((e) => e.data.run_id === first.body.run_id)).toBe(true);
      const again = await follow(d.urls[0], apiKey, sessionId, { timeoutMs: 5_000 });
      expect([again.status, again.body?.error?.code]).toEqual([401, 'unauthorized']);
      await follow(d.urls[0], other, sessionId, { until: runEnded(second.body.run_id), timeoutMs: 15_000 });
    });

    it('when an account is suspended while its key follows a session, then the event stream ends', async () => {
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 1_000_000_000);
      const sessionId = await newSession(d.urls[0], apiKey);
      const following = follow(d.urls[0], apiKey, sessionId, { timeoutMs: 15_000 });
      await sleep(300);
      expect((await post(`/admin/v1/accounts/${accountId}/suspend`, {})).status).toBeLessThan(300);
      const suspendedAt = Date.now();
      const followed = await following;
      expect(followed.ended).toBe('closed');
      expect(Date.now() - suspendedAt).toBeLessThan(CACHE_BOUND_MS + 250 + 500);
      expect((await post(`/admin/v1/accounts/${accountId}/unsuspend`, {})).status).toBeLessThan(300);
    });

    it('when a key is rotated with a grace, then the new key works at once with the same scopes, and the old one until the grace ends', async () => {
      const { accountId } = await fundedAccount(d.urls[0], 1_000_000_000);
      const old = await post(`/admin/v1/accounts/${accountId}/api-keys`, { name: 'svc', scopes: ['media'] });
      const rotated = await post(`/admin/v1/api-keys/${old.body.apiKeyId}/rotate`, { graceSeconds: 2 });
      expect(rotated.status).toBe(201);
      expect(rotated.body).toMatchObject({ accountId, name: 'svc', scopes: ['media'], replaces: old.body.apiKeyId });
      const refusedFrom = Date.parse(rotated.body.oldKeyRefusedFrom);
      expect(refusedFrom).toBeGreaterThan(Date.now());
      expect(await works(rotated.body.apiKey)).toEqual([200, 200]);
      expect(await works(old.body.apiKey)).toEqual([200, 200]);
      expect(await keyOf(accountId, old.body.apiKeyId)).toMatchObject({ state: 'expiring', rotatedTo: rotated.body.apiKeyId });
      expect(await keyOf(accountId, rotated.body.apiKeyId)).toMatchObject({ state: 'active', rotatedFrom: old.body.apiKeyId });
      await sleep(refusedFrom - Date.now() + 100);
      expect(await works(old.body.apiKey)).toEqual([401, 401]);
      expect(await works(rotated.body.apiKey)).toEqual([200, 200]);
      const again = await post(`/admin/v1/api-keys/${old.body.apiKeyId}/rotate`, {});
      expect([again.status, again.body.error?.code]).toEqual([409, 'api_key_inactive']);
      // A key that expires before the grace would end stops working at its expiry, and the answer says so.
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const expiring = await post(`/admin/v1/accounts/${accountId}/api-keys`, { expiresAt });
      const early = await post(`/admin/v1/api-keys/${expiring.body.apiKeyId}/rotate`, { graceSeconds: 7200 });
      expect([early.status, early.body.expiresAt, early.body.oldKeyRefusedFrom]).toEqual([201, expiresAt, expiresAt]);
    });

    it('when a revoked or expired key is given limits, then it is refused 409 api_key_inactive and nothing changes; a key in its rotation grace takes them', async () => {
      const { accountId } = await fundedAccount(d.urls[0], 1_000_000_000);
      const patch = (apiKeyId: string, limits: unknown) => json(`${d.urls[0]}/admin/v1/api-keys/${apiKeyId}`, { method: 'PATCH', headers: { ...operator, 'content-type': 'application/json' }, body: JSON.stringify({ limits }) });
      const revoked = await post(`/admin/v1/accounts/${accountId}/api-keys`, { name: 'gone' });
      expect((await patch(revoked.body.apiKeyId, { spend_total: 1_000 })).status).toBe(200);
      expect((await del(`/admin/v1/api-keys/${revoked.body.apiKeyId}`)).status).toBe(204);
      const expiring = await post(`/admin/v1/accounts/${accountId}/api-keys`, { expiresAt: new Date(Date.now() + 1200).toISOString() });
      const rotating = await post(`/admin/v1/accounts/${accountId}/api-keys`, {});
      expect((await post(`/admin/v1/api-keys/${rotating.body.apiKeyId}/rotate`, { graceSeconds: 60 })).status).toBe(201);
      const inGrace = await patch(rotating.body.apiKeyId, { requests_per_minute: 30 });
      expect([inGrace.status, inGrace.body.state, inGrace.body.limits]).toEqual([200, 'expiring', { requests_per_minute: 30 }]);
      await sleep(1300);
      const auditBefore = (await get(`/admin/v1/audit?accountId=${accountId}&limit=1`)).body.items[0].id;
      for (const [apiKeyId, state] of [[revoked.body.apiKeyId, 'revoked'], [expiring.body.apiKeyId, 'expired']]) {
        const refused = await patch(apiKeyId, { requests_per_minute: 5, spend_total: null });
        expect([refused.status, refused.body.error?.code, refused.headers.get('x-should-retry')]).toEqual([409, 'api_key_inactive', 'false']);
        expect(refused.body.error?.message).toContain(state);
      }
      expect(await keyOf(accountId, revoked.body.apiKeyId)).toMatchObject({ state: 'revoked', limits: { spend_total: 1_000 } });
      expect(await keyOf(accountId, expiring.body.apiKeyId)).toMatchObject({ state: 'expired', limits: {} });
      expect((await get(`/admin/v1/audit?accountId=${accountId}&limit=1`)).body.items[0].id).toBe(auditBefore);
    });

    it('when a key expires, then it is refused like a revoked one; an expiry in the past is refused and makes no key', async () => {
      const { accountId } = await fundedAccount(d.urls[0], 1_000_000_000);
      const soon = await post(`/admin/v1/accounts/${accountId}/api-keys`, { expiresAt: new Date(Date.now() + 1500).toISOString() });
      expect(await works(soon.body.apiKey)).toEqual([200, 200]);
      await sleep(1600);
      const refused = await chat(d.urls[1], soon.body.apiKey, hello);
      expect([refused.status, refused.body.error?.message]).toEqual([401, 'this API key has expired']);
      expect(await keyOf(accountId, soon.body.apiKeyId)).toMatchObject({ state: 'expired' });
      const past = await post(`/admin/v1/accounts/${accountId}/api-keys`, { expiresAt: new Date(Date.now() - 1000).toISOString() });
      expect([past.status, past.body.error?.param]).toEqual([400, 'expiresAt']);
      expect((await get(`/admin/v1/accounts/${accountId}/api-keys`)).body.items).toHaveLength(2);
    });

    it('when an account is suspended, then its calls are refused 403 on every instance while a call already running ends and is charged, and lifting it lets calls through again', async () => {
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 1_000_000_000);
      expect(await works(apiKey)).toEqual([200, 200]);
      const running = chat(d.urls[1], apiKey, { ...hello, stream: true }, { headers: { 'x-sim-directive': 'tokens=8;stream-delay=150' } });
      await sleep(200);
      const suspended = await post(`/admin/v1/accounts/${accountId}/suspend`, {});
      expect(suspended).toMatchObject({ status: 200, body: { accountId, suspendedAt: expect.any(String) } });
      await sleep(CACHE_BOUND_MS + 50);
      for (const url of d.urls) {
        const refused = await chat(url, apiKey, hello);
        expect([refused.status, refused.body.error?.code]).toEqual([403, 'account_suspended']);
      }
      const stream = await running;
      expect(stream.status).toBe(200);
      expect(String(stream.body)).toContain('[DONE]');
      const detail = await get(`/admin/v1/accounts/${accountId}`);
      expect(detail.body).toMatchObject({ accountId, suspendedAt: expect.any(String), keys: [expect.objectContaining({ state: 'active' })] });
      expect(detail.body.pools.find((p: { pool: string }) => p.pool === 'pool-3')).toMatchObject({ held: 0 });
      expect((await post(`/admin/v1/accounts/${accountId}/unsuspend`, {})).body).toMatchObject({ suspendedAt: null });
      await sleep(CACHE_BOUND_MS + 50);
      expect(await works(apiKey)).toEqual([200, 200]);
    });

    it('when an account is suspended, then every listing of its keys says a working key is refused for it, keeps each key\'s own state, and says so no more once it is lifted', async () => {
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 1_000_000_000);
      const [working] = (await get(`/admin/v1/accounts/${accountId}/api-keys`)).body.items.map((k: { apiKeyId: string }) => k.apiKeyId);
      const expiring = (await post(`/admin/v1/accounts/${accountId}/api-keys`, { expiresAt: new Date(Date.now() + 3600_000).toISOString() })).body.apiKeyId;
      const revoked = (await post(`/admin/v1/accounts/${accountId}/api-keys`, {})).body.apiKeyId;
      expect((await del(`/admin/v1/api-keys/${revoked}`)).status).toBe(204);
      const states = (items: { apiKeyId: string; state: string; effectiveState: string }[]) => Object.fromEntries(items.map((k) => [k.apiKeyId, [k.state, k.effectiveState]]));
      const before = await get(`/admin/v1/accounts/${accountId}/api-keys`);
      expect(before.body.accountSuspendedAt).toBeNull();
      expect(states(before.body.items)).toEqual({ [working]: ['active', 'active'], [expiring]: ['expiring', 'expiring'], [revoked]: ['revoked', 'revoked'] });

      const suspended = await post(`/admin/v1/accounts/${accountId}/suspend`, {});
      const refusedWhileSuspended = { [working]: ['active', 'account_suspended'], [expiring]: ['expiring', 'account_suspended'], [revoked]: ['revoked', 'revoked'] };
      for (const url of d.urls) {
        const list = await get(`/admin/v1/accounts/${accountId}/api-keys`, url);
        expect(list.body.accountSuspendedAt).toBe(suspended.body.suspendedAt);
        expect(states(list.body.items)).toEqual(refusedWhileSuspended);
        expect(states((await get(`/admin/v1/accounts/${accountId}`, url)).body.keys)).toEqual(refusedWhileSuspended);
      }
      const limited = await json(`${d.urls[0]}/admin/v1/api-keys/${working}`, { method: 'PATCH', headers: { ...operator, 'content-type': 'application/json' }, body: JSON.stringify({ limits: { requests_per_minute: 600 } }) });
      expect(limited.body).toMatchObject({ apiKeyId: working, state: 'active', effectiveState: 'account_suspended' });
      await sleep(CACHE_BOUND_MS + 50);
      expect((await chat(d.urls[0], apiKey, hello)).body.error?.code).toBe('account_suspended');

      expect((await post(`/admin/v1/accounts/${accountId}/unsuspend`, {})).status).toBe(200);
      const lifted = await get(`/admin/v1/accounts/${accountId}/api-keys`);
      expect(lifted.body.accountSuspendedAt).toBeNull();
      expect(states(lifted.body.items)).toEqual(states(before.body.items));
    });

    it('when an operator debits an account, then the balance moves once per reference, never below what is available, and reconciliation stays clean', async () => {
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 1_000_000);
      const path = `/admin/v1/accounts/${accountId}/debits`;
      const first = await post(path, { amount: 300_000, reference: 'fix-1', reason: 'duplicate top-up' });
      expect(first).toMatchObject({ status: 200, body: { accountId, applied: true, amount: 300_000, balance: 700_000 } });
      expect((await post(path, { amount: 300_000, reference: 'fix-1', reason: 'duplicate top-up' })).body).toMatchObject({ applied: false, balance: 700_000 });
      expect(await post(path, { amount: 1, reference: 'fix-1', reason: 'x' })).toMatchObject({ status: 409, body: { error: { code: 'debit_reference_reused' } } });
      expect(await post(path, { amount: 700_001, reference: 'fix-2', reason: 'too much' })).toMatchObject({ status: 402, body: { error: { code: 'insufficient_funds' } } });
      expect(await post(path, { amount: 10, reference: 'fix-3' })).toMatchObject({ status: 400, body: { error: { param: 'reason' } } });
      expect(await balance(d.urls[0], apiKey)).toMatchObject({ balance: 700_000 });
      let differences: unknown[] = [undefined];
      for (let i = 0; i < 50 && differences.length > 0; i++) {
        differences = (await get('/admin/v1/reconciliation')).body.differences.filter((x: { accountId: string }) => x.accountId === accountId);
        if (differences.length > 0) await sleep(100);
      }
      expect(differences).toEqual([]);
    });

    it('when accounts are listed, then newest come first, a name filter and pages work, and an account shows its pools and keys', async () => {
      const tag = `team-${randomUUID().slice(0, 8)}`;
      const made: string[] = [];
      for (const n of [1, 2, 3]) made.push((await post('/admin/v1/accounts', { name: `${tag} ${n}` })).body.accountId);
      const firstPage = await get(`/admin/v1/accounts?name=${tag.toUpperCase()}&limit=2`);
      expect(firstPage.status).toBe(200);
      expect(firstPage.body.items.map((a: { accountId: string }) => a.accountId)).toEqual([made[2], made[1]]);
      const rest = await get(`/admin/v1/accounts?name=${tag}&limit=2&before=${firstPage.body.next}`);
      expect(rest.body.items.map((a: { accountId: string }) => a.accountId)).toEqual([made[0]]);
      // A page size is decimal digits from 1 to 100, given once: anything else is refused naming it, on both paged lists.
      for (const path of ['/admin/v1/accounts', '/admin/v1/audit']) {
        for (const limit of ['0', '-1', '101', '1.5', '', '0x10', '1e1', '%205', 'ten', '5&limit=6']) {
          const refused = await get(`${path}?limit=${limit}`);
          expect([path, limit, refused.status, refused.body.error?.param, refused.body.error?.message]).toEqual([path, limit, 400, 'limit', expect.stringContaining('a whole number from 1 to 100')]);
        }
        expect((await get(`${path}?limit=100`)).status).toBe(200);
        expect(await get(`${path}?page=2`)).toMatchObject({ status: 400, body: { error: { param: 'page' } } });
      }
      const detail = await get(`/admin/v1/accounts/${made[0]}`, d.urls[1]);
      expect(detail.body).toMatchObject({ accountId: made[0], name: `${tag} 1`, suspendedAt: null, keys: [], currency: 'USD', scale: 9 });
      expect(detail.body.pools.map((p: { pool: string }) => p.pool)).toEqual(['pool-3', 'member']);
      expect(await get('/admin/v1/accounts/acct_missing')).toMatchObject({ status: 404, body: { error: { code: 'account_not_found' } } });
    });

    it('when operators act, then each action is in the audit log with who, what, when and the request id, and the log holds no secret', async () => {
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 5_000);
      const apiKeyId = (await get(`/admin/v1/accounts/${accountId}/api-keys`)).body.items[0].apiKeyId;
      const rotated = await post(`/admin/v1/api-keys/${apiKeyId}/rotate`, {});
      // A limits change is an entry; the same limits set again, or an empty change, are not.
      const limits = (path: string, body: unknown) => json(`${d.urls[0]}${path}`, { method: 'PATCH', headers: { ...operator, 'content-type': 'application/json' }, body: JSON.stringify({ limits: body }) });
      const settings = [{ spend_total: 5_000 }, { spend_total: 5_000 }, {}];
      for (const body of settings) expect((await limits(`/admin/v1/api-keys/${rotated.body.apiKeyId}`, body)).status).toBe(200);
      // Repeats change nothing and add no entry: a second revocation, a second suspension, the same limits again, an order's replay.
      for (let n = 0; n < 2; n++) expect((await del(`/admin/v1/api-keys/${rotated.body.apiKeyId}`)).status).toBe(204);
      for (let n = 0; n < 2; n++) expect((await post(`/admin/v1/accounts/${accountId}/suspend`, {})).status).toBe(200);
      for (const body of settings) expect((await limits(`/admin/v1/accounts/${accountId}`, body)).status).toBe(200);
      expect((await limits(`/admin/v1/accounts/${accountId}`, { requests_per_minute: null })).status).toBe(200);
      const idempotencyKey = randomUUID();
      const orders = [];
      for (let n = 0; n < 2; n++) {
        orders.push(await json(`${d.urls[0]}/admin/v1/accounts/${accountId}/orders`, { method: 'POST', headers: { ...operator, 'content-type': 'application/json', 'idempotency-key': idempotencyKey }, body: JSON.stringify({ amount: 2000 }) }));
      }
      expect(orders.map((o) => [o.status, o.headers.get('x-payg-replayed')])).toEqual([[201, null], [201, 'true']]);
      const audit = await get(`/admin/v1/audit?accountId=${accountId}`, d.urls[1]);
      expect(audit.status).toBe(200);
      expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(['order.create', 'account.limits', 'account.suspend', 'api_key.revoke', 'api_key.limits', 'api_key.rotate', 'account.credit', 'api_key.create', 'account.create']);
      for (const entry of audit.body.items) {
        expect(entry).toMatchObject({ who: expect.stringMatching(/^admin:[0-9a-f]{12}$/), accountId, requestId: expect.any(String), at: expect.any(String) });
      }
      const text = JSON.stringify(audit.body);
      for (const secret of [apiKey, rotated.body.apiKey, ADMIN_TOKEN]) expect(text).not.toContain(secret);
      const page = await get('/admin/v1/audit?limit=1');
      expect(page.body.items).toHaveLength(1);
      expect(page.body.next).toEqual(expect.any(String));
    });

    it('when the audit log is filtered by action and time with an account, then only those entries come, paged without a skip or a repeat, and a bad filter is 400 naming it', async () => {
      const { accountId } = await fundedAccount(d.urls[0], 5_000);
      const apiKeyId = (await get(`/admin/v1/accounts/${accountId}/api-keys`)).body.items[0].apiKeyId;
      const made: string[] = [];
      for (let n = 0; n < 3; n++) made.push((await post(`/admin/v1/accounts/${accountId}/api-keys`, { name: `k${n}` })).body.apiKeyId);
      // Every entry so far is before `start`, every later one at or after it.
      await sleep(5);
      const start = new Date().toISOString();
      await sleep(5);
      for (const id of made) expect((await del(`/admin/v1/api-keys/${id}`)).status).toBe(204);
      expect((await post(`/admin/v1/api-keys/${apiKeyId}/rotate`, {})).status).toBe(201);
      expect((await post(`/admin/v1/accounts/${accountId}/suspend`, {})).status).toBe(200);
      // Entries of other accounts come between, and are never listed under this account's filter.
      await post('/admin/v1/accounts', { name: 'between' });
      const actionsOf = (items: { action: string; accountId: string }[]) => items.map((e) => { expect(e.accountId).toBe(accountId); return e.action; });

      const revokes = await get(`/admin/v1/audit?accountId=${accountId}&action=api_key.revoke`, d.urls[1]);
      expect(revokes.status).toBe(200);
      expect(revokes.body.items.map((e: { apiKeyId: string }) => e.apiKeyId)).toEqual([...made].reverse());
      // Several actions, one a page: the pages list every entry once, in order, then end.
      const paged: string[] = [];
      let before: string | null | undefined;
      for (let n = 0; n < 10 && before !== null; n++) {
        const page = await get(`/admin/v1/audit?accountId=${accountId}&action=api_key.revoke,account.suspend,api_key.create&limit=1${before ? `&before=${before}` : ''}`);
        expect(page.status).toBe(200);
        paged.push(...actionsOf(page.body.items));
        before = page.body.next;
      }
      expect(before).toBeNull();
      expect(paged).toEqual(['account.suspend', 'api_key.revoke', 'api_key.revoke', 'api_key.revoke', 'api_key.create', 'api_key.create', 'api_key.create', 'api_key.create']);
      // A time range: from inclusive, to exclusive, with an offset.
      const since = await get(`/admin/v1/audit?accountId=${accountId}&from=${encodeURIComponent(start)}`);
      expect(actionsOf(since.body.items)).toEqual(['account.suspend', 'api_key.rotate', 'api_key.revoke', 'api_key.revoke', 'api_key.revoke']);
      const until = await get(`/admin/v1/audit?accountId=${accountId}&action=api_key.create&to=${encodeURIComponent(start)}`);
      expect(until.body.items.map((e: { apiKeyId: string }) => e.apiKeyId)).toEqual([...made].reverse().concat(apiKeyId));
      const startMs = Date.parse(start);
      const offset = new Date(startMs + 2 * 3600_000).toISOString().replace('Z', '+02:00');
      expect((await get(`/admin/v1/audit?accountId=${accountId}&action=api_key.create&to=${encodeURIComponent(offset)}`)).body.items).toEqual(until.body.items);
      expect((await get(`/admin/v1/audit?accountId=${accountId}&from=${encodeURIComponent(start)}&to=${encodeURIComponent(start)}`)).body).toEqual({ items: [], next: null });

      const refusals: Array<[string, string, string]> = [
        ['action=api_key.delete', 'action', 'unknown action "api_key.delete"'],
        ['action=api_key.revoke,nope', 'action', 'unknown action "nope"'],
        ['action=', 'action', 'unknown action ""'],
        ['action=api_key.revoke&action=api_key.rotate', 'action', 'must be given once'],
        ['from=yesterday', 'from', 'RFC 3339'],
        ['to=2026-11-29', 'to', 'RFC 3339'],
        [`from=${encodeURIComponent(start)}&to=2020-01-01T00:00:00Z`, 'to', 'to must not be before from'],
        ['since=2020-01-01T00:00:00Z', 'since', ''],
        [`accountId=${accountId}&accountId=acct_other`, 'accountId', 'accountId: must be given once, one account id'],
        ['accountId=', 'accountId', 'accountId: must not be empty'],
        ['before=1&before=2', 'before', "before: must be given once, a previous page's next"],
        ['before=soon', 'before', "before: must be a previous page's next (a whole number)"],
      ];
      for (const [q, param, message] of refusals) {
        const refused = await get(`/admin/v1/audit?${q}`);
        expect([q, refused.status, refused.body.error?.code, refused.body.error?.param, refused.body.error?.message]).toEqual([q, 400, 'invalid_request', param, expect.stringContaining(message)]);
      }
    });

    it('when a repair finds nothing to deliver, then it adds no audit entry, however often it runs', async () => {
      const newest = async () => (await get('/admin/v1/audit?limit=1')).body.items[0]?.id;
      let clean = 0;
      for (let n = 0; n < 5 && clean < 2; n++) {
        const before = await newest();
        const repaired = await post('/admin/v1/reconciliation/repair', {});
        expect(repaired.status).toBe(200);
        // On Dapr an event still on its way may be delivered by a repair: that is a change, and logged.
        if (repaired.body.repaired.some((r: { delivered: string[] }) => r.delivered.length > 0)) continue;
        expect(await newest()).toBe(before);
        clean += 1;
      }
      expect(clean).toBe(2);
    });

    it('when a repair is sent a body, then it is refused naming the field, and nothing is repaired or logged', async () => {
      const newest = async () => (await get('/admin/v1/audit?limit=1')).body.items[0]?.id;
      const before = await newest();
      for (const body of [{ dryRun: true }, { accountId: 'acct_x' }]) {
        const refused = await post('/admin/v1/reconciliation/repair', body);
        expect([refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([400, 'invalid_request', Object.keys(body)[0]]);
      }
      expect(await newest()).toBe(before);
    });

    it('when a key is rotated or revoked, then its image tasks stay recoverable by that key only while it works', async () => {
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 100_000_000);
      const made = await image(d.urls[0], apiKey, picture);
      expect(made.status).toBe(200);
      const apiKeyId = (await get(`/admin/v1/accounts/${accountId}/api-keys`)).body.items[0].apiKeyId;
      const rotated = await post(`/admin/v1/api-keys/${apiKeyId}/rotate`, { graceSeconds: 60 });
      expect((await imageTask(d.urls[1], apiKey, made.body.taskId)).status).toBe(200);
      expect((await imageTask(d.urls[1], rotated.body.apiKey, made.body.taskId)).status).toBe(404);
      await del(`/admin/v1/api-keys/${apiKeyId}`);
      await sleep(CACHE_BOUND_MS + 50);
      expect((await imageTask(d.urls[1], apiKey, made.body.taskId)).status).toBe(401);
    });

    itConformsToOpenApi(openApi);
  });
}
