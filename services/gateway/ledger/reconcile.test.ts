import { FundsHoldClient } from '../../../actors/funds-hold/client';
import { ActorOutboxClient } from '../../../actors/runtime/outbox-client';
import { OUTBOX_DELIVER_METHOD, OUTBOX_PENDING_METHOD, type ActorInvoker } from '../../../actors/runtime/port';
import { billingEvent, usageEvent, type EventEnvelope } from '../../../lib/events';
import type { LedgerBalance } from '../../ledger/balances';
import type { LedgerReader } from './reader';
import { RECONCILE_RECHECKS, reconcile, repair } from './reconcile';

/** A ledger whose balances stream gives `balances`; an account's totals and bill sums read later are those same figures unless `now` says otherwise. */
function readerOf(balances: LedgerBalance[], now: { totals?: LedgerReader['totals']; balancesAt?: LedgerReader['balancesAt'] } = {}): LedgerReader {
  const of = (accountId: string, pool: string) => balances.find((b) => b.accountId === accountId && b.pool === pool)!;
  return {
    page: () => Promise.reject(new Error('not used')),
    export: () => Promise.reject(new Error('not used')),
    spending: () => Promise.reject(new Error('not used')),
    register: () => Promise.reject(new Error('not used')),
    async *balances() {
      yield* balances;
    },
    totals: now.totals ?? (async (accountId, pool) => {
      const { runningTotal, bills, fundsBills } = of(accountId, pool);
      return { balance: runningTotal, bills, ...(fundsBills !== undefined ? { fundsBills } : {}) };
    }),
    balancesAt: now.balancesAt ?? (async (accountId, pool) => [of(accountId, pool).balance]),
  };
}

/**
 * FundsHold actors whose balances, unconfirmed outboxes and counts of bills emitted (absent: not
 * counted) are given by actor id; a delivery
 * moves the outbox's events into `ledger` (what the ledger app would append). Records calls.
 */
function actorsWith(balances: Record<string, number>, outboxes: Record<string, EventEnvelope[]> = {}, bills: Record<string, number> = {}) {
  const asked: string[] = [];
  const delivered: EventEnvelope[] = [];
  const invoker: ActorInvoker = {
    invoke: async <R>(_type: string, actorId: string, method: string) => {
      asked.push(`${method} ${actorId}`);
      if (method === 'ledgerFigures') return { balance: balances[actorId] ?? 0, bills: bills[actorId] ?? null } as R;
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
    expect(asked.sort()).toEqual(accounts.map((a) => `ledgerFigures ${a.accountId}:pool-3`).sort());
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

  it('when a change lands between the ledger\'s read and the actor\'s (a charge while reconciling), then it is read again at one moment and is no difference', async () => {
    // The stream read the ledger at 2 bills (1000); a charge of 300 (bill 3) committed before the actor answered 700.
    const ledger = [{ ...entry('acct_busy', 1000), bills: 2 }];
    const asks: number[][] = [];
    const { funds, outbox, asked } = actorsWith({ 'acct_busy:pool-3': 700 });
    const reader = readerOf(ledger, {
      totals: async () => ({ balance: 700, bills: 3 }),
      balancesAt: async (_accountId, _pool, from, to) => (asks.push([from, to]), [700]),
    });
    expect(await reconcile(reader, funds, outbox)).toEqual({ accounts: 1, differences: [] });
    expect(asks).toEqual([[3, 3]]);
    expect(asked).not.toContain(`${OUTBOX_PENDING_METHOD} acct_busy:pool-3`);
  });

  it('when bills are appended while the actor is read again, then its balance at any bill count seen meanwhile is agreement', async () => {
    // Around the actor's answer the ledger went from 3 bills (700) to 5 (400, then 100): the actor answered 400.
    let bills = 3;
    const { funds, outbox } = actorsWith({ 'acct_busy:pool-3': 400 });
    const reader = readerOf([{ ...entry('acct_busy', 1000), bills: 2 }], {
      totals: async () => (bills === 3 ? ((bills = 5), { balance: 700, bills: 3 }) : { balance: 100, bills: 5 }),
      balancesAt: async (_accountId, _pool, from, to) => (from === 3 && to === 5 ? [700, 400, 100] : []),
    });
    expect(await reconcile(reader, funds, outbox)).toEqual({ accounts: 1, differences: [] });
  });

  it('when the ledger lacks a change, then the look again at one moment still finds it and reports the figures of that moment', async () => {
    const { funds, outbox, asked } = actorsWith({ 'acct_short:pool-3': 700 });
    const reader = readerOf([{ ...entry('acct_short', 1000), bills: 2 }], { totals: async () => ({ balance: 1200, bills: 3 }), balancesAt: async () => [1200] });
    expect((await reconcile(reader, funds, outbox)).differences).toEqual([{ accountId: 'acct_short', pool: 'pool-3', ledger: 1200, actor: 700, ledgerRunningTotal: 1200, missing: [] }]);
    expect(asked.filter((call) => call === 'ledgerFigures acct_short:pool-3')).toHaveLength(2);
  });

  it('when bills keep being appended around every look and none matches, then the difference is reported as last seen after a bounded number of looks', async () => {
    let bills = 2;
    const { funds, outbox, asked } = actorsWith({ 'acct_hot:pool-3': 700 });
    const reader = readerOf([{ ...entry('acct_hot', 1000), bills }], {
      totals: async () => ({ balance: 1000, bills: bills++ }),
      balancesAt: async (_accountId, _pool, from, to) => Array.from({ length: to - from + 1 }, () => 1000),
    });
    const result = await reconcile(reader, funds, outbox);
    expect(result.differences).toEqual([{ accountId: 'acct_hot', pool: 'pool-3', ledger: 1000, actor: 700, ledgerRunningTotal: 1000, missing: [] }]);
    expect(asked.filter((call) => call === 'ledgerFigures acct_hot:pool-3')).toHaveLength(1 + RECONCILE_RECHECKS);
  });

  it('when the ledger lacks a settle (its usage event carries its charge bill), then the missing event says what it moves the balance by, as a missing bill does', async () => {
    const settle = usageEvent('h1:usage', Date.parse('2026-01-01T00:00:00Z'), {
      accountId: 'acct_u', pool: 'pool-3', holdId: 'h1', requestId: 'r1', model: 'sim-chat', profileId: 'p1',
      lines: [{ unit: 'TEXT_INPUT', quantity: 9, unitPrice: 100, cost: 900 }, { unit: 'TEXT_OUTPUT', quantity: 16, unitPrice: 400, cost: 6400 }], charged: 7300,
      bill: { id: 'h1:charge', kind: 'charge', balanceDelta: -7300, amount: 7300 },
    });
    const usageOnly = usageEvent('h0:usage', Date.parse('2026-01-01T00:00:00Z'), { ...settle.data, holdId: 'h0', bill: undefined });
    delete (usageOnly.data as { bill?: unknown }).bill;
    const { funds, outbox } = actorsWith({ 'acct_u:pool-3': 2700 }, { 'acct_u:pool-3': [settle, usageOnly] });
    const result = await reconcile(readerOf([entry('acct_u', 10_000)]), funds, outbox);
    expect(result.differences[0].missing).toEqual([
      { id: 'h1:usage', topic: 'usage', type: 'usage.recorded', occurredAt: settle.occurredAt, balanceDelta: -7300, amount: 7300 },
      { id: 'h0:usage', topic: 'usage', type: 'usage.recorded', occurredAt: usageOnly.occurredAt },
    ]);
  });

  it('when the ledger lacks a release (a bill that moves no balance), then the bill counts tell it with the balances equal, and the repair delivers it', async () => {
    const release = billingEvent('h7:release', Date.parse('2026-01-01T00:00:00Z'), { kind: 'release', accountId: 'acct_rel', pool: 'pool-3', balanceDelta: 0, amount: 5000, holdId: 'h7', reference: 'client_gone' });
    const { funds, outbox, delivered } = actorsWith({ 'acct_rel:pool-3': 1000 }, { 'acct_rel:pool-3': [release] }, { 'acct_rel:pool-3': 3 });
    let passes = 0;
    const counted = () => (passes === 1 ? 2 : 3);
    const reader: LedgerReader = {
      ...readerOf([], { totals: async () => ({ balance: 1000, bills: counted(), fundsBills: counted() }), balancesAt: async () => [1000] }),
      async *balances() {
        passes += 1;
        yield { ...entry('acct_rel', 1000), bills: counted(), fundsBills: counted() };
      },
    };
    const before = await reconcile(reader, funds, outbox);
    expect(before.differences).toEqual([{
      accountId: 'acct_rel', pool: 'pool-3', ledger: 1000, actor: 1000, ledgerRunningTotal: 1000, bills: { ledger: 2, actor: 3 },
      missing: [{ id: 'h7:release', topic: 'billing', type: 'billing.release', occurredAt: release.occurredAt, balanceDelta: 0, amount: 5000 }],
    }]);
    passes = 0;
    const outcome = await repair(reader, funds, outbox);
    expect(delivered.map((e) => e.id)).toEqual(['h7:release']);
    expect(outcome.after).toEqual({ accounts: 1, differences: [] });
  });

  it('when the ledger lacks a platform-borne bill no outbox holds any more, then the difference is the bill counts, with nothing to repair from', async () => {
    const { funds, outbox } = actorsWith({ 'acct_pb:pool-3': 400 }, {}, { 'acct_pb:pool-3': 5 });
    const result = await reconcile(readerOf([{ ...entry('acct_pb', 400), bills: 4, fundsBills: 4 }]), funds, outbox);
    expect(result.differences).toEqual([{ accountId: 'acct_pb', pool: 'pool-3', ledger: 400, actor: 400, ledgerRunningTotal: 400, bills: { ledger: 4, actor: 5 }, missing: [] }]);
  });

  it('when either side does not count bills (records from before the count), then only balances are compared', async () => {
    const { funds, outbox } = actorsWith({ 'acct_old:pool-3': 400, 'acct_new:pool-3': 400 }, {}, { 'acct_new:pool-3': 9 });
    const ledger = [{ ...entry('acct_old', 400), bills: 4, fundsBills: 4 }, { ...entry('acct_new', 400), bills: 4 }];
    expect(await reconcile(readerOf(ledger), funds, outbox)).toEqual({ accounts: 2, differences: [] });
  });

  it('when bills are appended around the actor\'s read, then its count anywhere between the two ledger counts is agreement; with none appended it must be that count', async () => {
    // A release (no balance moved) landed between the stream's read (3 bills) and the actor's; another after it.
    let reads = 0;
    const { funds, outbox } = actorsWith({ 'acct_busy:pool-3': 700 }, {}, { 'acct_busy:pool-3': 4 });
    const moving = readerOf([{ ...entry('acct_busy', 700), bills: 3, fundsBills: 3 }], {
      totals: async () => ((reads += 1) === 1 ? { balance: 700, bills: 3, fundsBills: 3 } : { balance: 700, bills: 5, fundsBills: 5 }),
      balancesAt: async () => [700, 700, 700],
    });
    expect(await reconcile(moving, funds, outbox)).toEqual({ accounts: 1, differences: [] });
    const quiet = readerOf([{ ...entry('acct_busy', 700), bills: 3, fundsBills: 3 }]);
    expect((await reconcile(quiet, funds, outbox)).differences).toEqual([{ accountId: 'acct_busy', pool: 'pool-3', ledger: 700, actor: 700, ledgerRunningTotal: 700, bills: { ledger: 3, actor: 4 }, missing: [] }]);
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
    const after = [entry('acct_r', 3500), entry('acct_s', 300)];
    const current = () => (passes === 1 ? ledger : after);
    const reader: LedgerReader = {
      ...readerOf([], {
        totals: async (accountId) => ({ balance: current().find((b) => b.accountId === accountId)!.runningTotal, bills: 1 }),
        balancesAt: async (accountId) => [current().find((b) => b.accountId === accountId)!.balance],
      }),
      async *balances() {
        passes += 1;
        yield* current();
      },
    };
    const outcome = await repair(reader, funds, outbox);
    expect(delivered.map((e) => e.id)).toEqual([missing.id]);
    expect(outcome).toEqual({ repaired: [{ accountId: 'acct_r', pool: 'pool-3', delivered: [missing.id], pending: [] }], after: { accounts: 2, differences: [] } });
  });
});
