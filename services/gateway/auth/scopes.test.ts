import { GatewayError } from '../../../lib/errors';
import { API_KEY_SCOPES, isApiKeyScope, parseApiKeyScopes } from './scopes';

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('API key scopes', () => {
  it('when the known scopes are listed, then they are the five gated capabilities', () => {
    expect(API_KEY_SCOPES).toEqual(['compat', 'agent_run', 'signing', 'evidence', 'media']);
    expect(API_KEY_SCOPES.every(isApiKeyScope)).toBe(true);
    expect(isApiKeyScope('admin')).toBe(false);
  });

  it('when known scopes are asked for, then they come back in the order given; none is fine', () => {
    expect(parseApiKeyScopes(['media', 'compat'])).toEqual(['media', 'compat']);
    expect(parseApiKeyScopes([])).toEqual([]);
  });

  it('when a scope is unknown, then 400 invalid_scope naming it', () => {
    const error = refusal(() => parseApiKeyScopes(['compat', 'everything']));
    expect({ code: error.code, status: error.status, param: error.param }).toEqual({ code: 'invalid_scope', status: 400, param: 'scopes' });
    expect(error.message).toContain('"everything"');
  });

  it('when a scope is repeated, then 400 invalid_scope naming it', () => {
    const error = refusal(() => parseApiKeyScopes(['media', 'signing', 'media']));
    expect(error.code).toBe('invalid_scope');
    expect(error.message).toContain('"media"');
  });

  it('when a scope differs only in case, then it is unknown', () => {
    expect(refusal(() => parseApiKeyScopes(['Compat'])).code).toBe('invalid_scope');
  });
});
