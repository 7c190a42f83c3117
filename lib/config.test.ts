import { ConfigError, DRAIN_HARD_EXIT_AFTER_MS, gatewayStopGraceMs, HOLD_TTL_MARGIN_MS, IMAGE_UNKNOWN_DEADLINE_MS, loadConfig, TEST_HOLD_TTL_MARGIN_MS, traceExportOf } from './config';
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

describe('a supervisor\'s stop grace for a gateway', () => {
  it('when the drain timeout is set or not, then the grace is that drain (default 25 s) plus the gateway\'s hard-exit margin and more; a bad value is refused', () => {
    expect(gatewayStopGraceMs({})).toBeGreaterThan(loadConfig({}).drainTimeoutMs + DRAIN_HARD_EXIT_AFTER_MS);
    expect(gatewayStopGraceMs({ GATEWAY_DRAIN_TIMEOUT_MS: '40000' })).toBeGreaterThan(40_000 + DRAIN_HARD_EXIT_AFTER_MS);
    expect(() => gatewayStopGraceMs({ GATEWAY_DRAIN_TIMEOUT_MS: 'soon' })).toThrow(/GATEWAY_DRAIN_TIMEOUT_MS/);
  });
});

describe('actor call timeout (Dapr)', () => {
  it('when nothing is set, then an actor call waits at most 15 s, past the resiliency policy\'s 5 × 1 s retries', () => {
    expect(loadConfig({}).dapr.actorCallTimeoutMs).toBe(15_000);
  });
  it('when set, then it is used; when out of range, then start-up is refused naming it', () => {
    expect(loadConfig({ GATEWAY_ACTOR_CALL_TIMEOUT_MS: '3000' }).dapr.actorCallTimeoutMs).toBe(3000);
    for (const value of ['0', '99', '600001', 'soon']) expect(() => loadConfig({ GATEWAY_ACTOR_CALL_TIMEOUT_MS: value })).toThrow(/GATEWAY_ACTOR_CALL_TIMEOUT_MS/);
  });
});

describe('fault points (test only)', () => {
  it('when fault points are set outside test mode, then start-up is refused naming GATEWAY_TEST_MODE', () => {
    expect(() => loadConfig({ GATEWAY_FAULT_POINTS: 'image-after-hold' })).toThrow(/GATEWAY_TEST_MODE/);
    expect(() => loadConfig({ GATEWAY_FAULT_POINTS: 'image-after-hold', GATEWAY_TEST_MODE: 'false' })).toThrow(ConfigError);
  });
  it('when an unknown fault point is named, then start-up is refused naming it', () => {
    expect(() => loadConfig({ GATEWAY_FAULT_POINTS: 'image-after-hold,nowhere', GATEWAY_TEST_MODE: 'true' })).toThrow(/nowhere/);
  });
  it('when known fault points are named in test mode, then they are accepted', () => {
    expect(loadConfig({ GATEWAY_FAULT_POINTS: 'image-after-hold, reminder-before-commit:once', GATEWAY_TEST_MODE: 'true' }).faultPoints).toEqual(['image-after-hold', 'reminder-before-commit:once']);
    expect(() => loadConfig({ GATEWAY_FAULT_POINTS: 'image-after-hold:twice', GATEWAY_TEST_MODE: 'true' })).toThrow(/image-after-hold:twice/);
    expect(loadConfig({}).faultPoints).toEqual([]);
  });
});

describe('hold settings', () => {
  it('when nothing is set, then a hold lives 60 s past the provider timeout and progress is recorded every 256 tokens or 2 s', () => {
    const config = loadConfig({});
    expect(config.holdTtlMs).toBe(config.providerTimeoutMs + 60_000);
    expect(config.holdProgress).toEqual({ everyTokens: 256, everyMs: 2000 });
  });
  it('when the hold ttl does not outlast the provider timeout by the margin, then start-up is refused naming both settings', () => {
    for (const ttl of ['1000', '120000', String(120_000 + HOLD_TTL_MARGIN_MS - 1)]) {
      expect(() => loadConfig({ GATEWAY_HOLD_TTL_MS: ttl })).toThrow(/GATEWAY_HOLD_TTL_MS[\s\S]*GATEWAY_PROVIDER_TIMEOUT_MS/);
    }
    expect(() => loadConfig({ GATEWAY_PROVIDER_TIMEOUT_MS: '600000' , GATEWAY_HOLD_TTL_MS: '300000' })).toThrow(ConfigError);
    expect(loadConfig({ GATEWAY_HOLD_TTL_MS: String(120_000 + HOLD_TTL_MARGIN_MS) }).holdTtlMs).toBe(130_000);
  });
  it('when in test mode, then a short margin is accepted so that expiry can be watched in seconds', () => {
    expect(loadConfig({ GATEWAY_TEST_MODE: 'true', GATEWAY_PROVIDER_TIMEOUT_MS: '1500', GATEWAY_HOLD_TTL_MS: String(1500 + TEST_HOLD_TTL_MARGIN_MS) }).holdTtlMs).toBe(2500);
    expect(() => loadConfig({ GATEWAY_TEST_MODE: 'true', GATEWAY_PROVIDER_TIMEOUT_MS: '1500', GATEWAY_HOLD_TTL_MS: '2000' })).toThrow(/GATEWAY_HOLD_TTL_MS/);
  });
  it('when a progress interval is out of range, then start-up is refused naming it', () => {
    expect(() => loadConfig({ GATEWAY_HOLD_PROGRESS_TOKENS: '0' })).toThrow(/GATEWAY_HOLD_PROGRESS_TOKENS/);
    expect(() => loadConfig({ GATEWAY_HOLD_PROGRESS_MS: '99' })).toThrow(/GATEWAY_HOLD_PROGRESS_MS/);
    expect(loadConfig({ GATEWAY_HOLD_PROGRESS_TOKENS: '20', GATEWAY_HOLD_PROGRESS_MS: '500' }).holdProgress).toEqual({ everyTokens: 20, everyMs: 500 });
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

describe('funds lease settings', () => {
  it('when nothing is set, then leases are on with either host', () => {
    expect(loadConfig({}).fundsLease).toEqual({ enabled: true, idleMs: 5000, maxAmount: 5_000_000_000 });
    expect(loadConfig({ GATEWAY_ACTOR_HOST: 'dapr' }).fundsLease.enabled).toBe(true);
  });
  it('when set, then it wins over the default; a bad value refuses start-up naming it', () => {
    expect(loadConfig({ GATEWAY_ACTOR_HOST: 'dapr', GATEWAY_FUNDS_LEASE: 'off' }).fundsLease.enabled).toBe(false);
    expect(loadConfig({ GATEWAY_FUNDS_LEASE: 'off' }).fundsLease.enabled).toBe(false);
    expect(loadConfig({ GATEWAY_FUNDS_LEASE: 'on', GATEWAY_FUNDS_LEASE_IDLE_MS: '250', GATEWAY_FUNDS_LEASE_MAX: '1000' }).fundsLease).toEqual({ enabled: true, idleMs: 250, maxAmount: 1000 });
    expect(() => loadConfig({ GATEWAY_FUNDS_LEASE: 'yes' })).toThrow(/GATEWAY_FUNDS_LEASE/);
    expect(() => loadConfig({ GATEWAY_FUNDS_LEASE_IDLE_MS: '99' })).toThrow(/GATEWAY_FUNDS_LEASE_IDLE_MS/);
    expect(() => loadConfig({ GATEWAY_FUNDS_LEASE_MAX: '0' })).toThrow(/GATEWAY_FUNDS_LEASE_MAX/);
  });
});

describe('API key cache setting', () => {
  it('when nothing is set, then an API key lookup is reused for at most one second', () => {
    expect(loadConfig({}).apiKeyCacheMs).toBe(1000);
  });
  it('when it is set within 0 to 1000 ms, then it is used', () => {
    expect(loadConfig({ GATEWAY_API_KEY_CACHE_MS: '0' }).apiKeyCacheMs).toBe(0);
    expect(loadConfig({ GATEWAY_API_KEY_CACHE_MS: '250' }).apiKeyCacheMs).toBe(250);
  });
  it('when it is longer than one second, then start-up is refused saying why', () => {
    expect(() => loadConfig({ GATEWAY_API_KEY_CACHE_MS: '1001' })).toThrow(/GATEWAY_API_KEY_CACHE_MS: 1001 ms is longer than 1000 ms; a revoked API key must stop working within 1000 ms/);
    expect(() => loadConfig({ GATEWAY_API_KEY_CACHE_MS: '30000' })).toThrow(ConfigError);
    expect(() => loadConfig({ GATEWAY_API_KEY_CACHE_MS: '-1' })).toThrow(/GATEWAY_API_KEY_CACHE_MS/);
  });
});

describe('numbers in the environment', () => {
  it('when a number is empty or blank (`PORT=` in an env file), then start-up is refused naming it, never read as 0', () => {
    for (const [name, value] of [['PORT', ''], ['GATEWAY_DRAIN_TIMEOUT_MS', ''], ['GATEWAY_API_KEY_CACHE_MS', '  '], ['GATEWAY_EVENT_LINGER_MS', '']]) {
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: must be a whole number`));
    }
    expect(() => gatewayStopGraceMs({ GATEWAY_DRAIN_TIMEOUT_MS: '' })).toThrow(/GATEWAY_DRAIN_TIMEOUT_MS/);
  });
  it('when a number is written otherwise than in decimal digits, then start-up is refused; digits with spaces around are read', () => {
    for (const value of ['8e3', '0x1f90', '80.5', '80 80']) expect(() => loadConfig({ PORT: value })).toThrow(/PORT/);
    expect(loadConfig({ PORT: ' 8081 ' }).port).toBe(8081);
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
  });
});

describe('trace export (the OpenTelemetry SDK\'s variables)', () => {
  it('when an OTLP endpoint is named, then spans go to its /v1/traces (the traces endpoint as it is), unless the SDK or the exporter is switched off', () => {
    expect(traceExportOf({})).toBeUndefined();
    expect(traceExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeUndefined();
    expect(traceExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({ url: 'http://127.0.0.1:4318/v1/traces' });
    expect(traceExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example/otlp/' })).toEqual({ url: 'https://collector.example/otlp/v1/traces' });
    expect(traceExportOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/custom', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other:4318' })).toEqual({ url: 'http://127.0.0.1:4318/custom' });
    expect(traceExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).toEqual({ url: 'http://x:4318/v1/traces' });
    expect(traceExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(traceExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
  });

  it.each(['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'])('when %s is not an absolute http(s) URL, then start-up is refused naming it', (name) => {
    for (const value of ['notaurl', 'localhost:4318', '127.0.0.1:4318', 'grpc://collector:4317', 'http://']) {
      expect(() => traceExportOf({ [name]: value })).toThrow(ConfigError);
      expect(() => traceExportOf({ [name]: value })).toThrow(new RegExp(`${name}: must be an absolute http or https URL`));
    }
  });

  it.each(['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'])('when %s asks for another protocol than http/protobuf, then start-up is refused naming it', (name) => {
    for (const value of ['grpc', 'http/json', 'HTTP/PROTOBUF']) {
      expect(() => traceExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', [name]: value })).toThrow(new RegExp(`${name}: must be http/protobuf`));
    }
  });

  it('when export is switched off, then a value nothing would use stops nothing', () => {
    expect(traceExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'notaurl', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(traceExportOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBeUndefined();
  });
});
