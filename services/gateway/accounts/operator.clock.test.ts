// A revocation's projection when the gateway instance that makes it has a clock behind the Account
// actor's (on Dapr they are different processes, often different hosts). The revocation is in
// force at the actor's clock the moment it is made, so it must be projected as in force: every
// instance refuses the key at its next lookup, whatever its own clock says.

import { AccountClient } from '../../../actors/account/client';
import { startEmbeddedActors, type ActorHostUnderTest } from '../../../test/support/actor-hosts';
import { MemoryKeyValueStore } from '../../../test/support/memory-kv';
import { AccountOperator, type OperatorDeps } from './operator';
import { AccountStore, hashApiKey } from './store';

jest.setTimeout(60_000);

const SKEW_MS = 5000;
const action = { who: 'op', requestId: 'req' };
let host: ActorHostUnderTest;

beforeAll(async () => {
  // The actor's clock is SKEW_MS ahead of the gateway's (Date.now).
  host = await startEmbeddedActors('operator-clock-', { now: () => Date.now() + SKEW_MS });
});
afterAll(async () => {
  await host.close();
});

function operator() {
  const kv = new MemoryKeyValueStore();
  const accounts = new AccountStore(kv, 0);
  const deps = { accounts, accountActors: new AccountClient(host.invoker), audit: { record: async () => undefined } } as unknown as OperatorDeps;
  return { kv, accounts, operator: new AccountOperator(deps) };
}

describe('a revocation made through an instance whose clock is behind the actor', () => {
  it('when a key is revoked, then its projection is in force and the key is refused at once', async () => {
    const { kv, accounts, operator: op } = operator();
    const account = await accounts.createAccount('skewed');
    const key = await op.createKey(action, account.accountId, { scopes: [] });
    await op.revokeKey(action, key.apiKeyId);
    expect((kv.values.get(`apikey:${hashApiKey(key.apiKey)}`) as { revokedAt: number }).revokedAt).toBe(0);
  });

  it('when a key is rotated without grace, then the old key is projected as revoked in force', async () => {
    const { kv, accounts, operator: op } = operator();
    const account = await accounts.createAccount('skewed-rotation');
    const key = await op.createKey(action, account.accountId, { scopes: [] });
    await op.rotateKey(action, key.apiKeyId, 0);
    expect((kv.values.get(`apikey:${hashApiKey(key.apiKey)}`) as { revokedAt: number }).revokedAt).toBe(0);
  });
});
