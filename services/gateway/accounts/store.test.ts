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
    const store = new AccountStore(kv, 1);
    for (let i = 0; i < 5000; i++) {
      const key = await store.createApiKey(`acct_${i}`);
      expect((await store.findApiKey(key.apiKey))?.accountId).toBe(`acct_${i}`);
      if (i % 1000 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    const last = await store.createApiKey('acct_last');
    await store.findApiKey(last.apiKey);
    expect(store.cachedKeys).toBeLessThan(2100);
  });

  it('when the key is unknown, then nothing is found', async () => {
    expect(await new AccountStore(new MemoryKeyValueStore()).findApiKey('sk-payg-nope')).toBeUndefined();
  });
});
