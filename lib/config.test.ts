import { ConfigError, IMAGE_UNKNOWN_DEADLINE_MS, loadConfig } from './config';

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
