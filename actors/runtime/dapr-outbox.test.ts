import { billingEvent } from '../../lib/events';
import type { DaprSidecar } from '../../lib/dapr-http';
import { ASK_BATCH, daprOutboxLedger, idsOf, OUTBOX_CONFIRM_FIRST_MS, OUTBOX_CONFIRM_MAX_MS, OutboxIndex, OutboxTracker } from './dapr-outbox';

const event = (n: number) => billingEvent(`e${n}`, 0, { kind: 'credit', accountId: 'a', pool: 'pool-3', balanceDelta: n, amount: n, reference: `r${n}` });

describe('the Dapr outbox kept until the ledger confirms', () => {
  it('when events are published, then they stay in the stored outbox until the ledger confirms them, and only those leave', () => {
    const tracker = new OutboxTracker(() => 0);
    const index = new OutboxIndex();
    const first = tracker.next(index.segments, [event(1), event(2)])!;
    // A segment only added leaves the stored list as it is (a fresh activation reads on past it).
    expect(first).toEqual({ writes: new Map([[1, ['e1', 'e2']]]), listChanged: false, added: true, removed: [] });
    index.apply(first);
    expect({ segments: index.segments, size: index.size, highest: index.highest }).toEqual({ segments: new Map([[1, ['e1', 'e2']]]), size: 2, highest: 1 });
    for (const id of tracker.due(() => idsOf(index.segments), false)) tracker.sent(id);
    // Published is not confirmed: a turn with no events leaves the outbox as it is.
    expect(tracker.next(index.segments, [])).toBeUndefined();
    tracker.confirm(['e2']);
    // The thinned segment is written again, the turn's events are a new segment; the confirmed event's own key is removed.
    expect(tracker.next(index.segments, [event(3)])).toEqual({ segments: new Map([[1, ['e1']], [2, ['e3']]]), writes: new Map([[1, ['e1']], [2, ['e3']]]), listChanged: false, added: true, removed: ['e2'] });
    // Without new events the list of segments is unchanged.
    const thinned = tracker.next(index.segments, [])!;
    expect(thinned).toEqual({ segments: new Map([[1, ['e1']]]), writes: new Map([[1, ['e1']]]), listChanged: false, added: false, removed: ['e2'] });
    index.apply(thinned);
    tracker.committed();
    expect({ segments: index.segments, size: index.size, highest: index.highest }).toEqual({ segments: new Map([[1, ['e1']]]), size: 1, highest: 1 });
  });

  it('when every id of a segment is confirmed, then the segment is deleted and leaves the list; a turn writes only its own ids however long the outbox', () => {
    const tracker = new OutboxTracker(() => 0);
    const stored = new Map([[1, ['e1', 'e2']], [2, ['e3']], [3, Array.from({ length: 1000 }, (_, i) => `old${i}`)]]);
    tracker.confirm(['e1', 'e2']);
    const change = tracker.next(stored, [event(4)])!;
    expect(change.writes).toEqual(new Map([[1, undefined], [4, ['e4']]]));
    expect([...change.segments!.keys()]).toEqual([2, 3, 4]);
    // A segment left: the list is written (with the added one in it).
    expect(change).toMatchObject({ listChanged: true, added: true });
    expect(change.removed).toEqual(['e1', 'e2']);
  });

  it('when a turn only adds its events, then the stored segments are not walked: its segment is numbered after the highest it is told, and the index takes it last', () => {
    const tracker = new OutboxTracker(() => 0);
    const index = new OutboxIndex();
    for (const n of [3, 4, 7]) index.keep(n, [`old${n}a`, `old${n}b`]);
    // Any walk of the stored segments throws.
    const walked = () => {
      throw new Error('the stored segments were walked');
    };
    const unwalkable = Object.assign(new Map(index.segments), { [Symbol.iterator]: walked, keys: walked, values: walked, entries: walked, forEach: walked });
    const change = tracker.next(unwalkable, [event(1)], undefined, index.highest)!;
    expect(change).toEqual({ writes: new Map([[8, ['e1']]]), listChanged: false, added: true, removed: [] });
    index.apply(change);
    expect({ numbers: [...index.segments.keys()], size: index.size, highest: index.highest }).toEqual({ numbers: [3, 4, 7, 8], size: 7, highest: 8 });
    // A turn that removes walks them, and the index is then the change's: the highest number is that of what is left.
    tracker.confirm(['old7a', 'old7b', 'e1']);
    const removal = tracker.next(index.segments, [], undefined, index.highest)!;
    expect(removal).toMatchObject({ writes: new Map([[7, undefined], [8, undefined]]), listChanged: true, removed: ['old7a', 'old7b', 'e1'] });
    index.apply(removal);
    expect({ numbers: [...index.segments.keys()], size: index.size, highest: index.highest }).toEqual({ numbers: [3, 4], size: 4, highest: 4 });
    index.clear();
    expect({ numbers: [...index.segments.keys()], size: index.size, highest: index.highest }).toEqual({ numbers: [], size: 0, highest: 0 });
  });

  it('when the outbox was read from an earlier layout (segment 0), then that segment is written whatever changes, and not deleted (it was never stored) once emptied', () => {
    const tracker = new OutboxTracker(() => 0);
    const earlier = new Map([[0, ['x1', 'x2']]]);
    expect(tracker.next(earlier, [], new Set([0]))).toEqual({ segments: new Map([[0, ['x1', 'x2']]]), writes: new Map([[0, ['x1', 'x2']]]), listChanged: true, added: false, removed: [] });
    tracker.confirm(['x1', 'x2']);
    expect(tracker.next(earlier, [event(1)], new Set([0]))).toEqual({ segments: new Map([[1, ['e1']]]), writes: new Map([[1, ['e1']]]), listChanged: true, added: true, removed: ['x1', 'x2'] });
  });

  it('when a turn runs, then only events not yet published go out; a confirmation round also sends again those published a round ago', () => {
    let now = 10_000;
    const tracker = new OutboxTracker(() => now);
    const pending = ['e1', 'e2'];
    tracker.sent('e1');
    expect(tracker.due(() => pending, true)).toEqual(['e2']);
    now += OUTBOX_CONFIRM_FIRST_MS;
    expect(tracker.due(() => pending, true)).toEqual(['e1', 'e2']);
  });

  it('when the activation has walked its outbox once, then a turn publishes only its own events and those whose publish failed, without walking the outbox', () => {
    const tracker = new OutboxTracker(() => 0);
    const walk = jest.fn(() => ['old1', 'old2']);
    // A fresh activation: every stored event is due.
    expect(tracker.due(walk, false, [])).toEqual(['old1', 'old2']);
    for (const id of ['old1', 'old2']) tracker.sent(id);
    walk.mockClear();
    expect(tracker.due(walk, false, ['e1'])).toEqual(['e1']);
    tracker.sent('e1');
    tracker.unsent('old2');
    expect(tracker.due(walk, false, ['e2'])).toEqual(['old2', 'e2']);
    for (const id of ['old2', 'e2']) tracker.sent(id);
    expect(walk).not.toHaveBeenCalled();
    // Confirmed before it was sent again: it has left the outbox, nothing to retry.
    tracker.unsent('e1');
    tracker.confirm(['e1']);
    tracker.committed();
    expect(tracker.due(walk, false, [])).toEqual([]);
    // After a failed commit the next turn walks the whole outbox again: what that commit may have stored goes too.
    tracker.unknown();
    walk.mockReturnValue(['old1', 'old2', 'e2', 'maybe']);
    expect(tracker.due(walk, false, [])).toEqual(['maybe']);
    expect(walk).toHaveBeenCalledTimes(1);
  });

  it('when the ledger lacks events published a round ago, round after round, then the pause doubles up to its bound, and starts short again once none is left', () => {
    let now = 0;
    const tracker = new OutboxTracker(() => now);
    tracker.sent('old');
    now += OUTBOX_CONFIRM_FIRST_MS;
    const pauses = Array.from({ length: 7 }, () => {
      tracker.answered(['old'], new Set());
      return tracker.nextDelay(3);
    });
    expect(pauses).toEqual([1, 2, 4, 8, 15, 15, 15].map((s) => s * 1000));
    expect(Math.max(...pauses)).toBe(OUTBOX_CONFIRM_MAX_MS);
    expect(tracker.nextDelay(0)).toBe(0);
    expect(tracker.nextDelay(1)).toBe(OUTBOX_CONFIRM_FIRST_MS);
    // A ledger that cannot be asked counts as lagging too.
    tracker.answered(['old'], undefined);
    expect(tracker.nextDelay(1)).toBe(2000);
  });

  it('when every event published a round ago is stored and only newer ones are not yet, then the pause stays the first one (a steady load is not an outage)', () => {
    let now = 0;
    const tracker = new OutboxTracker(() => now);
    const delays: number[] = [];
    for (let round = 0; round < 6; round++) {
      tracker.sent(`e${round}`);
      now += OUTBOX_CONFIRM_FIRST_MS;
      tracker.sent(`fresh${round}`); // published just before the round: still in transit
      tracker.answered([`e${round}`, `fresh${round}`], new Set([`e${round}`]));
      delays.push(tracker.nextDelay(1));
      tracker.committed();
    }
    expect(delays).toEqual(Array(6).fill(OUTBOX_CONFIRM_FIRST_MS));
  });

  it('when the first round is moved (test mode), then the rounds start there', () => {
    const tracker = new OutboxTracker(() => 0, 60_000);
    expect([tracker.nextDelay(1), tracker.nextDelay(1)]).toEqual([60_000, 60_000]);
  });

  it('when the outbox holds more events than the ledger takes in one question, then it is asked in parts and every stored id comes back', async () => {
    const asked: number[] = [];
    // The ledger's own rule: at most ASK_BATCH ids per call, else 400; it holds the even ones.
    const sidecar = {
      request: async (_method: string, path: string, body: { ids: string[] }) => {
        expect(path).toBe('/v1.0/invoke/ledger/method/events/stored');
        asked.push(body.ids.length);
        if (body.ids.length > ASK_BATCH) return { status: 400, json: { error: 'too many ids' } };
        return { status: 200, json: { stored: body.ids.filter((id) => Number(id.slice(1)) % 2 === 0) } };
      },
    } as unknown as DaprSidecar;
    const ids = Array.from({ length: 2 * ASK_BATCH + 500 }, (_, i) => `e${i}`);
    const held = await daprOutboxLedger(sidecar, 'ledger').stored(ids);
    expect(asked).toEqual([ASK_BATCH, ASK_BATCH, 500]);
    expect(held.size).toBe(ids.length / 2);
    expect(held.has('e2498') && !held.has('e2499')).toBe(true);
  });
});
