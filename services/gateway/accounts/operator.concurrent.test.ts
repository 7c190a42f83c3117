// Operator calls made at the same moment (two operators, or a retry racing its first attempt):
// each change is in the audit log once, and a call that changed nothing adds no entry.

import { AccountClient } from '../../../actors/account/client';
import { startEmbeddedActors, type ActorHostUnderTest } from '../../../test/support/actor-hosts';
import { MemoryKeyValueStore } from '../../../test/support/memory-kv';
import { AccountOperator, type OperatorDeps } from './operator';
import { AccountStore } from './store';

jest.setTimeout(60_000);

const action = { who: 'op', requestId: 'req' };
let host: ActorHostUnderTest;

beforeAll(async () => {
  host = await startEmbeddedActors('operator-concurrent-');
});
afterAll(async () => {
  await host.close();
});

describe('the same limits set by concurrent calls', () => {
  it('when several calls set the same limits at once, then the audit log has one entry for the key and one for the account', async () => {
    const recorded: string[] = [];
    const accounts = new AccountStore(new MemoryKeyValueStore(), 0);
    const deps = { accounts, accountActors: new AccountClient(host.invoker), audit: { record: async (_: unknown, what: string) => void recorded.push(what) } } as unknown as OperatorDeps;
    const op = new AccountOperator(deps);
    const account = await accounts.createAccount('concurrent');
    const key = await op.createKey(action, account.accountId, { scopes: [] });
    recorded.length = 0;
    const limits = { requests_per_minute: 60, spend_total: 5_000 };
    await Promise.all(Array.from({ length: 4 }, () => op.setKeyLimits(action, key.apiKeyId, limits)));
    await Promise.all(Array.from({ length: 4 }, () => op.setAccountLimits(action, account.accountId, limits)));
    expect(recorded.sort()).toEqual(['account.limits', 'api_key.limits']);
    // Set again, one by one: no change, no entry.
    await op.setKeyLimits(action, key.apiKeyId, limits);
    await op.setAccountLimits(action, account.accountId, {});
    expect(recorded).toHaveLength(2);
  });
});
