// Accounts and API keys. Keys are random, shown once, stored only as their SHA-256 hash
// (keys carry 256 bits of entropy, so a fast hash is the right one).

import { createHash, randomBytes, randomUUID } from 'node:crypto';

export interface Account {
  accountId: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  apiKeyId: string;
  accountId: string;
  createdAt: string;
}

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

export class AccountStore {
  private readonly keyCache = new Map<string, { record: ApiKeyRecord; until: number }>();

  constructor(private readonly kv: KeyValueStore, private readonly cacheMs = 30_000) {}

  async createAccount(name: string): Promise<Account> {
    const account: Account = { accountId: newAccountId(), name, createdAt: new Date().toISOString() };
    await this.kv.put(`account:${account.accountId}`, account);
    return account;
  }

  getAccount(accountId: string): Promise<Account | undefined> {
    return this.kv.get<Account>(`account:${accountId}`);
  }

  async createApiKey(accountId: string): Promise<{ apiKeyId: string; apiKey: string }> {
    const key = newApiKey();
    const record: ApiKeyRecord = { apiKeyId: key.apiKeyId, accountId, createdAt: new Date().toISOString() };
    await this.kv.put(`apikey:${hashApiKey(key.apiKey)}`, record);
    return key;
  }

  /** The key's record, or undefined for an unknown key. Found keys are cached briefly. */
  async findApiKey(apiKey: string): Promise<ApiKeyRecord | undefined> {
    const hash = hashApiKey(apiKey);
    const cached = this.keyCache.get(hash);
    const now = Date.now();
    if (cached && cached.until > now) return cached.record;
    const record = await this.kv.get<ApiKeyRecord>(`apikey:${hash}`);
    if (record) this.keyCache.set(hash, { record, until: now + this.cacheMs });
    return record;
  }
}
