// The Dapr host adapter keeps in memory only the state its actor reads, kept current by its
// writes: a value only written (each ended hold's record) is not kept for the activation's life,
// and of a lease's records of endings only the one being filled.
// The adapter talks to a stand-in for its daprd sidecar over real HTTP (test/support/fake-dapr-sidecar.ts).

import { ActorId, DaprClient } from '@dapr/dapr';
import { FundsHold } from '../funds-hold/FundsHold';
import { DaprSidecar } from '../../lib/dapr-http';
import { daprActorClass } from './dapr-host';
import type { ActorCallResult } from './port';
import { startFakeSidecar } from '../../test/support/fake-dapr-sidecar';

/** A FundsHold activation of the Dapr host adapter on a fake sidecar: `call` answers its result or throws its error. */
async function fundsHoldOnFakeSidecar(actorId: string) {
  const fake = await startFakeSidecar();
  const sidecar = new DaprSidecar('127.0.0.1', fake.port);
  const Adapter = daprActorClass(FundsHold, async () => undefined, sidecar);
  const actor = new Adapter(new DaprClient({ daprHost: '127.0.0.1', daprPort: String(fake.port) }), new ActorId(actorId)) as unknown as
    Record<string, (arg: unknown) => Promise<ActorCallResult<Record<string, unknown>>>> & { cachedValues: number };
  const call = async (method: string, arg: unknown) => {
    const outcome = await actor[method](arg);
    if (!outcome.ok) throw Object.assign(new Error(outcome.error.message), outcome.error);
    return outcome.result;
  };
  const close = async () => {
    await sidecar.close();
    await fake.close();
  };
  return { ...fake, actor, call, close };
}

describe('the Dapr host adapter, memory', () => {
  it('when hundreds of holds are reserved and settled on one account, then the activation caches what it reads, not each ended hold', async () => {
    const { store, actor, call, close } = await fundsHoldOnFakeSidecar('acct_mem:pool-3');
    try {
      await call('credit', { amount: 1_000_000, reference: 'seed' });
      for (let i = 0; i < 500; i++) {
        await call('reserve', { holdId: `h${i}`, amount: 1000, ttlMs: 3_600_000, requestId: `h${i}`, model: 'm', profileId: 'p' });
        await call('settle', { holdId: `h${i}`, lines: [{ unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 5 }] });
      }
      // The funds record, the outbox's list of segments and the two earlier layouts' keys (known
      // absent; all read on every turn), and at most the last hold's key: never one per hold or segment.
      expect(actor.cachedValues).toBeLessThanOrEqual(5);
      expect(store.get('FundsHold/acct_mem:pool-3/closed:h7')).toMatchObject({ state: 'settled' });
      // An ended hold is still known, from the state store: a repeat answers the same, a reuse conflicts.
      expect(await call('settle', { holdId: 'h7', lines: [] })).toMatchObject({ state: 'settled', charged: 5 });
      await expect(call('reserve', { holdId: 'h7', amount: 1000, ttlMs: 60_000, requestId: 'x', model: 'm', profileId: 'p' })).rejects.toMatchObject({ code: 'hold_state_conflict' });
      expect(await call('getBalance', {})).toMatchObject({ balance: 1_000_000 - 500 * 5, held: 0 });
    } finally {
      await close();
    }
  }, 120_000);

  it('when a lease settles thousands of carved holds in batches, then a chunk of endings is never read back from the store and the activation keeps only the one being filled', async () => {
    const { store, reads, actor, call, close } = await fundsHoldOnFakeSidecar('acct_lease:pool-3');
    try {
      await call('credit', { amount: 1_000_000_000, reference: 'seed' });
      await call('openLease', { leaseId: 'L', amount: 100_000_000, minAmount: 1, ttlMs: 3_600_000 });
      const carved = (carve: number) => ({ holdId: `c${carve}`, amount: 1000, requestId: `c${carve}`, model: 'm', profileId: 'p', carve });
      for (let from = 0; from < 700; from += 7) {
        const settle = Array.from({ length: 7 }, (_, i) => ({ ...carved(from + i), lines: [{ unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 5 }] }));
        await call('leaseBatch', { leaseId: 'L', ttlMs: 3_600_000, settle });
      }
      expect(store.get('FundsHold/acct_lease:pool-3/carved:L:21')).toEqual(expect.stringContaining('"c699"'));
      // Each chunk was written by batches that knew it: never read from the store (it was, once per chunk).
      expect(reads.filter((key) => key.includes('/carved:'))).toEqual([]);
      // The funds record, the outbox's list, the three earlier layouts' keys and the lease's ended
      // record (known absent), and the chunk being filled: not one of the 22 chunks per 32 holds.
      expect(actor.cachedValues).toBeLessThanOrEqual(7);
      // A retried item is found in its chunk, read from the store, not kept (its own `closed:`
      // record, read beside it, is: known absent).
      const cached = actor.cachedValues;
      expect(await call('leaseBatch', { leaseId: 'L', ttlMs: 3_600_000, settle: [{ ...carved(40), lines: [] }] })).toMatchObject({ settled: [{ outcome: { state: 'settled', charged: 5 } }] });
      expect(reads.filter((key) => key.includes('/carved:'))).toEqual(['FundsHold/acct_lease:pool-3/carved:L:1']);
      expect(actor.cachedValues).toBe(cached + 1);
    } finally {
      await close();
    }
  }, 120_000);
});
