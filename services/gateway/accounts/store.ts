// Accounts and API keys. Keys are random, shown once, stored only as their SHA-256 hash
// (keys carry 256 bits of entropy, so a fast hash is the right one).

import { hash, randomBytes, randomUUID } from 'node:crypto';
import { API_KEY_CACHE_MAX_MS } from '../../../lib/config';
import type { ApiKeyScope } from '../auth/scopes';
import type { Limits } from '../../../lib/limits';
import { FreshCache } from './fresh-cache';

export interface Account {
  accountId: string;
  name: string;
  createdAt: string;
  /** Epoch ms since when the account is suspended (its calls refused 403); absent or null: not suspended. */
  suspendedAt?: number | null;
  /** The account's limits (lib/limits.ts); absent: none. */
  limits?: Limits;
}

/**
 * What the request path knows of a key: the projection of its Account actor's entry, under
 * `apikey:<sha256>`. Times are epoch ms of the actor's clock.
 */
export interface ApiKeyRecord {
  apiKeyId: string;
  accountId: string;
  createdAt: string;
  scopes: ApiKeyScope[];
  name?: string | null;
  /** Refused from then on; absent or null: never. */
  expiresAt?: number | null;
  revokedAt?: number | null;
  /** Recorded in its account's Account actor (listed, revocable by id). Keys made before keys were listed are recorded at their first use. */
  listed?: boolean;
  /** The key whose spend this key's charges count as (a rotated key: the first of its chain); absent: itself. */
  spendKeyId?: string;
  /** The key's own limits; absent: none. */
  limits?: Limits;
}

/** Keys stored before scopes existed have none. */
type StoredApiKeyRecord = Omit<ApiKeyRecord, 'scopes'> & { scopes?: ApiKeyScope[] };

export const API_KEY_PREFIX = 'sk-payg-';

export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

export function newApiKey(): { apiKeyId: string; apiKey: string } {
  return { apiKeyId: `key_${randomBytes(9).toString('base64url')}`, apiKey: API_KEY_PREFIX + randomBytes(32).toString('base64url') };
}

export function newAccountId(): string {
  return `acct_${randomUUID().replace(/-/g, '')}`;
}

/** Storage of accounts and key hashes: the local database embedded, the Dapr state store distributed. */
export interface KeyValueStore {
  get<T>(key: string): Promise<T | undefined>;
  put(key: string, value: unknown): Promise<void>;
}

/** Key-value store keys: the key's projection by hash, its account by id, its last use, an account. */
export const kvKey = {
  apiKey: (hash: string) => `apikey:${hash}`,
  apiKeyAccount: (apiKeyId: string) => `apikeyid:${apiKeyId}`,
  apiKeyUsed: (apiKeyId: string) => `apikey-used:${apiKeyId}`,
  account: (accountId: string) => `account:${accountId}`,
};

/** A key's last use is written at most this often per gateway instance. */
export const LAST_USED_EVERY_MS = 60_000;
/** The non-secret start of a key shown in lists: the type prefix and 4 characters of the secret part. */
export const shownPrefix = (apiKey: string) => apiKey.slice(0, API_KEY_PREFIX.length + 4);

export class AccountStore {
  private readonly keys: FreshCache<ApiKeyRecord>;
  private readonly accounts: FreshCache<Account>;
  /** Told of a key made before keys were listed, when it is used (wired to the operator's recordUnlisted). */
  unlisted?: (apiKey: string, record: ApiKeyRecord) => void;
  /** When this instance last wrote each key's last use. */
  private readonly usedWritten = new Map<string, number>();

  /**
   * `cacheMs`: how long a lookup (found or not) is reused, counted from when its store read
   * began, so no answer is older than that; 0 reads the store every time.
   */
  constructor(private readonly kv: KeyValueStore, cacheMs = API_KEY_CACHE_MAX_MS, private readonly now: () => number = Date.now) {
    if (!(cacheMs >= 0 && cacheMs <= API_KEY_CACHE_MAX_MS)) throw new RangeError(`API key cache of ${cacheMs} ms: at most ${API_KEY_CACHE_MAX_MS} ms (a revoked key must stop working within it)`);
    this.keys = new FreshCache(cacheMs, now);
    this.accounts = new FreshCache(cacheMs, now);
  }

  /** `register` runs before the account is stored (the ledger's index: an account never goes unreconciled). */
  async createAccount(name: string, register?: (accountId: string) => Promise<void>): Promise<Account> {
    const account: Account = { accountId: newAccountId(), name, createdAt: new Date(this.now()).toISOString() };
    await register?.(account.accountId);
    await this.putAccount(account);
    return account;
  }

  /** The account as stored now (operator reads). */
  getAccount(accountId: string): Promise<Account | undefined> {
    return this.kv.get<Account>(kvKey.account(accountId));
  }

  /** The account for the request path: reused for at most `cacheMs`. */
  findAccount(accountId: string): Promise<Account | undefined> {
    return this.accounts.get(accountId, () => this.getAccount(accountId));
  }

  async putAccount(account: Account): Promise<void> {
    await this.kv.put(kvKey.account(account.accountId), account);
    this.accounts.forget(account.accountId);
  }

  /**
   * A key stored in the key-value store only (unlisted): kept for tools and tests that need a key
   * without the actors; the operator API lists every key it makes (services/gateway/accounts/operator.ts).
   */
  async createApiKey(accountId: string, scopes: readonly ApiKeyScope[] = []): Promise<{ apiKeyId: string; apiKey: string; scopes: ApiKeyScope[] }> {
    const key = newApiKey();
    const record: ApiKeyRecord = { apiKeyId: key.apiKeyId, accountId, createdAt: new Date(this.now()).toISOString(), scopes: [...scopes] };
    await this.putApiKey(hashApiKey(key.apiKey), record);
    return { ...key, scopes: record.scopes };
  }

  async putApiKey(hash: string, record: ApiKeyRecord): Promise<void> {
    await this.kv.put(kvKey.apiKey(hash), record);
    this.keys.forget(hash);
  }

  /** The account a key belongs to, by its id (the operator's routes name keys by id). */
  keyAccount(apiKeyId: string): Promise<{ accountId: string } | undefined> {
    return this.kv.get<{ accountId: string }>(kvKey.apiKeyAccount(apiKeyId));
  }

  putKeyAccount(apiKeyId: string, accountId: string): Promise<void> {
    return this.kv.put(kvKey.apiKeyAccount(apiKeyId), { accountId });
  }

  /** The key's record, or undefined for an unknown key. Both outcomes are reused for at most `cacheMs`. */
  findApiKey(apiKey: string): Promise<ApiKeyRecord | undefined> {
    const hash = hashApiKey(apiKey);
    return this.keys.get(hash, () => this.readApiKey(hash));
  }

  /** Notes a use of the key: written at most once a minute per instance, never awaited by the request. */
  noteUse(apiKeyId: string): void {
    const now = this.now();
    const written = this.usedWritten.get(apiKeyId);
    if (written !== undefined && now - written < LAST_USED_EVERY_MS) return;
    this.usedWritten.set(apiKeyId, now);
    if (this.usedWritten.size > 100_000) this.usedWritten.clear();
    this.kv.put(kvKey.apiKeyUsed(apiKeyId), now).catch(() => this.usedWritten.delete(apiKeyId));
  }

  /** When the key was last used (epoch ms, to within a minute), or null. */
  async lastUsed(apiKeyId: string): Promise<number | null> {
    return (await this.kv.get<number>(kvKey.apiKeyUsed(apiKeyId))) ?? null;
  }

  private async readApiKey(hash: string): Promise<ApiKeyRecord | undefined> {
    const stored = await this.kv.get<StoredApiKeyRecord>(kvKey.apiKey(hash));
    return stored ? { ...stored, scopes: stored.scopes ?? [] } : undefined;
  }

  /** How many keys are cached (tests). */
  get cachedKeys(): number {
    return this.keys.size;
  }
}
