import { ERROR_STATUS, GatewayError, toGatewayError } from './errors';

describe('errors', () => {
  it('when a GatewayError is built, then its status comes from the code map', () => {
    expect(new GatewayError('insufficient_funds', 'x').status).toBe(402);
    expect(new GatewayError('idempotency_key_reused', 'x').status).toBe(409);
    expect(new GatewayError('payload_too_large', 'x').status).toBe(413);
  });
  it('when anything else is thrown, then it becomes internal_error without leaking its message', () => {
    const wrapped = toGatewayError(new Error('secret detail'));
    expect(wrapped.code).toBe('internal_error');
    expect(wrapped.message).not.toContain('secret');
  });
  it('when codes are listed, then every status is an HTTP error status', () => {
    for (const status of Object.values(ERROR_STATUS)) expect(status >= 400 && status < 600).toBe(true);
  });
});
