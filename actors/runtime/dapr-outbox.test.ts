import { billingEvent } from '../../lib/events';
import { OUTBOX_CONFIRM_FIRST_MS, OUTBOX_CONFIRM_MAX_MS, OutboxTracker } from './dapr-outbox';

const event = (n: number) => billingEvent(`e${n}`, 0, { kind: 'credit', accountId: 'a', pool: 'pool-3', balanceDelta: n, amount: n, reference: `r${n}` });

describe('the Dapr outbox kept until the ledger confirms', () => {
  it('when events are published, then they stay in the stored outbox until the ledger confirms them, and only those leave', () => {
    const tracker = new OutboxTracker(() => 0);
    const stored = tracker.next([], [event(1), event(2)])!;
    expect(stored).toEqual({ ids: ['e1', 'e2'], removed: [] });
    for (const id of tracker.due(stored.ids, false)) tracker.sent(id);
    // Published is not confirmed: a turn with no events leaves the outbox as it is.
    expect(tracker.next(stored.ids, [])).toBeUndefined();
    tracker.confirm(['e2']);
    // The index keeps the others; the confirmed event's own key is removed.
    expect(tracker.next(stored.ids, [event(3)])).toEqual({ ids: ['e1', 'e3'], removed: ['e2'] });
    expect(tracker.next(stored.ids, [])).toEqual({ ids: ['e1'], removed: ['e2'] });
    tracker.committed();
  });

  it('when a turn runs, then only events not yet published go out; a confirmation round also sends again those published a round ago', () => {
    let now = 10_000;
    const tracker = new OutboxTracker(() => now);
    const pending = ['e1', 'e2'];
    tracker.sent('e1');
    expect(tracker.due(pending, false)).toEqual(['e2']);
    expect(tracker.due(pending, true)).toEqual(['e2']);
    now += OUTBOX_CONFIRM_FIRST_MS;
    expect(tracker.due(pending, false)).toEqual(['e2']);
    expect(tracker.due(pending, true)).toEqual(['e1', 'e2']);
  });

  it('when events stay unconfirmed round after round, then the pause doubles up to its bound, and starts short again once none is left', () => {
    const tracker = new OutboxTracker(() => 0);
    const pauses = Array.from({ length: 7 }, () => tracker.nextDelay(3));
    expect(pauses).toEqual([1, 2, 4, 8, 15, 15, 15].map((s) => s * 1000));
    expect(Math.max(...pauses)).toBe(OUTBOX_CONFIRM_MAX_MS);
    expect(tracker.nextDelay(0)).toBe(0);
    expect(tracker.nextDelay(1)).toBe(OUTBOX_CONFIRM_FIRST_MS);
  });

  it('when the first round is moved (test mode), then the rounds start there', () => {
    const tracker = new OutboxTracker(() => 0, 60_000);
    expect([tracker.nextDelay(1), tracker.nextDelay(1)]).toEqual([60_000, 60_000]);
  });
});
