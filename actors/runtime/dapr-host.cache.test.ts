// The Dapr host adapter keeps in memory only the state its actor reads, kept current by its
// writes: a value only written (each ended hold's record) is not kept for the activation's life.
// The adapter talks to a stand-in for its daprd sidecar over real HTTP (test/support/fake-dapr-sidecar.ts).

import { ActorId, DaprClient } from '@dapr/dapr';
import { FundsHold } from '../funds-hold/FundsHold';
import { DaprSidecar } from '../../lib/dapr-http';
import { daprActorClass } from './dapr-host';
import type { ActorCallResult } from './port';
import { startFakeSidecar } from '../../test/support/fake-dapr-sidecar';

describe('the Dapr host adapter, memory', () => {
  it('when hundreds of holds are reserved and settled on one account, then the activation caches what it reads, not each ended hold', async () => {
    const { port, store, close } = await startFakeSidecar();
    const sidecar = new DaprSidecar('127.0.0.1', port);
    try {
      const Adapter = daprActorClass(FundsHold, async () => undefined, sidecar);
      const actor = new Adapter(new DaprClient({ daprHost: '127.0.0.1', daprPort: String(port) }), new ActorId('acct_mem:pool-3')) as unknown as
        Record<string, (arg: unknown) => Promise<ActorCallResult<Record<string, unknown>>>> & { cachedValues: number };
      const call = async (method: string, arg: unknown) => {
        const outcome = await actor[method](arg);
        if (!outcome.ok) throw Object.assign(new Error(outcome.error.message), outcome.error);
        return outcome.result;
      };
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
      await sidecar.close();
      await close();
    }
  }, 120_000);
});
