// Credentials (docs/auth.md). Two families that never stand in for each other: API keys (open
// pool-3 and compatibility routes; the Anthropic wire also takes x-api-key) and OAuth access
// tokens (member/business routes). The family is read from the credential's shape and checked
// against the route before any lookup, so a credential of the wrong family is never probed.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { GatewayError } from '../../../lib/errors';
import { operatorId } from '../accounts/audit';
import type { Account, AccountStore } from '../accounts/store';
import type { Limits } from '../../../lib/limits';
import type { OAuthVerifier } from '../auth/oauth';

export type CredentialFamily = 'api_key' | 'oauth';

export interface Caller {
  family: CredentialFamily;
  accountId: string;
  /** Set for the API-key family. */
  apiKeyId?: string;
  /** Set for the API-key family: the key whose spend the call's charge counts as (the first key of its rotation chain). */
  spendKeyId?: string;
  /** The token's subject, set for the OAuth family. */
  subject?: string;
  scopes: ReadonlySet<string>;
  /** The key's and the account's limits (lib/limits.ts), as the projection read with the credential says. */
  limits?: { account?: Limits; key?: Limits };
}

declare module 'express-serve-static-core' {
  interface Request {
    caller: Caller;
    /**
     * Checks the request's credential again as a new request would (revoked, expired, past its
     * rotation grace, account suspended: refused), through the same bounded-staleness lookup,
     * and takes the caller as it reads now (its limits too). For a request whose body is received
     * after its headers were authenticated (json-body.ts), and answers that outlive the moment
     * they were admitted (an event stream).
     */
    recheckCredential?: () => Promise<void>;
    /** On operator routes: the operator credential's id (never the credential). */
    operatorId: string;
  }
}

export interface CredentialDeps {
  accounts: AccountStore;
  /** Undefined when OAuth is not configured: OAuth routes then answer 503 oauth_disabled. */
  oauth?: OAuthVerifier;
}

export interface CredentialOptions {
  accept: readonly CredentialFamily[];
  /** The Anthropic wire's own header for API keys. */
  allowXApiKey?: boolean;
  /**
   * Also take the credential from the `access_token` field of a form body (read before, by
   * formBody; RFC 6750's form-encoded body parameter), where no Authorization header is sent:
   * for a download a browser starts by submitting a form, which can carry no header. The field
   * is removed from the body once read.
   */
  formToken?: boolean;
}

/** The form field that carries the credential on routes with `formToken`. */
export const FORM_TOKEN_FIELD = 'access_token';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

const ROUTE_FAMILY: Record<CredentialFamily, string> = {
  api_key: 'open pool-3 and compatibility routes take an API key',
  oauth: 'member routes take an OAuth access token',
};

function bearer(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

/**
 * Node keeps only the first of repeated Authorization headers in req.headers (and joins repeated
 * x-api-key values): the credential must be read from every copy, or a request naming two
 * credentials would be served under whichever came first.
 */
function headerCopies(req: Request, name: string): string[] {
  // From the raw list (names as sent, each copy once): req.headersDistinct would build arrays of
  // every header of every request, on the chat's path, for the one or two names asked here.
  const copies: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i].length === name.length && raw[i].toLowerCase() === name) copies.push(raw[i + 1]);
  return copies;
}

/** 400 ambiguous_credential, before any lookup, when the request names more than one credential. */
function refuseAmbiguous(req: Request, allowXApiKey: boolean): GatewayError | undefined {
  const authorizations = headerCopies(req, 'authorization');
  const xApiKeys = allowXApiKey ? headerCopies(req, 'x-api-key').filter((value) => value.trim() !== '') : [];
  const bearerGiven = authorizations.length === 1 && authorizations[0].trim() !== '';
  if (authorizations.length > 1) return new GatewayError('ambiguous_credential', 'more than one Authorization header: send exactly one credential', { param: 'Authorization' });
  if (xApiKeys.length > 1) return new GatewayError('ambiguous_credential', 'more than one x-api-key header: send exactly one credential', { param: 'x-api-key' });
  // Both headers are fine when they carry the same key (some clients send both).
  if (bearerGiven && xApiKeys.length === 1 && bearer(req) !== xApiKeys[0].trim()) {
    return new GatewayError('ambiguous_credential', 'Authorization and x-api-key name different credentials: send one, or the same key in both', { param: 'x-api-key' });
  }
  return undefined;
}

function presented(req: Request, allowXApiKey: boolean): string | undefined {
  const xApiKey = allowXApiKey ? req.headers['x-api-key'] : undefined;
  return bearer(req) ?? (typeof xApiKey === 'string' && xApiKey.trim() !== '' ? xApiKey.trim() : undefined);
}

/**
 * The credential of a form body's `access_token` field, taken out of the body; an error when it is
 * given twice, or beside an Authorization header (two credentials), or empty.
 */
function formCredential(req: Request): string | GatewayError | undefined {
  const fields = req.body as Record<string, unknown> | undefined;
  if (fields === undefined || !(FORM_TOKEN_FIELD in fields)) return undefined;
  const value = fields[FORM_TOKEN_FIELD];
  delete fields[FORM_TOKEN_FIELD];
  if (Array.isArray(value)) return new GatewayError('ambiguous_credential', `more than one ${FORM_TOKEN_FIELD} field: send exactly one credential`, { param: FORM_TOKEN_FIELD });
  if (headerCopies(req, 'authorization').length > 0) {
    return new GatewayError('ambiguous_credential', `both an Authorization header and an ${FORM_TOKEN_FIELD} field: send one credential`, { param: FORM_TOKEN_FIELD });
  }
  if (typeof value !== 'string' || value.trim() === '') return new GatewayError('unauthorized', `the ${FORM_TOKEN_FIELD} field is empty`);
  return value.trim();
}

function familyOf(credential: string): CredentialFamily {
  return JWT_SHAPE.test(credential) ? 'oauth' : 'api_key';
}

function missing(options: CredentialOptions): GatewayError {
  const wanted = options.accept.map((family) => (family === 'api_key' ? 'an API key' : 'an OAuth access token')).join(' or ');
  const where = options.allowXApiKey ? 'Authorization: Bearer <credential>, or x-api-key: <key>' : 'Authorization: Bearer <credential>';
  return new GatewayError('unauthorized', `${wanted} is required (${where})`);
}

function mismatch(family: CredentialFamily, accept: readonly CredentialFamily[]): GatewayError {
  const given = family === 'oauth' ? 'OAuth tokens are' : 'API keys are';
  return new GatewayError('credential_family_mismatch', `${given} not accepted here: ${accept.map((f) => ROUTE_FAMILY[f]).join('; ')}`);
}

async function apiKeyCaller(accounts: AccountStore, apiKey: string, recheck = false): Promise<Caller> {
  const record = await accounts.findApiKey(apiKey);
  if (!record) throw new GatewayError('unauthorized', 'unknown API key');
  const now = Date.now();
  if (record.revokedAt != null && record.revokedAt <= now) throw new GatewayError('unauthorized', 'this API key has been revoked');
  if (record.expiresAt != null && record.expiresAt <= now) throw new GatewayError('unauthorized', 'this API key has expired');
  const account = await refuseSuspended(accounts, record.accountId);
  // A re-check is not a use: the key's last use stays its last request.
  if (!recheck) {
    if (record.listed !== true) accounts.unlisted?.(apiKey, record);
    accounts.noteUse(record.apiKeyId);
  }
  const limits = limitsOf(account?.limits, record.limits);
  return { family: 'api_key', accountId: record.accountId, apiKeyId: record.apiKeyId, spendKeyId: record.spendKeyId ?? record.apiKeyId, scopes: new Set(record.scopes), ...(limits ? { limits } : {}) };
}

function limitsOf(account: Limits | undefined, key: Limits | undefined): Caller['limits'] {
  const some = (limits: Limits | undefined) => limits !== undefined && Object.keys(limits).length > 0;
  if (!some(account) && !some(key)) return undefined;
  return { ...(some(account) ? { account } : {}), ...(some(key) ? { key } : {}) };
}

/** A suspended account's calls are refused, whatever the credential (its open holds end as they would). */
async function refuseSuspended(accounts: AccountStore, accountId: string): Promise<Account | undefined> {
  const account = await accounts.findAccount(accountId);
  if (account?.suspendedAt != null) throw new GatewayError('account_suspended', 'this account is suspended; ask the operator');
  return account;
}

async function oauthCaller(deps: CredentialDeps, token: string, alsoApiKeys: boolean): Promise<Caller> {
  if (!deps.oauth) {
    // A route that takes API keys too is working: a token it cannot verify is no credential.
    if (alsoApiKeys) throw new GatewayError('unauthorized', 'OAuth is not configured on this gateway; use an API key');
    throw new GatewayError('oauth_disabled', 'OAuth is not configured on this gateway');
  }
  const principal = await deps.oauth.verify(token);
  // A token for an account this gateway does not hold is as good as an unknown credential.
  const account = await refuseSuspended(deps.accounts, principal.accountId);
  if (!account) throw new GatewayError('unauthorized', 'the token names no account of this gateway');
  const limits = limitsOf(account?.limits, undefined);
  return { family: 'oauth', accountId: principal.accountId, subject: principal.subject, scopes: new Set(principal.scopes), ...(limits ? { limits } : {}) };
}

export function credentialAuth(deps: CredentialDeps, options: CredentialOptions): RequestHandler {
  const accept = options.accept;
  if (accept.length === 0) throw new TypeError('credentialAuth: a route must accept at least one credential family');
  return async function authenticateCredential(req: Request, _res: Response, next: NextFunction): Promise<void> {
    const ambiguous = refuseAmbiguous(req, options.allowXApiKey === true);
    if (ambiguous) return next(ambiguous);
    const inForm = options.formToken === true ? formCredential(req) : undefined;
    if (inForm instanceof GatewayError) return next(inForm);
    const credential = inForm ?? presented(req, options.allowXApiKey === true);
    if (!credential) return next(missing(options));
    const family = familyOf(credential);
    if (!accept.includes(family)) return next(mismatch(family, accept));
    const resolve = (recheck: boolean) => (family === 'api_key' ? apiKeyCaller(deps.accounts, credential, recheck) : oauthCaller(deps, credential, accept.includes('api_key')));
    try {
      req.caller = await resolve(false);
      req.recheckCredential = async () => {
        req.caller = await resolve(true);
      };
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * The (account, API key) pair of a caller on an API-key-only route, for what is scoped per key
 * (image tasks, idempotency). Only that pair is returned, so nothing else reaches actor state.
 */
export function apiKeyOwner(caller: Caller): { accountId: string; apiKeyId: string } {
  if (caller.family !== 'api_key' || caller.apiKeyId === undefined) throw mismatch(caller.family, ['api_key']);
  return { accountId: caller.accountId, apiKeyId: caller.apiKeyId };
}

/** The open pool-3 routes' credential, as before OAuth existed. */
export function apiKeyAuth(accounts: AccountStore, options: { allowXApiKey?: boolean } = {}): RequestHandler {
  return credentialAuth({ accounts }, { accept: ['api_key'], allowXApiKey: options.allowXApiKey });
}

export function adminAuth(adminToken: string | undefined) {
  // Compared as SHA-256 digests: equal lengths whatever was sent, so the time taken tells
  // nothing, not even the token's length.
  const digest = (text: string) => createHash('sha256').update(text).digest();
  const expected = adminToken ? digest(adminToken) : undefined;
  const who = adminToken ? operatorId(adminToken) : '';
  return function authenticateAdmin(req: Request, _res: Response, next: NextFunction): void {
    if (!expected) return next(new GatewayError('admin_disabled', 'the operator API is off (GATEWAY_ADMIN_TOKEN is not set)'));
    const ambiguous = refuseAmbiguous(req, false);
    if (ambiguous) return next(ambiguous);
    const token = bearer(req);
    if (!token || !timingSafeEqual(digest(token), expected)) {
      return next(new GatewayError('unauthorized', 'operator token required (Authorization: Bearer $GATEWAY_ADMIN_TOKEN)'));
    }
    req.operatorId = who;
    next();
  };
}
