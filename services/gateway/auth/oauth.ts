// OAuth access tokens of the member/business family: JWTs signed by one configured issuer,
// verified against its published keys (JWKS). Refusals are short and never echo the token;
// a key set that cannot be fetched is the issuer's outage (503), not the caller's fault (401).

import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { ConfigError, type OAuthConfig } from '../../../lib/config';
import { GatewayError } from '../../../lib/errors';

export interface OAuthPrincipal {
  subject: string;
  /** The gateway account the token acts for, from the configured account claim. */
  accountId: string;
  scopes: string[];
  /** The token's `jti`, when it has one. */
  tokenId?: string;
}

/** Asymmetric only: a shared-secret (HS*) or unsigned (`none`) token could be forged by anyone holding the JWKS. */
export const OAUTH_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

export interface JwksFetchOptions {
  /** How long one JWKS fetch may take. */
  timeoutMs?: number;
  /** The least time between refetches caused by an unknown key id, so bogus kids cannot flood the issuer. */
  cooldownMs?: number;
}

/** The longest account id a token may name; longer is malformed, never a lookup. */
const MAX_ACCOUNT_ID_LENGTH = 200;

class KeySetUnavailable extends Error {}

/** Lookup failures that describe the token (its key id) pass through; any other is the key set's. */
function guarded(getKey: JWTVerifyGetKey): JWTVerifyGetKey {
  return async function resolveKey(header, token) {
    try {
      return await getKey(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      throw new KeySetUnavailable('the JWKS could not be fetched or used', { cause: error });
    }
  };
}

function localKeySet(file: string): JWTVerifyGetKey {
  let jwks: JSONWebKeySet;
  try {
    jwks = JSON.parse(readFileSync(file, 'utf8')) as JSONWebKeySet;
    const keySet = createLocalJWKSet(jwks);
    if (jwks.keys.some((key) => 'd' in key)) throw new Error('it holds private key material; publish public keys only');
    return keySet;
  } catch (error) {
    throw new ConfigError(`invalid configuration:\n  GATEWAY_OAUTH_JWKS_FILE: ${file}: ${(error as Error).message}`);
  }
}

function refused(reason: string): GatewayError {
  return new GatewayError('unauthorized', reason);
}

/** Jose's failure as a short reason; claim names come from jose's fixed set or our config, never the token. */
function reasonOf(error: InstanceType<typeof errors.JOSEError>): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') return `the token lacks the "${error.claim}" claim`;
    if (error.claim === 'nbf') return 'the token is not yet valid';
    if (error.claim === 'iss') return 'the token is from another issuer';
    if (error.claim === 'aud') return 'the token is for another audience';
    return `the token's "${error.claim}" claim is invalid`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'the token is signed with an algorithm that is not accepted';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (error instanceof errors.JWKSNoMatchingKey) return 'the token is signed with an unknown key';
  if (error instanceof errors.JWKSMultipleMatchingKeys) return 'the token names no key id and several keys fit';
  return 'the token is malformed';
}

function scopesOf(payload: JWTPayload): string[] {
  const { scope, scp } = payload;
  if (scope !== undefined && typeof scope !== 'string') throw refused('the token\'s "scope" claim is not a string');
  if (scp !== undefined && !(Array.isArray(scp) && scp.every((s) => typeof s === 'string'))) throw refused('the token\'s "scp" claim is not a list of strings');
  const all = [...(scope?.split(' ') ?? []), ...((scp as string[] | undefined) ?? [])];
  return [...new Set(all.filter((s) => s !== ''))];
}

export class OAuthVerifier {
  private readonly getKey: JWTVerifyGetKey;

  constructor(private readonly config: OAuthConfig, fetch: JwksFetchOptions = {}) {
    if ((config.jwksUrl === undefined) === (config.jwksFile === undefined)) {
      throw new ConfigError('invalid configuration:\n  OAuth needs exactly one JWKS source (GATEWAY_OAUTH_JWKS_URL or GATEWAY_OAUTH_JWKS_FILE)');
    }
    this.getKey = guarded(config.jwksUrl !== undefined
      ? createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: fetch.timeoutMs ?? 5_000, cooldownDuration: fetch.cooldownMs ?? 30_000 })
      : localKeySet(config.jwksFile!));
  }

  async verify(token: string): Promise<OAuthPrincipal> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.getKey, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: [...OAUTH_ALGORITHMS],
        clockTolerance: this.config.clockToleranceS,
        requiredClaims: ['exp', 'sub', this.config.accountClaim],
      }));
    } catch (error) {
      if (error instanceof KeySetUnavailable) {
        const unavailable = new GatewayError('oauth_unavailable', 'the OAuth issuer\'s keys cannot be fetched right now; try again later');
        unavailable.cause = error.cause;
        throw unavailable;
      }
      if (error instanceof errors.JOSEError) throw refused(reasonOf(error));
      throw error;
    }
    return this.principalOf(payload);
  }

  private principalOf(payload: JWTPayload): OAuthPrincipal {
    const claim = this.config.accountClaim;
    const subject = payload.sub;
    if (typeof subject !== 'string' || subject === '') throw refused('the token\'s "sub" claim is invalid');
    const accountId = payload[claim];
    if (typeof accountId !== 'string' || accountId === '' || accountId.length > MAX_ACCOUNT_ID_LENGTH) {
      throw refused(`the token's "${claim}" claim is not an account id`);
    }
    const scopes = scopesOf(payload);
    return typeof payload.jti === 'string' ? { subject, accountId, scopes, tokenId: payload.jti } : { subject, accountId, scopes };
  }
}
