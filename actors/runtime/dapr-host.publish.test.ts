// The Dapr host answers an actor call once its turn (state and outbox) has committed and publishes
// after, outside the turns: a caller waits neither for pub/sub nor for the confirmation round's
// registration, and neither does the actor's next turn. The events stay in the stored outbox
// until the ledger confirms them. Over real HTTP to a stand-in sidecar (test/support/fake-dapr-sidecar.ts).

import { ActorId, DaprClient } from '@dapr/dapr';
import { FundsHold } from '../funds-hold/FundsHold';
import { tracing as sdkTrace } from '@opentelemetry/sdk-node';
import { DaprSidecar } from '../../lib/dapr-http';
import { contextFromHeaders, runWithContext } from '../../lib/request-context';
import { startTracing, stopTracing } from '../../lib/tracing';
import { billingEvent, MAX_EVENTS_PER_MESSAGE, usageEvent, type EventEnvelope, type Topic } from '../../lib/events';
import { passes } from '../../test/support/eventually';
import { startFakeSidecar, storedOutbox, type FakeSidecar } from '../../test/support/fake-dapr-sidecar';
import { daprActorClass, messagesOf } from './dapr-host';
import type { OutboxLedger } from './dapr-outbox';
import type { ActorCallResult } from './port';

type Actor = Record<string, (arg: unknown) => Promise<ActorCallResult<Record<string, unknown>>>> & { receiveReminder(payload: unknown): Promise<void> };

const within = <T>(promise: Promise<T>, ms: number) => Promise.race([promise, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms))]);

/**
 * A FundsHold adapter over a stand-in sidecar whose pub/sub takes each message but does not answer
 * until `releasePubSub` (the messages it was handed are in `messages`), then cleaned up.
 */
async function withHangingPubSub(actorId: string, ledger: OutboxLedger, body: (t: { actor: Actor; outbox: () => string[]; messages: { topic: Topic; events: EventEnvelope[] }[]; releasePubSub: () => void; sidecar: FakeSidecar }) => Promise<void>): Promise<void> {
  const sidecar = await startFakeSidecar();
  const client = new DaprSidecar('127.0.0.1', sidecar.port);
  const messages: { topic: Topic; events: EventEnvelope[] }[] = [];
  let releasePubSub!: () => void;
  const pubSubBack = new Promise<void>((resolve) => (releasePubSub = resolve));
  try {
    const Adapter = daprActorClass(FundsHold, async (topic, events) => {
      messages.push({ topic, events: [...events] });
      await pubSubBack; // pub/sub does not answer until the test lets it
    }, client, undefined, ledger);
    const actor = new Adapter(new DaprClient({ daprHost: '127.0.0.1', daprPort: String(sidecar.port) }), new ActorId(actorId)) as unknown as Actor;
    await body({ actor, outbox: () => storedOutbox(sidecar, `FundsHold/${actorId}`), messages, releasePubSub, sidecar });
    // Let the SDK's client finish with the sidecar before it goes.
    await new Promise((resolve) => setTimeout(resolve, 500));
  } finally {
    releasePubSub();
    await client.close();
    await sidecar.close();
  }
}

describe('the Dapr host adapter, publishing', () => {
  it('when pub/sub hangs, then calls are still answered once committed, the events stay in the stored outbox, and leave it once the ledger confirms them', async () => {
    const ledgerHolds = new Set<string>();
    const ledger: OutboxLedger = { stored: async (ids) => new Set(ids.filter((id) => ledgerHolds.has(id))), deliver: async () => new Set() };
    await withHangingPubSub('acct_pub:pool-3', ledger, async ({ actor, outbox, messages, releasePubSub, sidecar }) => {
      const published = () => messages.flatMap((message) => message.events.map((event) => event.id));
      const first = await within(actor.credit({ amount: 1000, reference: 'one' }), 5000);
      expect(first).toMatchObject({ ok: true });
      // The next turn does not wait behind the first one's publish either.
      const second = await within(actor.credit({ amount: 500, reference: 'two' }), 5000);
      expect(second).toMatchObject({ ok: true, result: { balance: 1500 } });
      expect(outbox()).toHaveLength(2);
      // Handed to pub/sub (one publish at a time per activation: the second goes once the first is answered).
      expect(published()).toEqual([outbox()[0]]);

      // Pub/sub answers: a confirmation round is registered; the events stay until the ledger has them.
      releasePubSub();
      const round = await passes(async () => {
        const name = sidecar.reminders.find((n) => n.startsWith('__outbox'));
        if (!name) throw new Error('no confirmation round registered yet');
        return name;
      });
      await passes(async () => expect(published()).toEqual(outbox()));
      expect(outbox()).toHaveLength(2);
      for (const id of outbox()) ledgerHolds.add(id);
      await actor.receiveReminder({ name: round, data: null });
      // The round's turn committed the confirmed events out of the stored outbox.
      expect(outbox()).toEqual([]);
    });
  }, 60_000);

  it('when turns commit while a publish is under way, then their events go together as one message per topic once it is answered', async () => {
    const ledger: OutboxLedger = { stored: async () => new Set(), deliver: async () => new Set() };
    await withHangingPubSub('acct_batch:pool-3', ledger, async ({ actor, outbox, messages, releasePubSub }) => {
      const sent = () => messages.map(({ topic, events }) => ({ topic, ids: events.map((event) => event.id) }));
      for (let i = 0; i < 5; i++) expect(await within(actor.credit({ amount: 100, reference: `b${i}` }), 5000)).toMatchObject({ ok: true });
      expect(outbox()).toHaveLength(5);
      expect(sent()).toEqual([{ topic: 'billing', ids: [outbox()[0]] }]);
      releasePubSub();
      await passes(async () => expect(sent()).toEqual([{ topic: 'billing', ids: [outbox()[0]] }, { topic: 'billing', ids: outbox().slice(1) }]));
    });
  }, 60_000);

  it('when many events of both topics are ready, then each message holds one topic, at most MAX_EVENTS_PER_MESSAGE events, in their order', () => {
    const picked = Array.from({ length: MAX_EVENTS_PER_MESSAGE + 10 }, (_, i) => [
      { event: billingEvent(`b${i}`, 0, { kind: 'charge', accountId: 'a', pool: 'p', balanceDelta: -1, amount: 1 }), context: undefined },
      { event: usageEvent(`u${i}`, 0, { accountId: 'a', pool: 'p', holdId: 'h', requestId: 'r', model: 'm', profileId: 'pr', lines: [], charged: 1 }), context: undefined },
    ]).flat();
    const messages = messagesOf(picked).map((message) => message.map(({ event }) => event.id));
    expect(messages.map((ids) => ids.length)).toEqual([MAX_EVENTS_PER_MESSAGE, 10, MAX_EVENTS_PER_MESSAGE, 10]);
    expect(messages.flat().filter((id) => id.startsWith('b'))).toEqual(picked.filter(({ event }) => event.topic === 'billing').map(({ event }) => event.id));
    for (const ids of messages) expect(new Set(ids.map((id) => id[0])).size).toBe(1);
  });
});

describe('the Dapr host adapter, publishing traced', () => {
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const exporter = new sdkTrace.InMemorySpanExporter();
  beforeAll(() => expect(startTracing('actors', { exporter })).toBe(true));
  afterAll(() => stopTracing());

  it('when the call that commits an event came with a tracestate, then the event carries it beside its publish span\'s traceparent, for the ledger\'s consume', async () => {
    const ledger: OutboxLedger = { stored: async () => new Set(), deliver: async () => new Set() };
    await withHangingPubSub('acct_traced:pool-3', ledger, async ({ actor, messages, releasePubSub }) => {
      const call = contextFromHeaders({ traceparent: `00-${TRACE}-00f067aa0ba902b7-01`, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' });
      expect(await runWithContext(call, () => actor.credit({ amount: 1000, reference: 'traced' }))).toMatchObject({ ok: true });
      releasePubSub();
      const publish = await passes(async () => {
        const ended = exporter.getFinishedSpans().find((span) => span.name.startsWith('publish '));
        if (!ended) throw new Error('no publish span ended yet');
        return ended;
      });
      expect(messages).toHaveLength(1);
      const [event] = messages[0].events;
      expect(publish.name).toBe(`publish ${event.topic}`);
      expect(event.traceparent).toBe(`00-${TRACE}-${publish.spanContext().spanId}-01`);
      expect(event.tracestate).toBe('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    });
  }, 60_000);
});
