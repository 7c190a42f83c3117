import { FundsHoldClient } from '../../../actors/funds-hold/client';
import type { ActorInvoker } from '../../../actors/runtime/port';
import type { LedgerBalance } from '../../ledger/balances';
import type { LedgerReader } from './reader';
import { reconcile } from './reconcile';

function readerOf(balances: LedgerBalance[]): LedgerReader {
  return {
    page: () => Promise.reject(new Error('not used')),
    export: () => Promise.reject(new Error('not used')),
    async *balances() {
      yield* balances;
    },
  };
}

/** FundsHold actors whose balances are given by actor id; records which were asked. */
function actorsWith(balances: Record<string, number>): { funds: FundsHoldClient; asked: string[] } {
  const asked: string[] = [];
  const invoker: ActorInvoker = {
    invoke: async <R>(_type: string, actorId: string, method: string) => {
      if (method !== 'getBalance') throw new Error(`unexpected ${method}`);
      asked.push(actorId);
      return { balance: balances[actorId] ?? 0 } as R;
    },
  };
  return { funds: new FundsHoldClient(invoker), asked };
}

const entry = (accountId: string, balance: number, runningTotal = balance, pool = 'pool-3'): LedgerBalance => ({ accountId, pool, balance, runningTotal, bills: 1 });

describe('reconciliation', () => {
  it('when every actor agrees with the ledger, then every account is checked and there is no difference', async () => {
    const accounts = Array.from({ length: 25 }, (_, i) => entry(`acct_${i}`, i * 1000));
    const { funds, asked } = actorsWith(Object.fromEntries(accounts.map((a) => [`${a.accountId}:pool-3`, a.balance])));
    expect(await reconcile(readerOf(accounts), funds)).toEqual({ accounts: 25, differences: [] });
    expect(asked.sort()).toEqual(accounts.map((a) => `${a.accountId}:pool-3`).sort());
  });

  it('when an actor and the ledger disagree, or the ledger rows and its running total do, then each is a difference', async () => {
    const { funds } = actorsWith({ 'acct_b:pool-3': 900, 'acct_a:pool-3': 500, 'acct_c:pool-1': 70 });
    const result = await reconcile(readerOf([entry('acct_b', 1000), entry('acct_a', 500), entry('acct_c', 70, 71, 'pool-1')]), funds);
    expect(result).toEqual({
      accounts: 3,
      differences: [
        { accountId: 'acct_b', pool: 'pool-3', ledger: 1000, actor: 900, ledgerRunningTotal: 1000 },
        { accountId: 'acct_c', pool: 'pool-1', ledger: 70, actor: 70, ledgerRunningTotal: 71 },
      ],
    });
  });

  it('when the ledger knows no account, then nothing is checked', async () => {
    const { funds, asked } = actorsWith({});
    expect(await reconcile(readerOf([]), funds)).toEqual({ accounts: 0, differences: [] });
    expect(asked).toEqual([]);
  });
});
