import { AccountStore, hashApiKey } from './store';
import { MemoryKeyValueStore } from '../../../test/support/memory-kv';


describe('AccountStore API keys', () => {
  it('when a key is made with scopes, then it is found by its secret with those scopes, stored only as a hash', async () => {
    const kv = new MemoryKeyValueStore();
    const store = new AccountStore(kv);
    const account = await store.createAccount('scoped');
    const key = await store.createApiKey(account.accountId, ['compat', 'media']);
    expect(key.scopes).toEqual(['compat', 'media']);
    expect(await store.findApiKey(key.apiKey)).toMatchObject({ apiKeyId: key.apiKeyId, accountId: account.accountId, scopes: ['compat', 'media'] });
    expect([...kv.values.keys()]).toContain(`apikey:${hashApiKey(key.apiKey)}`);
    expect(JSON.stringify([...kv.values.values()])).not.toContain(key.apiKey);
  });

  it('when a key is made without scopes, then it has none', async () => {
    const store = new AccountStore(new MemoryKeyValueStore());
    const key = await store.createApiKey('acct_x');
    expect(key.scopes).toEqual([]);
    expect((await store.findApiKey(key.apiKey))?.scopes).toEqual([]);
  });

  it('when a key was stored before scopes existed, then it reads back with no scopes', async () => {
    const kv = new MemoryKeyValueStore();
    await kv.put(`apikey:${hashApiKey('sk-payg-legacy')}`, { apiKeyId: 'key_legacy', accountId: 'acct_old', createdAt: '2024-01-01T00:00:00.000Z' });
    const record = await new AccountStore(kv).findApiKey('sk-payg-legacy');
    expect(record).toEqual({ apiKeyId: 'key_legacy', accountId: 'acct_old', createdAt: '2024-01-01T00:00:00.000Z', scopes: [] });
  });

  it('when thousands of keys are used once each, then the cache keeps only the recent ones', async () => {
    const kv = new MemoryKeyValueStore();
    let now = 0;
    const store = new AccountStore(kv, 1, () => now);
    for (let i = 0; i < 5000; i++) {
      const key = await store.createApiKey(`acct_${i}`);
      expect((await store.findApiKey(key.apiKey))?.accountId).toBe(`acct_${i}`);
      if (i % 1000 === 0) now += 5;
    }
    now += 5;
    const last = await store.createApiKey('acct_last');
    await store.findApiKey(last.apiKey);
    expect(store.cachedKeys).toBeLessThan(2100);
  });

  it('when the key is unknown, then nothing is found', async () => {
    expect(await new AccountStore(new MemoryKeyValueStore()).findApiKey('sk-payg-nope')).toBeUndefined();
  });
});

describe('AccountStore API key cache: bounded staleness', () => {
  /** A store on a clock the test moves, with the default bound (1 s). */
  function clocked() {
    const kv = new MemoryKeyValueStore();
    const clock = { now: 1_000_000 };
    return { kv, clock, store: new AccountStore(kv, undefined, () => clock.now) };
  }

  it('when a key record is removed from the store, then the key stops working within one second on an instance that had it cached, and not before its cached lookup ends', async () => {
    const { kv, clock, store } = clocked();
    const key = await store.createApiKey('acct_a');
    expect((await store.findApiKey(key.apiKey))?.accountId).toBe('acct_a');
    kv.values.delete(`apikey:${hashApiKey(key.apiKey)}`); // revoked by another instance
    clock.now += 999;
    expect((await store.findApiKey(key.apiKey))?.accountId).toBe('acct_a'); // still the cached lookup
    clock.now += 1;
    expect(await store.findApiKey(key.apiKey)).toBeUndefined();
  });

  it('when a key record is changed in the store, then the change is seen within one second', async () => {
    const { kv, clock, store } = clocked();
    const key = await store.createApiKey('acct_b', ['compat']);
    expect((await store.findApiKey(key.apiKey))?.scopes).toEqual(['compat']);
    const stored = kv.values.get(`apikey:${hashApiKey(key.apiKey)}`) as Record<string, unknown>;
    kv.values.set(`apikey:${hashApiKey(key.apiKey)}`, { ...stored, scopes: [] });
    clock.now += 500;
    expect((await store.findApiKey(key.apiKey))?.scopes).toEqual(['compat']);
    clock.now += 500;
    expect((await store.findApiKey(key.apiKey))?.scopes).toEqual([]);
  });

  it('when an unknown key is looked up, then "no such key" is reused for at most one second: a key stored later by another instance works within it', async () => {
    const { kv, clock, store } = clocked();
    const apiKey = 'sk-payg-made-elsewhere';
    expect(await store.findApiKey(apiKey)).toBeUndefined();
    await kv.put(`apikey:${hashApiKey(apiKey)}`, { apiKeyId: 'key_x', accountId: 'acct_x', createdAt: '2026-01-01T00:00:00.000Z', scopes: [] });
    clock.now += 999;
    expect(await store.findApiKey(apiKey)).toBeUndefined(); // the cached lookup: the store was not read again
    clock.now += 1;
    expect((await store.findApiKey(apiKey))?.accountId).toBe('acct_x');
  });

  it('when the instance clock steps back after a lookup, then a revoked key and a suspended account still stop working within one second', async () => {
    const { kv, clock, store } = clocked();
    const account = await store.createAccount('stepped');
    const key = await store.createApiKey(account.accountId);
    expect(await store.findApiKey(key.apiKey)).toBeDefined();
    expect(await store.findAccount(account.accountId)).toBeDefined();
    kv.values.delete(`apikey:${hashApiKey(key.apiKey)}`); // revoked by another instance
    await kv.put(`account:${account.accountId}`, { ...account, suspendedAt: 1 });
    clock.now -= 3_600_000; // an NTP step back of an hour: the cached lookups' end is an hour away
    clock.now += 1000;
    expect(await store.findApiKey(key.apiKey)).toBeUndefined();
    expect((await store.findAccount(account.accountId))?.suspendedAt).toBe(1);
  });

  it('when the cache is 0 ms, then every lookup reads the store', async () => {
    const kv = new MemoryKeyValueStore();
    const store = new AccountStore(kv, 0);
    const key = await store.createApiKey('acct_e');
    expect(await store.findApiKey(key.apiKey)).toBeDefined();
    kv.values.delete(`apikey:${hashApiKey(key.apiKey)}`);
    expect(await store.findApiKey(key.apiKey)).toBeUndefined();
  });

  it('when concurrent requests carry one key, then they share one store read', async () => {
    const kv = new MemoryKeyValueStore();
    let reads = 0;
    const counted = { get: <T>(k: string) => (reads++, kv.get<T>(k)), put: (k: string, v: unknown) => kv.put(k, v) };
    const store = new AccountStore(counted);
    const key = await store.createApiKey('acct_f');
    const found = await Promise.all(Array.from({ length: 32 }, () => store.findApiKey(key.apiKey)));
    expect(found.every((r) => r?.accountId === 'acct_f')).toBe(true);
    expect(reads).toBe(1);
  });

  it('when a cache longer than one second is asked for, then the store refuses it', () => {
    expect(() => new AccountStore(new MemoryKeyValueStore(), 1001)).toThrow(/at most 1000 ms/);
  });
});
