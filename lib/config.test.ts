import { ConfigError, IMAGE_UNKNOWN_DEADLINE_MS, loadConfig } from './config';
import { DEFAULT_ACTOR_IDLE_MS } from '../actors/runtime/embedded-host';

describe('image settings', () => {
  it('when nothing is set, then the UNKNOWN_IMAGE_V1 deadline is 24 hours and the image hold outlives it', () => {
    const config = loadConfig({});
    expect(config.images.deadlineMs).toBe(IMAGE_UNKNOWN_DEADLINE_MS);
    expect(IMAGE_UNKNOWN_DEADLINE_MS).toBe(86_400_000);
    expect(config.images.holdTtlMs).toBeGreaterThan(config.images.deadlineMs);
    expect(config.images.artifactWaitMs).toBeGreaterThanOrEqual(config.providerTimeoutMs);
  });
  it('when the deadline is shortened outside test mode, then start-up is refused', () => {
    expect(() => loadConfig({ GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS: '5000' })).toThrow(ConfigError);
    expect(() => loadConfig({ GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS: '5000', GATEWAY_TEST_MODE: 'false' })).toThrow(/GATEWAY_TEST_MODE/);
  });
  it('when the deadline is shortened in test mode, then it is used', () => {
    expect(loadConfig({ GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS: '5000', GATEWAY_TEST_MODE: 'true' }).images.deadlineMs).toBe(5000);
  });
  it('when the deadline is out of range, then start-up is refused', () => {
    for (const value of ['999', '86400001', 'soon']) {
      expect(() => loadConfig({ GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS: value, GATEWAY_TEST_MODE: 'true' })).toThrow(ConfigError);
    }
  });
});

describe('checkout settings', () => {
  it('when nothing is set, then checkout callbacks are off and the tolerance is 300 seconds', () => {
    expect(loadConfig({}).checkout).toEqual({ secret: undefined, toleranceS: 300 });
  });
  it('when the secret is shorter than 32 characters, then start-up is refused naming it', () => {
    expect(() => loadConfig({ GATEWAY_CHECKOUT_SECRET: 'x'.repeat(31) })).toThrow(/GATEWAY_CHECKOUT_SECRET/);
    expect(loadConfig({ GATEWAY_CHECKOUT_SECRET: 'x'.repeat(32) }).checkout.secret).toBe('x'.repeat(32));
  });
  it('when the tolerance is outside 1 to 3600 seconds, then start-up is refused', () => {
    for (const value of ['0', '3601', 'soon']) expect(() => loadConfig({ GATEWAY_CHECKOUT_TOLERANCE_S: value })).toThrow(/GATEWAY_CHECKOUT_TOLERANCE_S/);
    expect(loadConfig({ GATEWAY_CHECKOUT_TOLERANCE_S: '60' }).checkout.toleranceS).toBe(60);
  });
});

describe('OAuth settings', () => {
  const complete = { GATEWAY_OAUTH_ISSUER: 'https://id.example', GATEWAY_OAUTH_AUDIENCE: 'payg-gateway', GATEWAY_OAUTH_JWKS_URL: 'https://id.example/jwks.json' };

  it('when nothing is set, then OAuth is off', () => {
    expect(loadConfig({}).oauth).toBeUndefined();
  });
  it('when issuer, audience and a JWKS URL are set, then OAuth is on with the payg_account claim and 5 seconds of tolerance', () => {
    expect(loadConfig(complete).oauth).toEqual({ issuer: 'https://id.example', audience: 'payg-gateway', jwksUrl: 'https://id.example/jwks.json', jwksFile: undefined, accountClaim: 'payg_account', clockToleranceS: 5 });
  });
  it('when a JWKS file is the key source, then its path is resolved and the claim and tolerance can be set', () => {
    const { GATEWAY_OAUTH_JWKS_URL: _url, ...rest } = complete;
    const oauth = loadConfig({ ...rest, GATEWAY_OAUTH_JWKS_FILE: 'keys/jwks.json', GATEWAY_OAUTH_ACCOUNT_CLAIM: 'tenant', GATEWAY_OAUTH_CLOCK_TOLERANCE_S: '0' }).oauth;
    expect(oauth).toMatchObject({ jwksUrl: undefined, jwksFile: expect.stringMatching(/^\/.*keys\/jwks\.json$/), accountClaim: 'tenant', clockToleranceS: 0 });
  });
  it('when an http JWKS URL is on loopback, then it is accepted; plain http elsewhere, any other scheme or a non-URL is refused naming the variable', () => {
    expect(loadConfig({ ...complete, GATEWAY_OAUTH_JWKS_URL: 'http://127.0.0.1:9000/jwks' }).oauth?.jwksUrl).toBe('http://127.0.0.1:9000/jwks');
    expect(loadConfig({ ...complete, GATEWAY_OAUTH_JWKS_URL: 'http://localhost:9000/jwks' }).oauth?.jwksUrl).toBe('http://localhost:9000/jwks');
    for (const value of ['file:///etc/jwks.json', 'ftp://id.example/jwks', 'jwks.json', 'http://id.example/jwks', 'http://127.0.0.1.evil.example/jwks']) {
      expect(() => loadConfig({ ...complete, GATEWAY_OAUTH_JWKS_URL: value })).toThrow(/GATEWAY_OAUTH_JWKS_URL/);
    }
  });
  it('when only part of the set is given, then start-up is refused naming each missing setting', () => {
    expect(() => loadConfig({ GATEWAY_OAUTH_ISSUER: 'https://id.example' })).toThrow(/GATEWAY_OAUTH_AUDIENCE[\s\S]*GATEWAY_OAUTH_JWKS_URL or GATEWAY_OAUTH_JWKS_FILE/);
    expect(() => loadConfig({ GATEWAY_OAUTH_AUDIENCE: 'a', GATEWAY_OAUTH_JWKS_URL: 'https://id.example/jwks' })).toThrow(/GATEWAY_OAUTH_ISSUER/);
    expect(() => loadConfig({ GATEWAY_OAUTH_ACCOUNT_CLAIM: 'tenant' })).toThrow(ConfigError);
    expect(() => loadConfig({ GATEWAY_OAUTH_CLOCK_TOLERANCE_S: '5' })).toThrow(/GATEWAY_OAUTH_ISSUER/);
  });
  it('when both JWKS sources are given, then start-up is refused', () => {
    expect(() => loadConfig({ ...complete, GATEWAY_OAUTH_JWKS_FILE: 'jwks.json' })).toThrow(/set only one/);
  });
  it('when the tolerance is outside 0 to 300 seconds, then start-up is refused', () => {
    for (const value of ['-1', '301', 'soon']) expect(() => loadConfig({ ...complete, GATEWAY_OAUTH_CLOCK_TOLERANCE_S: value })).toThrow(/GATEWAY_OAUTH_CLOCK_TOLERANCE_S/);
  });
});

describe('session settings', () => {
  it('when nothing is set, then a run lease is 30 s and readers poll every 250 ms', () => {
    expect(loadConfig({}).sessions).toEqual({ runLeaseMs: 30_000, pollMs: 250 });
  });
  it('when a value is out of range, then start-up is refused naming it', () => {
    for (const value of ['999', '3600001', 'soon']) expect(() => loadConfig({ GATEWAY_SESSION_RUN_LEASE_MS: value })).toThrow(/GATEWAY_SESSION_RUN_LEASE_MS/);
    for (const value of ['9', '10001']) expect(() => loadConfig({ GATEWAY_SESSION_POLL_MS: value })).toThrow(/GATEWAY_SESSION_POLL_MS/);
    expect(loadConfig({ GATEWAY_SESSION_RUN_LEASE_MS: '1500', GATEWAY_SESSION_POLL_MS: '50' }).sessions).toEqual({ runLeaseMs: 1500, pollMs: 50 });
  });
});

describe('actor idle time (embedded host)', () => {
  it('when nothing is set, then an idle activation is dropped after 10 minutes, the host default', () => {
    expect(loadConfig({}).actorIdleMs).toBe(DEFAULT_ACTOR_IDLE_MS);
    expect(DEFAULT_ACTOR_IDLE_MS).toBe(600_000);
  });
  it('when a value is out of range, then start-up is refused naming it', () => {
    for (const value of ['0', '86400001', 'soon']) expect(() => loadConfig({ GATEWAY_ACTOR_IDLE_MS: value })).toThrow(/GATEWAY_ACTOR_IDLE_MS/);
    expect(loadConfig({ GATEWAY_ACTOR_IDLE_MS: '5000' }).actorIdleMs).toBe(5000);
  });
});
