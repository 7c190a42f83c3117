import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, type OAuthConfig } from '../../../lib/config';
import { GatewayError } from '../../../lib/errors';
import { startOAuthIssuer, type OAuthIssuer } from '../../../test/support/oauth';
import { OAuthVerifier, type JwksFetchOptions } from './oauth';

const ACCOUNT = 'acct_0123456789abcdef0123456789abcdef';

function configOf(issuer: OAuthIssuer, extra: Record<string, string> = {}): OAuthConfig {
  return loadConfig({ ...issuer.env(), ...extra }).oauth!;
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return error;
}

describe.each(['ES256', 'RS256'] as const)('OAuthVerifier with an %s issuer', (alg) => {
  let issuer: OAuthIssuer;
  let verifier: OAuthVerifier;

  beforeAll(async () => {
    issuer = await startOAuthIssuer({ alg });
    verifier = new OAuthVerifier(configOf(issuer));
  });
  afterAll(() => issuer.close());

  it('when the token is valid, then its subject, account, scopes and id come back', async () => {
    const token = await issuer.mint({ sub: 'member-7', account: ACCOUNT, scope: 'chat  usage:read', jti: 'tok-1' });
    await expect(verifier.verify(token)).resolves.toEqual({ subject: 'member-7', accountId: ACCOUNT, scopes: ['chat', 'usage:read'], tokenId: 'tok-1' });
  });

  it('when the scopes come as an scp list, then they are read from it', async () => {
    const token = await issuer.mint({ account: ACCOUNT, scope: ['chat', 'media'] });
    expect((await verifier.verify(token)).scopes).toEqual(['chat', 'media']);
  });

  it('when the token has no scopes, then the principal has none', async () => {
    expect((await verifier.verify(await issuer.mint({ account: ACCOUNT }))).scopes).toEqual([]);
  });

  const refusals: Array<[string, () => Promise<string>, RegExp]> = [
    ['signed by a key the JWKS does not hold', () => issuer.mint({ account: ACCOUNT }, { signWith: 'other-key' }), /signature/],
    ['signed under an unknown kid', () => issuer.mint({ account: ACCOUNT }, { kid: 'kid-nobody' }), /unknown key/],
    ['expired', () => issuer.mint({ account: ACCOUNT, expiresInS: -60 }), /expired/],
    ['not yet valid', () => issuer.mint({ account: ACCOUNT, notBeforeS: 60 }), /not yet valid/],
    ['from another issuer', () => issuer.mint({ account: ACCOUNT, iss: 'https://elsewhere.example' }), /another issuer/],
    ['for another audience', () => issuer.mint({ account: ACCOUNT, aud: 'someone-else' }), /another audience/],
    ['without exp', () => issuer.mint({ account: ACCOUNT, expiresInS: null }), /"exp"/],
    ['without sub', () => issuer.mint({ account: ACCOUNT, sub: null }), /"sub"/],
    ['without the account claim', () => issuer.mint({}), /"payg_account"/],
    ['signed with HS256', () => issuer.mint({ account: ACCOUNT }, { alg: 'HS256' }), /algorithm/],
    ['unsigned (alg none)', () => issuer.mint({ account: ACCOUNT }, { alg: 'none' }), /algorithm|malformed/],
    ['not a JWT at all', async () => 'bm90.YS1qd3Q.c2ln', /malformed/],
  ];
  it.each(refusals)('when the token is %s, then 401 unauthorized with a short reason that does not echo it', async (_case, make, reason) => {
    const token = await make();
    const error = await refusal(verifier.verify(token));
    expect({ code: error.code, status: error.status }).toEqual({ code: 'unauthorized', status: 401 });
    expect(error.message).toMatch(reason);
    for (const part of token.split('.').filter((p) => p.length > 3)) expect(error.message).not.toContain(part);
  });
});

describe('OAuthVerifier settings', () => {
  let issuer: OAuthIssuer;
  beforeAll(async () => {
    issuer = await startOAuthIssuer();
  });
  afterAll(() => issuer.close());

  it('when a token expired within the clock tolerance, then it is still accepted; past it, refused', async () => {
    const lenient = new OAuthVerifier(configOf(issuer, { GATEWAY_OAUTH_CLOCK_TOLERANCE_S: '30' }));
    await expect(lenient.verify(await issuer.mint({ account: ACCOUNT, expiresInS: -10 }))).resolves.toMatchObject({ accountId: ACCOUNT });
    expect((await refusal(lenient.verify(await issuer.mint({ account: ACCOUNT, expiresInS: -60 })))).code).toBe('unauthorized');
  });

  it('when another account claim is configured, then the account comes from it and payg_account is not enough', async () => {
    const custom = new OAuthVerifier(configOf(issuer, { GATEWAY_OAUTH_ACCOUNT_CLAIM: 'tenant' }));
    expect((await refusal(custom.verify(await issuer.mint({ account: ACCOUNT })))).message).toMatch(/"tenant"/);
  });

  it('when the keys come from a JWKS file, then tokens verify without any HTTP fetch', async () => {
    const jwks = await (await fetch(issuer.jwksUrl)).json();
    const file = join(mkdtempSync(join(tmpdir(), 'jwks-')), 'jwks.json');
    writeFileSync(file, JSON.stringify(jwks));
    const fetchesBefore = issuer.jwksFetches;
    const verifier = new OAuthVerifier(loadConfig({ GATEWAY_OAUTH_ISSUER: issuer.issuer, GATEWAY_OAUTH_AUDIENCE: issuer.audience, GATEWAY_OAUTH_JWKS_FILE: file }).oauth!);
    await expect(verifier.verify(await issuer.mint({ account: ACCOUNT }))).resolves.toMatchObject({ accountId: ACCOUNT });
    expect(issuer.jwksFetches).toBe(fetchesBefore);
  });

  it('when the JWKS file is missing, unreadable as a key set or holds a private key, then construction is refused naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'jwks-'));
    const settings = (file: string): OAuthConfig => ({ issuer: issuer.issuer, audience: issuer.audience, jwksFile: file, accountClaim: 'payg_account', clockToleranceS: 5 });
    expect(() => new OAuthVerifier(settings(join(dir, 'absent.json')))).toThrow(/GATEWAY_OAUTH_JWKS_FILE/);
    writeFileSync(join(dir, 'bad.json'), '{"keys": "none"}');
    expect(() => new OAuthVerifier(settings(join(dir, 'bad.json')))).toThrow(ConfigError);
    writeFileSync(join(dir, 'private.json'), JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA', d: 'AA' }] }));
    expect(() => new OAuthVerifier(settings(join(dir, 'private.json')))).toThrow(/private key/);
  });

  it('when both or neither JWKS source is given, then construction is refused', () => {
    const base = { issuer: 'i', audience: 'a', accountClaim: 'payg_account', clockToleranceS: 5 };
    expect(() => new OAuthVerifier(base)).toThrow(ConfigError);
    expect(() => new OAuthVerifier({ ...base, jwksUrl: 'http://127.0.0.1:1/jwks', jwksFile: '/tmp/jwks.json' })).toThrow(ConfigError);
  });
});

describe('OAuthVerifier with a remote JWKS', () => {
  let issuer: OAuthIssuer;
  beforeEach(async () => {
    issuer = await startOAuthIssuer();
  });
  afterEach(() => issuer.close());

  const remote = (options?: JwksFetchOptions) => new OAuthVerifier(configOf(issuer), options);

  it('when several tokens are verified, then the JWKS is fetched over HTTP once and cached', async () => {
    const verifier = remote();
    for (let i = 0; i < 3; i += 1) await verifier.verify(await issuer.mint({ account: ACCOUNT }));
    expect(issuer.jwksFetches).toBe(1);
  });

  it('when the issuer rotates to a new key, then the new kid makes the verifier fetch the JWKS again and the token verifies', async () => {
    const verifier = remote({ cooldownMs: 0 });
    await verifier.verify(await issuer.mint({ account: ACCOUNT }));
    const oldToken = await issuer.mint({ account: ACCOUNT });
    await issuer.rotate();
    await expect(verifier.verify(await issuer.mint({ account: ACCOUNT }))).resolves.toMatchObject({ accountId: ACCOUNT });
    expect(issuer.jwksFetches).toBe(2);
    await expect(verifier.verify(oldToken)).resolves.toMatchObject({ accountId: ACCOUNT });
  });

  it('when a token has no kid, then it verifies while one published key fits, and is refused once several do', async () => {
    const verifier = remote({ cooldownMs: 0 });
    await expect(verifier.verify(await issuer.mint({ account: ACCOUNT }, { kid: null }))).resolves.toMatchObject({ accountId: ACCOUNT });
    await issuer.rotate();
    await verifier.verify(await issuer.mint({ account: ACCOUNT }));
    expect((await refusal(verifier.verify(await issuer.mint({ account: ACCOUNT }, { kid: null })))).message).toMatch(/several keys/);
  });

  it('when unknown kids arrive within the cooldown, then they are refused without refetching the JWKS', async () => {
    const verifier = remote();
    await verifier.verify(await issuer.mint({ account: ACCOUNT }));
    for (let i = 0; i < 3; i += 1) expect((await refusal(verifier.verify(await issuer.mint({ account: ACCOUNT }, { kid: `bogus-${i}` })))).code).toBe('unauthorized');
    expect(issuer.jwksFetches).toBe(1);
  });

  it('when the JWKS endpoint answers an error, then 503 oauth_unavailable, and tokens verify again once it recovers', async () => {
    const verifier = remote();
    issuer.failJwks(500);
    const token = await issuer.mint({ account: ACCOUNT });
    const error = await refusal(verifier.verify(token));
    expect({ code: error.code, status: error.status }).toEqual({ code: 'oauth_unavailable', status: 503 });
    issuer.failJwks(200);
    await expect(verifier.verify(token)).resolves.toMatchObject({ accountId: ACCOUNT });
  });

  it('when the JWKS endpoint cannot be reached, then 503 oauth_unavailable', async () => {
    const verifier = remote({ timeoutMs: 1_000 });
    const token = await issuer.mint({ account: ACCOUNT });
    await issuer.close();
    expect((await refusal(verifier.verify(token))).code).toBe('oauth_unavailable');
    issuer = await startOAuthIssuer();
  });

  it('when a forbidden algorithm is presented, then it is refused before any JWKS fetch', async () => {
    const verifier = remote();
    for (const alg of ['HS256', 'none'] as const) expect((await refusal(verifier.verify(await issuer.mint({ account: ACCOUNT }, { alg })))).code).toBe('unauthorized');
    expect(issuer.jwksFetches).toBe(0);
  });
});
