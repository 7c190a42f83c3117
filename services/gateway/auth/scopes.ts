// The scopes an operator can grant an API key. Each gated capability (compatibility routes,
// Agent Run, signing, evidence, media) checks its own scope, so a key gets only what it was
// granted; a key made without scopes reaches the plain pool-3 routes only.

import { GatewayError } from '../../../lib/errors';

export const API_KEY_SCOPES = ['compat', 'agent_run', 'signing', 'evidence', 'media'] as const;

export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

const KNOWN: ReadonlySet<string> = new Set(API_KEY_SCOPES);

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return KNOWN.has(value);
}

/** The requested scopes, refused whole (400 invalid_scope) when one is unknown or repeated. */
export function parseApiKeyScopes(values: readonly string[]): ApiKeyScope[] {
  const seen = new Set<ApiKeyScope>();
  for (const value of values) {
    if (!isApiKeyScope(value)) {
      throw new GatewayError('invalid_scope', `unknown scope "${value}"; known scopes: ${API_KEY_SCOPES.join(', ')}`, { param: 'scopes' });
    }
    // A repeat is refused rather than folded: it usually means a typo in a script that grants keys.
    if (seen.has(value)) throw new GatewayError('invalid_scope', `scope "${value}" is given more than once`, { param: 'scopes' });
    seen.add(value);
  }
  return [...seen];
}
