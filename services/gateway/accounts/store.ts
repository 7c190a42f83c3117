// Accounts and API keys. Keys are random, shown once, stored only as their SHA-256 hash
// (keys carry 256 bits of entropy, so a fast hash is the right one).

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { API_KEY_CACHE_MAX_MS } from '../../../lib/config';
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
/** Past this many cached lookups, unknown keys are no longer cached (a flood of made-up keys). */
const MAX_CACHED = 100_000;


/** A lookup's outcome (undefined: no such key) and until when it may be reused. */
interface CachedLookup {
  record: ApiKeyRecord | undefined;
  until: number;
}

export class AccountStore {
  private readonly keyCache = new Map<string, CachedLookup>();
  /** Lookups under way, by key hash: concurrent requests with one key share one store read. */
  private readonly reading = new Map<string, { started: number; read: Promise<ApiKeyRecord | undefined> }>();
  /** The cache size at which expired entries are next swept out (so it holds only recent keys). */
  private sweepAt = MIN_SWEEP_AT;

  /**
   * `cacheMs`: how long a lookup (found or not) is reused, counted from when its store read
   * began, so no answer is older than that; 0 reads the store every time.
   */
  constructor(private readonly kv: KeyValueStore, private readonly cacheMs = API_KEY_CACHE_MAX_MS, private readonly now: () => number = Date.now) {
    if (!(cacheMs >= 0 && cacheMs <= API_KEY_CACHE_MAX_MS)) throw new RangeError(`API key cache of ${cacheMs} ms: at most ${API_KEY_CACHE_MAX_MS} ms (a revoked key must stop working within it)`);
  }

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

  /** The key's record, or undefined for an unknown key. Both outcomes are reused for at most `cacheMs`. */
  async findApiKey(apiKey: string): Promise<ApiKeyRecord | undefined> {
    const hash = hashApiKey(apiKey);
    const now = this.now();
    const cached = this.keyCache.get(hash);
    if (cached && cached.until > now) return cached.record;
    if (cached) this.keyCache.delete(hash);
    const under = this.reading.get(hash);
    // Joining a read is as fresh as caching its outcome: it began less than cacheMs ago.
    if (under && under.started + this.cacheMs > now) return under.read;
    const read = this.readApiKey(hash);
    const lookup = { started: now, read };
    this.reading.set(hash, lookup);
    try {
      const record = await read;
      if (this.cacheMs > 0 && (record !== undefined || this.keyCache.size < MAX_CACHED)) {
        this.keyCache.set(hash, { record, until: now + this.cacheMs });
        if (this.keyCache.size >= this.sweepAt) this.sweep(this.now());
      }
      return record;
    } finally {
      if (this.reading.get(hash) === lookup) this.reading.delete(hash);
    }
  }

  private async readApiKey(hash: string): Promise<ApiKeyRecord | undefined> {
    const stored = await this.kv.get<StoredApiKeyRecord>(`apikey:${hash}`);
    return stored ? { ...stored, scopes: stored.scopes ?? [] } : undefined;
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
