// Accounts and API keys. Keys are random, shown once, stored only as their SHA-256 hash
// (keys carry 256 bits of entropy, so a fast hash is the right one).

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { ApiKeyScope } from '../auth/scopes';

export interface Account {
  accountId: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  apiKeyId: string;
  accountId: string;
  createdAt: string;
  scopes: ApiKeyScope[];
}

/** Keys stored before scopes existed have none. */
type StoredApiKeyRecord = Omit<ApiKeyRecord, 'scopes'> & { scopes?: ApiKeyScope[] };

export const API_KEY_PREFIX = 'sk-payg-';

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
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

const MIN_SWEEP_AT = 1024;

export class AccountStore {
  private readonly keyCache = new Map<string, { record: ApiKeyRecord; until: number }>();
  /** The cache size at which expired entries are next swept out (so it holds only recent keys). */
  private sweepAt = MIN_SWEEP_AT;

  constructor(private readonly kv: KeyValueStore, private readonly cacheMs = 30_000) {}

  /** `register` runs before the account is stored (the ledger's index: an account never goes unreconciled). */
  async createAccount(name: string, register?: (accountId: string) => Promise<void>): Promise<Account> {
    const account: Account = { accountId: newAccountId(), name, createdAt: new Date().toISOString() };
    await register?.(account.accountId);
    await this.kv.put(`account:${account.accountId}`, account);
    return account;
  }

  getAccount(accountId: string): Promise<Account | undefined> {
    return this.kv.get<Account>(`account:${accountId}`);
  }

  /** Scopes arrive already parsed at the edge (parseApiKeyScopes), so the store trusts their type. */
  async createApiKey(accountId: string, scopes: readonly ApiKeyScope[] = []): Promise<{ apiKeyId: string; apiKey: string; scopes: ApiKeyScope[] }> {
    const key = newApiKey();
    const record: ApiKeyRecord = { apiKeyId: key.apiKeyId, accountId, createdAt: new Date().toISOString(), scopes: [...scopes] };
    await this.kv.put(`apikey:${hashApiKey(key.apiKey)}`, record);
    return { ...key, scopes: record.scopes };
  }

  /** The key's record, or undefined for an unknown key. Found keys are cached briefly. */
  async findApiKey(apiKey: string): Promise<ApiKeyRecord | undefined> {
    const hash = hashApiKey(apiKey);
    const cached = this.keyCache.get(hash);
    const now = Date.now();
    if (cached && cached.until > now) return cached.record;
    if (cached) this.keyCache.delete(hash);
    const stored = await this.kv.get<StoredApiKeyRecord>(`apikey:${hash}`);
    if (!stored) return undefined;
    const record: ApiKeyRecord = { ...stored, scopes: stored.scopes ?? [] };
    this.keyCache.set(hash, { record, until: now + this.cacheMs });
    if (this.keyCache.size >= this.sweepAt) this.sweep(now);
    return record;
  }

  /** Drops expired keys; amortized: the next sweep waits until the cache has doubled. */
  private sweep(now: number): void {
    for (const [hash, entry] of this.keyCache) if (entry.until <= now) this.keyCache.delete(hash);
    this.sweepAt = Math.max(MIN_SWEEP_AT, 2 * this.keyCache.size);
  }

  /** How many keys are cached (tests). */
  get cachedKeys(): number {
    return this.keyCache.size;
  }
}
