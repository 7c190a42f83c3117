import { FundsHoldClient } from '../../../actors/funds-hold/client';
import { ActorOutboxClient } from '../../../actors/runtime/outbox-client';
import { OUTBOX_DELIVER_METHOD, OUTBOX_PENDING_METHOD, type ActorInvoker } from '../../../actors/runtime/port';
import { billingEvent, type EventEnvelope } from '../../../lib/events';
import type { LedgerBalance } from '../../ledger/balances';
import type { LedgerReader } from './reader';
import { reconcile, repair } from './reconcile';

function readerOf(balances: LedgerBalance[]): LedgerReader {
  return {
    page: () => Promise.reject(new Error('not used')),
    export: () => Promise.reject(new Error('not used')),
    spending: () => Promise.reject(new Error('not used')),
    register: () => Promise.reject(new Error('not used')),
    async *balances() {
      yield* balances;
    },
  };
}

/**
 * FundsHold actors whose balances and unconfirmed outboxes are given by actor id; a delivery
 * moves the outbox's events into `ledger` (what the ledger app would append). Records calls.
 */
function actorsWith(balances: Record<string, number>, outboxes: Record<string, EventEnvelope[]> = {}) {
  const asked: string[] = [];
  const delivered: EventEnvelope[] = [];
  const invoker: ActorInvoker = {
    invoke: async <R>(_type: string, actorId: string, method: string) => {
      asked.push(`${method} ${actorId}`);
      if (method === 'getBalance') return { balance: balances[actorId] ?? 0 } as R;
      if (method === OUTBOX_PENDING_METHOD) return { events: outboxes[actorId] ?? [] } as R;
      if (method === OUTBOX_DELIVER_METHOD) {
        const events = outboxes[actorId] ?? [];
        delivered.push(...events);
        outboxes[actorId] = [];
        return { delivered: events.map((e) => e.id), pending: [] } as R;
      }
      throw new Error(`unexpected ${method}`);
    },
  };
  return { funds: new FundsHoldClient(invoker), outbox: new ActorOutboxClient(invoker), asked, delivered };
}

const entry = (accountId: string, balance: number, runningTotal = balance, pool = 'pool-3'): LedgerBalance => ({ accountId, pool, balance, runningTotal, bills: 1 });
const credit = (accountId: string, amount: number, reference: string) =>
  billingEvent(`credit:${accountId}:pool-3:${reference}`, Date.parse('2026-01-01T00:00:00Z'), { kind: 'credit', accountId, pool: 'pool-3', balanceDelta: amount, amount, reference });

describe('reconciliation', () => {
  it('when every actor agrees with the ledger, then every account is checked, no outbox is asked and there is no difference', async () => {
    const accounts = Array.from({ length: 25 }, (_, i) => entry(`acct_${i}`, i * 1000));
    const { funds, outbox, asked } = actorsWith(Object.fromEntries(accounts.map((a) => [`${a.accountId}:pool-3`, a.balance])));
    expect(await reconcile(readerOf(accounts), funds, outbox)).toEqual({ accounts: 25, differences: [] });
    expect(asked.sort()).toEqual(accounts.map((a) => `getBalance ${a.accountId}:pool-3`).sort());
  });

  it('when an actor and the ledger disagree, or the ledger rows and its running total do, then each is a difference naming the events the ledger lacks', async () => {
    const missing = credit('acct_b', -100, 'x');
    const { funds, outbox } = actorsWith({ 'acct_b:pool-3': 900, 'acct_a:pool-3': 500, 'acct_c:pool-1': 70 }, { 'acct_b:pool-3': [missing] });
    const result = await reconcile(readerOf([entry('acct_b', 1000), entry('acct_a', 500), entry('acct_c', 70, 71, 'pool-1')]), funds, outbox);
    expect(result).toEqual({
      accounts: 3,
      differences: [
        { accountId: 'acct_b', pool: 'pool-3', ledger: 1000, actor: 900, ledgerRunningTotal: 1000, missing: [{ id: missing.id, topic: 'billing', type: 'billing.credit', occurredAt: missing.occurredAt, balanceDelta: -100, amount: -100 }] },
        { accountId: 'acct_c', pool: 'pool-1', ledger: 70, actor: 70, ledgerRunningTotal: 71, missing: [] },
      ],
    });
  });

  it('when the ledger knows no account, then nothing is checked', async () => {
    const { funds, outbox, asked } = actorsWith({});
    expect(await reconcile(readerOf([]), funds, outbox)).toEqual({ accounts: 0, differences: [] });
    expect(asked).toEqual([]);
  });

  it('when a difference names missing events, then the repair has that actor deliver them and reconciles again', async () => {
    const missing = credit('acct_r', 2500, 'late');
    const ledger = [entry('acct_r', 1000), entry('acct_s', 300)];
    const { funds, outbox, delivered } = actorsWith({ 'acct_r:pool-3': 3500, 'acct_s:pool-3': 300 }, { 'acct_r:pool-3': [missing] });
    // The ledger reads the delivered credit on the second pass.
    let passes = 0;
    const reader: LedgerReader = {
      ...readerOf([]),
      async *balances() {
        passes += 1;
        yield* passes === 1 ? ledger : [entry('acct_r', 3500), entry('acct_s', 300)];
      },
    };
    const outcome = await repair(reader, funds, outbox);
    expect(delivered.map((e) => e.id)).toEqual([missing.id]);
    expect(outcome).toEqual({ repaired: [{ accountId: 'acct_r', pool: 'pool-3', delivered: [missing.id], pending: [] }], after: { accounts: 2, differences: [] } });
  });
});
