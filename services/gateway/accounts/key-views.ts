// What the operator's answers show of keys and accounts, and what the request path reads of a
// key (its projection): built from the Account actor's entries, never with a key or its hash.

import type { AccountStatus, ApiKeyEntry } from '../../../actors/account/AccountInterface';
import type { Limits } from '../../../lib/limits';
import type { ApiKeyScope } from '../auth/scopes';
import type { Account, ApiKeyRecord } from './store';

export type KeyState = 'active' | 'expiring' | 'revoked' | 'expired';
/** What a call with the key gets now: its own state, or `account_suspended` while its account is suspended and the key itself works. */
export type EffectiveKeyState = KeyState | 'account_suspended';

/** A key as lists show it: never the key, its hash only inside the actor. */
export interface KeyView {
  apiKeyId: string;
  prefix: string;
  name: string | null;
  scopes: string[];
  state: KeyState;
  effectiveState: EffectiveKeyState;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  rotatedFrom: string | null;
  rotatedTo: string | null;
  limits: Limits;
}

export interface CreatedKey {
  apiKeyId: string;
  apiKey: string;
  accountId: string;
  scopes: string[];
  name: string | null;
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
}

export interface AccountSummary {
  accountId: string;
  name: string;
  createdAt: string;
  suspendedAt: string | null;
  limits: Limits;
}

export const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

export function summary(account: Account): AccountSummary {
  return { accountId: account.accountId, name: account.name, createdAt: account.createdAt, suspendedAt: iso(account.suspendedAt), limits: account.limits ?? {} };
}

export function stateOf(entry: ApiKeyEntry, now: number): KeyState {
  if (entry.revokedAt !== null && entry.revokedAt <= now) return 'revoked';
  if (entry.expiresAt !== null && entry.expiresAt <= now) return 'expired';
  return entry.revokedAt !== null || entry.expiresAt !== null ? 'expiring' : 'active';
}

/**
 * A key as lists show it; `lastUsed` from the key-value store (epoch ms, or null); `account` the
 * account's record as the request path reads it, whose suspension refuses every key of it.
 */
export function keyView(entry: ApiKeyEntry, lastUsed: number | null, now: number, account: Pick<Account, 'suspendedAt'>): KeyView {
  const state = stateOf(entry, now);
  const works = state === 'active' || state === 'expiring';
  return {
    apiKeyId: entry.apiKeyId,
    prefix: entry.prefix,
    name: entry.name,
    scopes: entry.scopes,
    state,
    effectiveState: works && account.suspendedAt != null ? 'account_suspended' : state,
    createdAt: iso(entry.createdAt)!,
    lastUsedAt: iso(lastUsed),
    expiresAt: iso(entry.expiresAt),
    revokedAt: iso(entry.revokedAt),
    rotatedFrom: entry.rotatedFrom,
    rotatedTo: entry.rotatedTo,
    limits: entry.limits ?? {},
  };
}

/** What the request path reads of an account: its record, with the suspension and limits of its actor's status. */
export function accountProjection(account: Account, status: AccountStatus): Account {
  const { suspendedAt: _suspendedAt, limits: _limits, ...rest } = account;
  return { ...rest, suspendedAt: status.suspendedAt, ...(status.limits ? { limits: status.limits } : {}) };
}

/** What the request path reads of a key: the actor's entry, without its hash. */
export function projection(accountId: string, entry: ApiKeyEntry, now: number): ApiKeyRecord {
  return {
    apiKeyId: entry.apiKeyId,
    accountId,
    createdAt: new Date(entry.createdAt).toISOString(),
    scopes: entry.scopes as ApiKeyScope[],
    name: entry.name,
    expiresAt: entry.expiresAt,
    // A revocation already in force is refused whatever the reading instance's clock says.
    revokedAt: entry.revokedAt !== null && entry.revokedAt <= now ? 0 : entry.revokedAt,
    listed: true,
    ...(entry.spendKeyId !== undefined ? { spendKeyId: entry.spendKeyId } : {}),
    ...(entry.limits && Object.keys(entry.limits).length > 0 ? { limits: entry.limits } : {}),
  };
}

export function created(accountId: string, apiKey: string, entry: ApiKeyEntry): CreatedKey {
  return {
    apiKeyId: entry.apiKeyId, apiKey, accountId, scopes: entry.scopes, name: entry.name,
    prefix: entry.prefix, createdAt: iso(entry.createdAt)!, expiresAt: iso(entry.expiresAt),
  };
}
