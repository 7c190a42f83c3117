import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { FundsHoldClient } from '../../../actors/funds-hold/client';
import { AccountClient } from '../../../actors/account/client';
import { JournalClient } from '../../../actors/journal/client';
import { startEmbeddedActors, type ActorHostUnderTest } from '../../../test/support/actor-hosts';
import { AccountOperator } from '../accounts/operator';
import { AuditLog } from '../accounts/audit';
import type { ActorOutboxClient } from '../../../actors/runtime/outbox-client';
import { AccountStore } from '../accounts/store';
import type { LedgerReader } from '../ledger/reader';
import { errorResponder } from '../../../lib/error-responder';
import type { OrderService } from '../orders/use-case';
import { adminRoutes } from './admin';
import { requestId } from '../middleware/request-id';
import { MemoryKeyValueStore } from '../../../test/support/memory-kv';
import { GatewayError } from '../../../lib/errors';
import { violationsOf, type Answer } from '../../../test/support/openapi-conformance';


const ADMIN_TOKEN = 'admin-token-for-unit-tests';
let server: Server;
let base: string;
let accounts: AccountStore;
let accountId: string;

let actors: ActorHostUnderTest;

beforeAll(async () => {
  accounts = new AccountStore(new MemoryKeyValueStore());
  accountId = (await accounts.createAccount('keys')).accountId;
  // The key routes with the real actors on an embedded host; the other collaborators are never reached.
  actors = await startEmbeddedActors('admin-routes-');
  const unused = {} as unknown;
  const journals = new JournalClient(actors.invoker);
  const funds = new FundsHoldClient(actors.invoker);
  const audit = new AuditLog(journals);
  const operator = new AccountOperator({ accounts, accountActors: new AccountClient(actors.invoker), journals, funds, ledger: unused as LedgerReader, audit });
  const app = express();
  app.use(requestId());
  app.use(adminRoutes({ adminToken: ADMIN_TOKEN, accounts, operator, audit, funds, outbox: unused as ActorOutboxClient, ledger: unused as LedgerReader, orders: unused as OrderService }));
  app.use(errorResponder({ logger: pino({ level: 'silent' }) }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await actors.close();
});

async function createKey(account: string, body?: string): Promise<{ status: number; body: Record<string, unknown> & { error?: Record<string, string> } }> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}/admin/v1/accounts/${account}/api-keys`, { method: 'POST', headers, body });
  return { status: response.status, body: await response.json() };
}

describe('POST /admin/v1/accounts/{id}/api-keys', () => {
  it('when the body is empty or {}, then an unscoped key is made, as before scopes existed', async () => {
    for (const body of [undefined, '{}']) {
      const reply = await createKey(accountId, body);
      expect(reply).toEqual({
        status: 201,
        body: {
          apiKeyId: expect.stringMatching(/^key_/), apiKey: expect.stringMatching(/^sk-payg-/), accountId, scopes: [],
          name: null, prefix: (reply.body.apiKey as string).slice(0, 12), createdAt: expect.any(String), expiresAt: null,
        },
      });
      expect((await accounts.findApiKey(reply.body.apiKey as string))?.scopes).toEqual([]);
    }
  });

  it('when scopes are given, then the key carries them and the answer lists them', async () => {
    const reply = await createKey(accountId, JSON.stringify({ scopes: ['compat', 'evidence'] }));
    expect(reply).toMatchObject({ status: 201, body: { accountId, scopes: ['compat', 'evidence'] } });
    expect(await accounts.findApiKey(reply.body.apiKey as string)).toMatchObject({ accountId, scopes: ['compat', 'evidence'] });
  });

  it('when a scope is unknown or repeated, then 400 invalid_scope naming it, and no key is made', async () => {
    const create = jest.spyOn(accounts, 'putApiKey');
    const unknown = await createKey(accountId, JSON.stringify({ scopes: ['compat', 'root'] }));
    expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'invalid_scope', param: 'scopes', message: expect.stringContaining('"root"') } } });
    const repeated = await createKey(accountId, JSON.stringify({ scopes: ['media', 'media'] }));
    expect(repeated).toMatchObject({ status: 400, body: { error: { code: 'invalid_scope', message: expect.stringContaining('"media"') } } });
    expect(create).not.toHaveBeenCalled();
    create.mockRestore();
  });

  it('when the body has another field or scopes of the wrong type, then 400 invalid_request', async () => {
    expect((await createKey(accountId, JSON.stringify({ scopes: ['compat'], admin: true }))).body.error?.code).toBe('invalid_request');
    expect((await createKey(accountId, JSON.stringify({ scopes: 'compat' }))).body.error?.code).toBe('invalid_request');
  });

  it('when the body is JSON but not an object (null, a list, a string), then 400 saying the body must be an object, and no key is made', async () => {
    const create = jest.spyOn(accounts, 'putApiKey');
    for (const body of ['null', '[]', '"scopes"', '7']) {
      const refused = await createKey(accountId, body);
      expect([body, refused.status, refused.body.error?.code, refused.body.error?.message]).toEqual([body, 400, 'invalid_request', 'the request body must be a JSON object']);
    }
    expect(create).not.toHaveBeenCalled();
    create.mockRestore();
  });

  it('when the account already holds its most keys, then 409 api_key_limit_reached, as the OpenAPI document declares', async () => {
    const create = jest.spyOn(AccountOperator.prototype, 'createKey').mockRejectedValueOnce(new GatewayError('api_key_limit_reached', 'an account holds at most 1000 API keys, revoked ones included'));
    const refused = await createKey(accountId, JSON.stringify({}));
    create.mockRestore();
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'api_key_limit_reached' } } });
    expect(violationsOf({ method: 'POST', url: `${base}/admin/v1/accounts/${accountId}/api-keys`, status: refused.status, contentType: 'application/json', body: refused.body })).toEqual([]);
  });

  it('when the account does not exist, then 404 account_not_found', async () => {
    expect(await createKey('acct_missing', JSON.stringify({ scopes: ['compat'] }))).toMatchObject({ status: 404, body: { error: { code: 'account_not_found' } } });
  });
});

describe('operator routes that take no body', () => {
  it('when a body or a Content-Type is sent anyway, then the refusal (415, 413, 400 invalid_json) is one the OpenAPI document declares for the route', async () => {
    const authorization = `Bearer ${ADMIN_TOKEN}`;
    const sent = [
      { method: 'GET', path: '/admin/v1/accounts', headers: { authorization, 'content-type': 'text/plain' }, status: 415 },
      { method: 'GET', path: `/admin/v1/accounts/${accountId}`, headers: { authorization, 'content-type': 'application/json' }, body: 'x'.repeat(64 * 1024 + 1), status: 413 },
      { method: 'DELETE', path: '/admin/v1/api-keys/key_missing', headers: { authorization, 'content-type': 'application/json' }, body: '{', status: 400 },
    ];
    for (const { method, path, headers, body, status } of sent) {
      // node:http, not fetch: fetch sends no body with a GET.
      const answer = await new Promise<Answer>((resolve, reject) => {
        const req = request(`${base}${path}`, { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body ?? '')) } }, (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ method, url: `${base}${path}`, status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', body: JSON.parse(text) }));
        });
        req.on('error', reject);
        req.end(body);
      });
      expect([path, answer.status, violationsOf(answer)]).toEqual([path, status, []]);
    }
  });
});
