// The Dapr host answers an actor call once its turn (state and outbox) has committed and publishes
// after, outside the turns: a caller waits neither for pub/sub nor for the confirmation round's
// registration, and neither does the actor's next turn. The events stay in the stored outbox
// until the ledger confirms them. Over real HTTP to a stand-in sidecar (test/support/fake-dapr-sidecar.ts).

import { ActorId, DaprClient } from '@dapr/dapr';
import { FundsHold } from '../funds-hold/FundsHold';
import { DaprSidecar } from '../../lib/dapr-http';
import type { EventEnvelope } from '../../lib/events';
import { passes } from '../../test/support/eventually';
import { startFakeSidecar } from '../../test/support/fake-dapr-sidecar';
import { daprActorClass } from './dapr-host';
import type { OutboxLedger } from './dapr-outbox';
import type { ActorCallResult } from './port';

type Actor = Record<string, (arg: unknown) => Promise<ActorCallResult<Record<string, unknown>>>> & { receiveReminder(payload: unknown): Promise<void> };

const within = <T>(promise: Promise<T>, ms: number) => Promise.race([promise, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms))]);

describe('the Dapr host adapter, publishing', () => {
  it('when pub/sub hangs, then calls are still answered once committed, the events stay in the stored outbox, and leave it once the ledger confirms them', async () => {
    const sidecar = await startFakeSidecar();
    const client = new DaprSidecar('127.0.0.1', sidecar.port);
    const published: EventEnvelope[] = [];
    let releasePubSub!: () => void;
    const pubSubBack = new Promise<void>((resolve) => (releasePubSub = resolve));
    const ledgerHolds = new Set<string>();
    const ledger: OutboxLedger = { stored: async (ids) => new Set(ids.filter((id) => ledgerHolds.has(id))), deliver: async () => new Set() };
    try {
      const Adapter = daprActorClass(FundsHold, async (event) => {
        published.push(event);
        await pubSubBack; // pub/sub does not answer until the test lets it
      }, client, undefined, ledger);
      const actor = new Adapter(new DaprClient({ daprHost: '127.0.0.1', daprPort: String(sidecar.port) }), new ActorId('acct_pub:pool-3')) as unknown as Actor;
      const outbox = () => (sidecar.store.get('FundsHold/acct_pub:pool-3/__outbox:ids') as string[] | undefined) ?? [];

      const first = await within(actor.credit({ amount: 1000, reference: 'one' }), 5000);
      expect(first).toMatchObject({ ok: true });
      // The next turn does not wait behind the first one's publish either.
      const second = await within(actor.credit({ amount: 500, reference: 'two' }), 5000);
      expect(second).toMatchObject({ ok: true, result: { balance: 1500 } });
      expect(outbox()).toHaveLength(2);
      // Handed to pub/sub (one publish at a time per activation: the second goes once the first is answered).
      expect(published.map((event) => event.id)).toEqual([outbox()[0]]);

      // Pub/sub answers: a confirmation round is registered; the events stay until the ledger has them.
      releasePubSub();
      const round = await passes(async () => {
        const name = sidecar.reminders.find((n) => n.startsWith('__outbox'));
        if (!name) throw new Error('no confirmation round registered yet');
        return name;
      });
      await passes(async () => expect(published.map((event) => event.id)).toEqual(outbox()));
      expect(outbox()).toHaveLength(2);
      for (const id of outbox()) ledgerHolds.add(id);
      await actor.receiveReminder({ name: round, data: null });
      // The round's turn committed the confirmed events out of the stored outbox.
      expect(outbox()).toEqual([]);
      // Let the SDK's client finish with the sidecar before it goes.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      releasePubSub();
      await client.close();
      await sidecar.close();
    }
  }, 60_000);
});
