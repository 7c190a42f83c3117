// The Dapr host's stored outbox, one key per turn's batch of events beside the list of batches: a
// turn writes its own events, never the earlier unconfirmed events again, and the list only when a
// batch leaves (a fresh activation reads on past the listed batches, so none is lost); the
// outboxes of earlier versions (one array under `__outbox`, one key per event indexed flat or by
// segments) are still read and moved; and an activation that dies before publishing (a crash)
// leaves its events stored, published by the next one, none lost, none twice. Over real HTTP to a stand-in sidecar (test/support/fake-dapr-sidecar.ts).

import { ActorId, DaprClient } from '@dapr/dapr';
import { FundsHold } from '../funds-hold/FundsHold';
import { DaprSidecar } from '../../lib/dapr-http';
import { billingEvent, type EventEnvelope } from '../../lib/events';
import { passes } from '../../test/support/eventually';
import { startFakeSidecar, storedBatchEvents, storedOutbox, type FakeSidecar } from '../../test/support/fake-dapr-sidecar';
import { daprActorClass, type DaprPublisher } from './dapr-host';
import type { OutboxLedger } from './dapr-outbox';
import type { ActorCallResult } from './port';

type Actor = Record<string, (arg: unknown) => Promise<ActorCallResult<Record<string, unknown>>>> & { receiveReminder(payload: unknown): Promise<void> };

/** A ledger that stores events by id (idempotent), and counts what it was handed. */
function fakeLedger() {
  const held = new Map<string, number>();
  const take = (event: EventEnvelope) => held.set(event.id, (held.get(event.id) ?? 0) + 1);
  const ledger: OutboxLedger = { stored: async (ids) => new Set(ids.filter((id) => held.has(id))), deliver: async (events) => new Set(events.map((e) => (take(e), e.id))) };
  return { ledger, held, take };
}

/** Credits as an earlier version stored them in its outbox: `<prefix>-1`, `<prefix>-2`, … */
const earlierEvents = (prefix: string, count: number) => Array.from({ length: count }, (_, i) =>
  billingEvent(`${prefix}-${i + 1}`, 0, { kind: 'credit', accountId: 'acct_ob', pool: 'pool-3', balanceDelta: i + 1, amount: i + 1, reference: `${prefix}-${i + 1}` }));

/** A publisher whose every event pub/sub takes reaches the ledger (`take`), its id noted in `published`. */
const deliveringTo = (take: (event: EventEnvelope) => void, published: string[]): DaprPublisher => async (_topic, events) => {
  for (const event of events) {
    published.push(event.id);
    take(event);
  }
};

describe('the Dapr host adapter, its stored outbox', () => {
  let sidecar: FakeSidecar;
  let client: DaprSidecar;
  let sdk: DaprClient;
  const ACTOR = 'FundsHold/acct_ob:pool-3';
  const index = () => storedOutbox(sidecar, ACTOR);
  const eventKeys = () => [...sidecar.store.keys()].filter((key) => key.startsWith(`${ACTOR}/__outbox:event:`)).sort();
  const batchKeys = () => [...sidecar.store.keys()].filter((key) => key.startsWith(`${ACTOR}/__outbox:batch:`)).sort();
  const outboxKeys = () => [...sidecar.store.keys()].filter((key) => key.startsWith(`${ACTOR}/__outbox`)).sort();

  beforeEach(async () => {
    sidecar = await startFakeSidecar();
    client = new DaprSidecar('127.0.0.1', sidecar.port);
    sdk = new DaprClient({ daprHost: '127.0.0.1', daprPort: String(sidecar.port) });
  });

  afterEach(async () => {
    // Let the SDK's client finish with the sidecar before it goes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.close();
    await sidecar.close();
  });

  /** The latest confirmation round registered (registered after the publishes, in the background). */
  const round = () => passes(async () => {
    const name = sidecar.reminders.filter((n) => n.startsWith('__outbox')).at(-1);
    if (!name) throw new Error('no confirmation round registered yet');
    return name;
  });

  const actorOn = (publish: DaprPublisher, ledger: OutboxLedger) => {
    const Adapter = daprActorClass(FundsHold, publish, client, undefined, ledger);
    return new Adapter(sdk, new ActorId('acct_ob:pool-3')) as unknown as Actor;
  };

  it('when events stay unconfirmed turn after turn, then each turn writes only its own batch of events, never the earlier events again nor the list of batches', async () => {
    const { ledger } = fakeLedger();
    const actor = actorOn(async () => undefined, ledger);
    for (let i = 0; i < 60; i++) expect(await actor.credit({ amount: 1000, reference: `r${i}` })).toMatchObject({ ok: true });
    expect(index()).toHaveLength(60);
    expect(batchKeys()).toHaveLength(60);
    expect(eventKeys()).toEqual([]);
    expect(sidecar.store.has(`${ACTOR}/__outbox:batches`)).toBe(false);
    // The 60th turn: its batch and the funds record, as the first.
    // With the whole outbox rewritten it carried all 60 events (over 20 KB); with a flat index of
    // ids, all 60 ids (~40 bytes each); with the list of batches, 60 numbers.
    const first = sidecar.transactionBytes[0];
    const last = sidecar.transactionBytes[sidecar.transactionBytes.length - 1];
    expect(last).toBeLessThan(first + 20);
  });

  it('when 64 batches would be left out of the stored list, then the turn that adds the 64th writes the list, and the next ones are left out again', async () => {
    const { ledger } = fakeLedger();
    const actor = actorOn(async () => undefined, ledger);
    for (let i = 0; i < 63; i++) await actor.credit({ amount: 1000, reference: `r${i}` });
    expect(sidecar.store.has(`${ACTOR}/__outbox:batches`)).toBe(false);
    await actor.credit({ amount: 1000, reference: 'r63' });
    expect(sidecar.store.get(`${ACTOR}/__outbox:batches`)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    for (let i = 64; i < 70; i++) await actor.credit({ amount: 1000, reference: `r${i}` });
    expect(sidecar.store.get(`${ACTOR}/__outbox:batches`)).toHaveLength(64);
    expect(index()).toHaveLength(70);
    expect(batchKeys()).toHaveLength(70);
  });

  it('when a fresh activation finds batches the list leaves out (added after a round wrote it), then it reads on until a number is missing, publishes each of their events once, and they leave once confirmed', async () => {
    const { ledger, held, take } = fakeLedger();
    const published: EventEnvelope[] = [];
    const first = actorOn(async (_topic, events) => void published.push(...events), ledger);
    for (let i = 0; i < 3; i++) await first.credit({ amount: 1000, reference: `a${i}` });
    await passes(async () => expect(published).toHaveLength(3));
    take(published[0]);
    await first.receiveReminder({ name: await round(), data: null });
    expect(sidecar.store.get(`${ACTOR}/__outbox:batches`)).toEqual([2, 3]);
    // 40 more turns: batches 4 to 43, none of them listed; then the activation dies unpublished.
    const dying = actorOn(async () => new Promise<void>(() => undefined), ledger);
    for (let i = 0; i < 40; i++) await dying.credit({ amount: 1000, reference: `b${i}` });
    expect(sidecar.store.get(`${ACTOR}/__outbox:batches`)).toEqual([2, 3]);
    const stored = index();
    expect(stored).toHaveLength(42);
    const reads = sidecar.reads.length;
    const republished: string[] = [];
    const next = actorOn(deliveringTo(take, republished), ledger);
    expect(await next.credit({ amount: 1000, reference: 'a0' })).toMatchObject({ ok: true, result: { applied: false } });
    // The listed two, then the 40 past them (batch 4 alone, then 16 at a time), up to the first missing number (44).
    const batchReads = sidecar.reads.slice(reads).filter((key) => key.startsWith(`${ACTOR}/__outbox:batch:`));
    expect(batchReads).toContain(`${ACTOR}/__outbox:batch:44`);
    expect(batchReads).not.toContain(`${ACTOR}/__outbox:batch:60`);
    await passes(async () => expect([...republished].sort()).toEqual([...stored].sort()));
    await next.receiveReminder({ name: await round(), data: null });
    expect(index()).toEqual([]);
    expect(batchKeys()).toEqual([]);
    expect(sidecar.store.get(`${ACTOR}/__outbox:batches`)).toEqual([]);
    for (const id of stored) expect(held.get(id)).toBe(1);
    // A turn after that numbers its batch 1 again, and a fresh activation finds it.
    await next.credit({ amount: 1000, reference: 'c0' });
    expect(batchKeys()).toEqual([`${ACTOR}/__outbox:batch:1`]);
    const again: string[] = [];
    const last = actorOn(deliveringTo(take, again), ledger);
    await last.credit({ amount: 1000, reference: 'c0' });
    await passes(async () => expect(again).toHaveLength(1));
  });

  it('when the ledger confirms events, then the batches it holds whole leave in one transaction, and one it holds in part keeps the rest', async () => {
    const { ledger, take } = fakeLedger();
    const published: EventEnvelope[] = [];
    const actor = actorOn(async (_topic, events) => void published.push(...events), ledger);
    for (let i = 0; i < 3; i++) await actor.credit({ amount: 100_000, reference: `c${i}` });
    await passes(async () => expect(published).toHaveLength(3));
    for (const event of published.slice(0, 2)) take(event);
    await actor.receiveReminder({ name: await round(), data: null });
    expect(index()).toEqual([published[2].id]);
    expect(batchKeys()).toEqual([`${ACTOR}/__outbox:batch:3`]);
    expect(sidecar.store.get(`${ACTOR}/__outbox:batches`)).toEqual([3]);
    // One turn, two events (one carved hold's usage with its charge, another's release): the ledger holds the release only.
    await actor.openLease({ leaseId: 'l1', amount: 10_000, minAmount: 1, ttlMs: 60_000 });
    const settle = { holdId: 'h1', amount: 1000, requestId: 'r', model: 'm', profileId: 'p', carve: 0, lines: [{ unit: 'TEXT_INPUT', quantity: 1, unitPrice: 1 }] };
    const release = { holdId: 'h2', amount: 1000, requestId: 'r2', model: 'm', profileId: 'p', carve: 1, reason: 'cancelled' };
    expect(await actor.leaseBatch({ leaseId: 'l1', ttlMs: 60_000, settle: [settle], release: [release] })).toMatchObject({ ok: true });
    await passes(async () => expect(published.map((e) => e.id)).toContain('h2:release'));
    expect(index()).toEqual([published[2].id, 'h1:usage', 'h2:release']);
    // The settle's one event: its usage, carrying its charge.
    expect(published.find((e) => e.id === 'h1:usage')).toMatchObject({ topic: 'usage', data: { charged: 1, bill: { id: 'h1:charge', kind: 'charge', balanceDelta: -1, amount: 1 } } });
    take(published.find((e) => e.id === 'h2:release')!);
    take(published[2]);
    await actor.receiveReminder({ name: await round(), data: null });
    expect(index()).toEqual(['h1:usage']);
    expect(batchKeys()).toEqual([`${ACTOR}/__outbox:batch:4`]);
    expect(storedBatchEvents(sidecar, `${ACTOR}/__outbox:batch:4`)).toEqual([published.find((e) => e.id === 'h1:usage')]);
    // Each batch is stored as one JSON text (daprd takes a string value as it is).
    expect(typeof sidecar.store.get(`${ACTOR}/__outbox:batch:4`)).toBe('string');
  });

  it('when the stored outbox is in the earliest layout (one array), then its events are published, moved to a batch by the next turn, and leave once confirmed', async () => {
    const old = earlierEvents('old', 2);
    sidecar.store.set(`${ACTOR}/__outbox`, old);
    const { ledger, take } = fakeLedger();
    const published: string[] = [];
    const actor = actorOn(async (_topic, events) => void published.push(...events.map((event) => event.id)), ledger);
    expect(await actor.credit({ amount: 1000, reference: 'new' })).toMatchObject({ ok: true });
    expect(sidecar.store.has(`${ACTOR}/__outbox`)).toBe(false);
    expect(index().slice(0, 2)).toEqual(['old-1', 'old-2']);
    expect(index()).toHaveLength(3);
    expect(batchKeys()).toEqual([`${ACTOR}/__outbox:batch:0`, `${ACTOR}/__outbox:batch:1`]);
    await passes(async () => expect([...published].sort()).toEqual([...index()].sort()));
    for (const id of index()) take({ id } as EventEnvelope);
    await actor.receiveReminder({ name: await round(), data: null });
    expect(index()).toEqual([]);
    expect(outboxKeys()).toEqual([`${ACTOR}/__outbox:batches`]);
  });

  it('when the stored outbox is a flat index of ids with a key per event, then its events are published, moved to a batch in the next turn, and leave once confirmed', async () => {
    const old = earlierEvents('flat', 2);
    sidecar.store.set(`${ACTOR}/__outbox:ids`, old.map((event) => event.id));
    for (const event of old) sidecar.store.set(`${ACTOR}/__outbox:event:${event.id}`, event);
    const { ledger, take } = fakeLedger();
    const published: string[] = [];
    const actor = actorOn(async (_topic, events) => void published.push(...events.map((event) => event.id)), ledger);
    expect(await actor.credit({ amount: 1000, reference: 'new' })).toMatchObject({ ok: true });
    expect(sidecar.store.has(`${ACTOR}/__outbox:ids`)).toBe(false);
    expect(sidecar.store.get(`${ACTOR}/__outbox:batches`)).toEqual([0, 1]);
    expect(index().slice(0, 2)).toEqual(['flat-1', 'flat-2']);
    expect(eventKeys()).toEqual([]);
    await passes(async () => expect([...published].sort()).toEqual([...index()].sort()));
    for (const id of index()) take({ id } as EventEnvelope);
    await actor.receiveReminder({ name: await round(), data: null });
    expect(index()).toEqual([]);
    expect(outboxKeys()).toEqual([`${ACTOR}/__outbox:batches`]);
  });

  it('when the stored outbox is in segments of ids with a key per event (the layout before batches), then the next turn moves the unconfirmed events to a batch and deletes every old key; none is lost or published twice', async () => {
    const old = earlierEvents('seg', 3);
    sidecar.store.set(`${ACTOR}/__outbox:segments`, [1, 2]);
    sidecar.store.set(`${ACTOR}/__outbox:segment:1`, ['seg-1', 'seg-2']);
    sidecar.store.set(`${ACTOR}/__outbox:segment:2`, ['seg-3']);
    for (const event of old) sidecar.store.set(`${ACTOR}/__outbox:event:${event.id}`, event);
    const { ledger, take, held } = fakeLedger();
    take(old[1]); // already stored by the ledger: published again at most, stored once
    const published: string[] = [];
    const actor = actorOn(deliveringTo(take, published), ledger);
    expect(await actor.credit({ amount: 1000, reference: 'new' })).toMatchObject({ ok: true });
    expect(outboxKeys()).toEqual([`${ACTOR}/__outbox:batch:0`, `${ACTOR}/__outbox:batch:1`, `${ACTOR}/__outbox:batches`]);
    expect(index().slice(0, 3)).toEqual(['seg-1', 'seg-2', 'seg-3']);
    expect(storedBatchEvents(sidecar, `${ACTOR}/__outbox:batch:0`)).toEqual(old);
    await passes(async () => expect(published).toHaveLength(4));
    expect(new Set(published).size).toBe(4);
    await actor.receiveReminder({ name: await round(), data: null });
    expect(index()).toEqual([]);
    expect(outboxKeys()).toEqual([`${ACTOR}/__outbox:batches`]);
    for (const id of ['seg-1', 'seg-3']) expect(held.get(id)).toBe(1);
  });

  it('when a batch is stored as an array of events (before batches were text), then its events are published, kept beside the new batches, and leave once confirmed', async () => {
    const old = earlierEvents('array', 2);
    sidecar.store.set(`${ACTOR}/__outbox:batches`, [0]);
    sidecar.store.set(`${ACTOR}/__outbox:batch:0`, old);
    const { ledger, take, held } = fakeLedger();
    const published: string[] = [];
    const actor = actorOn(deliveringTo(take, published), ledger);
    expect(await actor.credit({ amount: 1000, reference: 'new' })).toMatchObject({ ok: true });
    expect(index().slice(0, 2)).toEqual(['array-1', 'array-2']);
    expect(index()).toHaveLength(3);
    await passes(async () => expect([...published].sort()).toEqual([...index()].sort()));
    await actor.receiveReminder({ name: await round(), data: null });
    expect(index()).toEqual([]);
    expect(outboxKeys()).toEqual([`${ACTOR}/__outbox:batches`]);
    for (const id of ['array-1', 'array-2']) expect(held.get(id)).toBe(1);
  });

  it('when an activation dies with its events committed but not published, then the next activation publishes each stored event once, and the ledger gets every one', async () => {
    const { ledger, held, take } = fakeLedger();
    // The first activation's pub/sub never takes anything (it dies before it could).
    const dying = actorOn(async () => new Promise<void>(() => undefined), ledger);
    for (let i = 0; i < 5; i++) expect(await dying.credit({ amount: 1000, reference: `d${i}` })).toMatchObject({ ok: true });
    const committed = index();
    expect(committed).toHaveLength(5);

    // The next activation (the actors app restarted): a fresh adapter over the same state.
    const published: string[] = [];
    const next = actorOn(deliveringTo(take, published), ledger);
    // Its first turn repeats a credit already applied: nothing new, and every stored event goes out.
    expect(await next.credit({ amount: 1000, reference: 'd4' })).toMatchObject({ ok: true, result: { applied: false } });
    await passes(async () => expect([...published].sort()).toEqual([...committed].sort()));
    await next.receiveReminder({ name: await round(), data: null });
    expect(index()).toEqual([]);
    expect(batchKeys()).toEqual([]);
    expect([...held.keys()].sort()).toEqual([...committed].sort());
    for (const count of held.values()) expect(count).toBe(1);
    expect(published).toHaveLength(committed.length);
  });
});
