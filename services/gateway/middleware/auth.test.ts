import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { loadConfig } from '../../../lib/config';
import { GatewayError } from '../../../lib/errors';
import { startOAuthIssuer, type OAuthIssuer } from '../../../test/support/oauth';
import { AccountStore } from '../accounts/store';
import { OAuthVerifier } from '../auth/oauth';
import { rawRequest } from '../../../test/support/raw-http';
import { adminAuth, apiKeyAuth, apiKeyOwner, credentialAuth } from './auth';
import { MemoryKeyValueStore } from '../../../test/support/memory-kv';


interface Reply {
  status: number;
  body: { caller?: Record<string, unknown>; code?: string; message?: string };
}

let issuer: OAuthIssuer;
let accounts: AccountStore;
let oauth: OAuthVerifier;
let server: Server;
let base: string;
let accountId: string;
let apiKey: string;
let apiKeyId: string;

/** One route per credential policy, answering with the caller it was given. */
function app(): express.Express {
  const application = express();
  const echo = (req: Request, res: Response) => res.json({ caller: { ...req.caller, scopes: [...req.caller.scopes].sort() } });
  const mount = (path: string, handler: RequestHandler) => application.get(path, handler, echo);
  mount('/open', credentialAuth({ accounts, oauth }, { accept: ['api_key'] }));
  mount('/anthropic', credentialAuth({ accounts, oauth }, { accept: ['api_key'], allowXApiKey: true }));
  mount('/member', credentialAuth({ accounts, oauth }, { accept: ['oauth'] }));
  mount('/member-off', credentialAuth({ accounts }, { accept: ['oauth'] }));
  mount('/either', credentialAuth({ accounts, oauth }, { accept: ['api_key', 'oauth'] }));
  mount('/legacy', apiKeyAuth(accounts));
  application.get('/admin', adminAuth('operator-token'), (_req, res) => res.json({ caller: { admin: true } }));
  application.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const known = error instanceof GatewayError ? error : new GatewayError('internal_error', String(error));
    res.status(known.status).json({ code: known.code, message: known.message });
  });
  return application;
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await fetch(base + path, { headers });
  return { status: response.status, body: await response.json() };
}

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

beforeAll(async () => {
  issuer = await startOAuthIssuer();
  accounts = new AccountStore(new MemoryKeyValueStore());
  oauth = new OAuthVerifier(loadConfig(issuer.env()).oauth!);
  accountId = (await accounts.createAccount('member-co')).accountId;
  ({ apiKey, apiKeyId } = await accounts.createApiKey(accountId, ['compat']));
  server = app().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await issuer.close();
});

afterEach(() => jest.restoreAllMocks());

describe('credentialAuth, API-key routes', () => {
  it('when a known API key is presented, then the caller is the key\'s account, family api_key, with its scopes', async () => {
    expect(await get('/open', bearer(apiKey))).toEqual({ status: 200, body: { caller: { family: 'api_key', accountId, apiKeyId, spendKeyId: apiKeyId, scopes: ['compat'] } } });
  });

  it('when apiKeyAuth is used as before, then it behaves as the API-key-only policy', async () => {
    expect((await get('/legacy', bearer(apiKey))).body.caller).toMatchObject({ family: 'api_key', accountId, apiKeyId });
    expect((await get('/legacy', bearer(await issuer.mint({ account: accountId })))).body.code).toBe('credential_family_mismatch');
  });

  it('when the key comes as x-api-key, then only a route that allows the header takes it', async () => {
    expect((await get('/anthropic', { 'x-api-key': apiKey })).body.caller).toMatchObject({ apiKeyId });
    expect(await get('/open', { 'x-api-key': apiKey })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });

  it('when no credential or an unknown key is presented, then 401 unauthorized', async () => {
    expect(await get('/open')).toMatchObject({ status: 401, body: { code: 'unauthorized', message: expect.stringContaining('API key') } });
    expect(await get('/open', bearer('sk-payg-unknown'))).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await get('/open', { authorization: `Basic ${apiKey}` })).toMatchObject({ status: 401 });
  });

  it('when an OAuth token is presented, then 403 credential_family_mismatch naming the route family, and the token is neither verified nor looked up', async () => {
    const verify = jest.spyOn(oauth, 'verify');
    const findApiKey = jest.spyOn(accounts, 'findApiKey');
    const token = await issuer.mint({ account: accountId });
    for (const [path, headers] of [['/open', bearer(token)], ['/anthropic', { 'x-api-key': token }]] as const) {
      const reply = await get(path, headers);
      expect(reply).toMatchObject({ status: 403, body: { code: 'credential_family_mismatch' } });
      expect(reply.body.message).toMatch(/open pool-3/);
    }
    expect(verify).not.toHaveBeenCalled();
    expect(findApiKey).not.toHaveBeenCalled();
  });
});

describe('credentialAuth, member (OAuth) routes', () => {
  it('when a valid token for a known account is presented, then the caller is that account, family oauth, with the subject and token scopes', async () => {
    const token = await issuer.mint({ sub: 'alice', account: accountId, scope: 'chat usage' });
    expect(await get('/member', bearer(token))).toEqual({ status: 200, body: { caller: { family: 'oauth', accountId, subject: 'alice', scopes: ['chat', 'usage'] } } });
  });

  it('when an API key is presented, then 403 credential_family_mismatch naming member routes, and the key is never looked up', async () => {
    const findApiKey = jest.spyOn(accounts, 'findApiKey');
    const reply = await get('/member', bearer(apiKey));
    expect(reply).toMatchObject({ status: 403, body: { code: 'credential_family_mismatch' } });
    expect(reply.body.message).toMatch(/member routes/);
    expect(findApiKey).not.toHaveBeenCalled();
  });

  it('when the token names an account this gateway does not hold, then 401 unauthorized', async () => {
    const token = await issuer.mint({ account: 'acct_00000000000000000000000000000000' });
    expect(await get('/member', bearer(token))).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });

  it('when the token does not verify, then 401 unauthorized and the account store is not read', async () => {
    const getAccount = jest.spyOn(accounts, 'getAccount');
    const token = await issuer.mint({ account: accountId, expiresInS: -120 });
    expect(await get('/member', bearer(token))).toMatchObject({ status: 401, body: { code: 'unauthorized', message: expect.stringContaining('expired') } });
    expect(getAccount).not.toHaveBeenCalled();
  });

  it('when no credential is presented, then 401 asking for an OAuth access token', async () => {
    expect(await get('/member')).toMatchObject({ status: 401, body: { code: 'unauthorized', message: expect.stringContaining('OAuth access token') } });
  });

  it('when OAuth is not configured, then a token gets 503 oauth_disabled, and an API key is still the wrong family', async () => {
    expect(await get('/member-off', bearer(await issuer.mint({ account: accountId })))).toMatchObject({ status: 503, body: { code: 'oauth_disabled' } });
    expect(await get('/member-off', bearer(apiKey))).toMatchObject({ status: 403, body: { code: 'credential_family_mismatch' } });
  });
});

describe('credentialAuth, a route taking both families', () => {
  it('when either credential is presented, then its own family decides the caller', async () => {
    expect((await get('/either', bearer(apiKey))).body.caller).toMatchObject({ family: 'api_key', apiKeyId });
    expect((await get('/either', bearer(await issuer.mint({ sub: 'bob', account: accountId })))).body.caller).toMatchObject({ family: 'oauth', subject: 'bob' });
  });

  it('when the policy accepts no family, then it is refused when the route is built', () => {
    expect(() => credentialAuth({ accounts }, { accept: [] })).toThrow(TypeError);
  });
});

describe('apiKeyOwner', () => {
  it('when the caller holds an API key, then only its account and key id come back', () => {
    expect(apiKeyOwner({ family: 'api_key', accountId: 'acct_1', apiKeyId: 'key_1', scopes: new Set(['compat']) })).toEqual({ accountId: 'acct_1', apiKeyId: 'key_1' });
  });
  it('when the caller holds an OAuth token, then 403 credential_family_mismatch', () => {
    expect(() => apiKeyOwner({ family: 'oauth', accountId: 'acct_1', subject: 'alice', scopes: new Set() })).toThrow(expect.objectContaining({ code: 'credential_family_mismatch' }));
  });
});

describe('credentialAuth and adminAuth, more than one credential in a request', () => {
  let otherKey: string;
  beforeAll(async () => {
    ({ apiKey: otherKey } = await accounts.createApiKey(accountId, []));
  });
  const send = async (path: string, headers: Array<[string, string]>) => {
    const reply = await rawRequest(base + path, 'GET', headers);
    return { status: reply.status, code: reply.body.code as string | undefined };
  };
  const ambiguous = { status: 400, code: 'ambiguous_credential' };

  it('when two Authorization headers are sent, even equal ones, then 400 ambiguous_credential and nothing is looked up or verified', async () => {
    const findApiKey = jest.spyOn(accounts, 'findApiKey');
    const verify = jest.spyOn(oauth, 'verify');
    const token = await issuer.mint({ account: accountId });
    expect(await send('/open', [['authorization', `Bearer ${apiKey}`], ['authorization', `Bearer ${otherKey}`]])).toEqual(ambiguous);
    expect(await send('/open', [['authorization', `Bearer ${apiKey}`], ['authorization', `Bearer ${apiKey}`]])).toEqual(ambiguous);
    expect(await send('/either', [['authorization', `Bearer ${token}`], ['authorization', `Bearer ${apiKey}`]])).toEqual(ambiguous);
    expect(await send('/member', [['authorization', `Bearer ${token}`], ['authorization', 'Bearer x']])).toEqual(ambiguous);
    // Header names in any letter case are the same header.
    expect(await send('/open', [['Authorization', `Bearer ${apiKey}`], ['AUTHORIZATION', `Bearer ${otherKey}`]])).toEqual(ambiguous);
    expect(findApiKey).not.toHaveBeenCalled();
    expect(verify).not.toHaveBeenCalled();
  });

  it('when Authorization and x-api-key name different keys, or x-api-key comes twice, then 400 on a route that takes x-api-key; the same key in both is one credential', async () => {
    expect(await send('/anthropic', [['authorization', `Bearer ${apiKey}`], ['x-api-key', otherKey]])).toEqual(ambiguous);
    expect(await send('/anthropic', [['authorization', `Basic ${apiKey}`], ['x-api-key', apiKey]])).toEqual(ambiguous);
    expect(await send('/anthropic', [['x-api-key', apiKey], ['x-api-key', otherKey]])).toEqual(ambiguous);
    expect(await send('/anthropic', [['X-Api-Key', apiKey], ['x-API-key', otherKey]])).toEqual(ambiguous);
    expect(await send('/anthropic', [['authorization', `Bearer ${apiKey}`], ['x-api-key', apiKey]])).toEqual({ status: 200, code: undefined });
    // A route that does not take x-api-key ignores it, as before.
    expect(await send('/open', [['authorization', `Bearer ${apiKey}`], ['x-api-key', otherKey]])).toEqual({ status: 200, code: undefined });
  });

  it('when the operator API gets two Authorization headers, the right token first, then 400 ambiguous_credential', async () => {
    expect(await send('/admin', [['authorization', 'Bearer operator-token']])).toEqual({ status: 200, code: undefined });
    expect(await send('/admin', [['authorization', 'Bearer operator-token'], ['authorization', 'Bearer someone-else']])).toEqual(ambiguous);
  });

  it('when the operator token is wrong by one character, a prefix, longer or empty, then 401 (compared as digests, whatever its length)', async () => {
    for (const token of ['operator-tokeN', 'operator-toke', 'operator-token-and-more', 'o'.repeat(4096), '']) {
      expect(await send('/admin', [['authorization', `Bearer ${token}`]])).toEqual({ status: 401, code: 'unauthorized' });
    }
    expect(await send('/admin', [])).toEqual({ status: 401, code: 'unauthorized' });
  });
});
