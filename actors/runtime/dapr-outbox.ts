// The Dapr host's outbox, kept until the ledger confirms. Pub/sub taking an event (daprd's 2xx)
// does not mean the ledger stored it: daprd gives a delivery up after its retries and the event
// is gone from the stream (docs/money.md). So an actor keeps every event it emitted in its
// outbox state until the ledger answers, by event id, that it holds it; a reminder asks in one
// batched call, forgets the confirmed events and publishes the others again, with a growing pause
// while they stay unconfirmed, until none is left.

import type { DaprSidecar } from '../../lib/dapr-http';
import type { EventEnvelope } from '../../lib/events';

/** The first confirmation round after a publish, and the longest pause between two rounds. */
export const OUTBOX_CONFIRM_FIRST_MS = 1_000;
export const OUTBOX_CONFIRM_MAX_MS = 15_000;
/** A direct delivery goes in batches of this many events (the ledger takes up to 1000). */
const DELIVER_BATCH = 100;
/**
 * The ledger is asked about at most this many ids per call (it takes up to 1000). Under load an
 * outbox holds more than that between two rounds: asked in one call, the ledger refused the
 * round, every event then went again, and the outbox never emptied.
 */
export const ASK_BATCH = 1000;

/** The ledger, as the outbox asks it (service invocation through the actors app's own sidecar). */
export interface OutboxLedger {
  /** The ids among `ids` that the ledger has stored. */
  stored(ids: string[]): Promise<Set<string>>;
  /** Appends the events straight to the ledger, idempotently by id; the ids it holds afterwards. */
  deliver(events: EventEnvelope[]): Promise<Set<string>>;
}

export function daprOutboxLedger(sidecar: DaprSidecar, ledgerAppId: string): OutboxLedger {
  const call = async (method: string, body: unknown): Promise<Set<string>> => {
    const { status, json } = await sidecar.request('POST', `/v1.0/invoke/${encodeURIComponent(ledgerAppId)}/method/${method}`, body);
    if (status !== 200) throw new Error(`ledger ${method} answered ${status}: ${JSON.stringify(json).slice(0, 300)}`);
    return new Set((json as { stored?: string[] }).stored ?? []);
  };
  return {
    async stored(ids) {
      const asked: Promise<Set<string>>[] = [];
      for (let i = 0; i < ids.length; i += ASK_BATCH) asked.push(call('events/stored', { ids: ids.slice(i, i + ASK_BATCH) }));
      return new Set((await Promise.all(asked)).flatMap((held) => [...held]));
    },
    async deliver(events) {
      const held = new Set<string>();
      for (let i = 0; i < events.length; i += DELIVER_BATCH) {
        for (const id of await call('events/append', { events: events.slice(i, i + DELIVER_BATCH) })) held.add(id);
      }
      return held;
    },
  };
}

/**
 * The stored outbox, in batches: each turn that adds events stores them as a batch of its own
 * (dapr-host.ts), beside the list of batch numbers. A turn writes its own events and that short
 * list, never every unconfirmed event or id again (a flat index rewritten by every turn was 25 KB
 * on average and up to 300 KB at c=32, and decoding it was a third of the actors' sidecar's CPU).
 * Here a batch is known by its events' ids.
 */
export type OutboxSegments = ReadonlyMap<number, readonly string[]>;

/** What a turn changes in the stored outbox's index. */
export interface OutboxChange {
  /**
   * The index once the turn has committed, when the turn does more than add its own segment (a
   * segment thinned or emptied, or one of an earlier layout written). Undefined when it only adds
   * one: the index is then the stored one plus the segment in `writes` (so a turn's bookkeeping
   * costs the same however many segments the outbox holds: up to a second of turns, about 250 at c=1).
   */
  segments?: Map<number, readonly string[]>;
  /** The segments to write (their ids), and those to delete (undefined). */
  writes: Map<number, readonly string[] | undefined>;
  /**
   * Whether the list of segment numbers must be written: a segment left, or one of an earlier
   * layout came in. A segment only added is not listed by its own turn: it takes the next number
   * after every other, and a fresh activation finds it by reading on past the listed ones
   * (dapr-host.ts).
   */
  listChanged: boolean;
  /** Whether the turn adds a segment (its own events). */
  added: boolean;
  /** The confirmed ids that leave the outbox (their event keys are deleted). */
  removed: string[];
}

/** Every id of the index, oldest segment first. */
export function idsOf(segments: OutboxSegments): string[] {
  return [...segments.values()].flat();
}

const NO_SEGMENTS: ReadonlySet<number> = new Set();

/**
 * The stored outbox's segments as one activation knows them, in number order, with how many ids
 * they hold and the highest number: a turn that only adds its segment updates all three without
 * walking the others.
 */
export class OutboxIndex {
  private readonly byNumber = new Map<number, readonly string[]>();
  private ids = 0;
  private top = 0;

  get segments(): OutboxSegments {
    return this.byNumber;
  }

  /** How many ids the segments hold. */
  get size(): number {
    return this.ids;
  }

  /** The highest segment number (0: none). */
  get highest(): number {
    return this.top;
  }

  clear(): void {
    this.byNumber.clear();
    this.ids = 0;
    this.top = 0;
  }

  /** A segment as stored (read in number order, or the one a committed turn added after every other). */
  keep(n: number, ids: readonly string[]): void {
    this.ids += ids.length - (this.byNumber.get(n)?.length ?? 0);
    this.byNumber.set(n, ids);
    if (n > this.top) this.top = n;
  }

  /** A committed turn's change. */
  apply(change: OutboxChange): void {
    if (!change.segments) {
      for (const [n, ids] of change.writes) if (ids) this.keep(n, ids);
      return;
    }
    this.clear();
    for (const [n, ids] of change.segments) this.keep(n, ids);
  }
}

/**
 * One activation's bookkeeping of its stored outbox, by event id (the events are stored in
 * batches, one per turn, each known here as a segment of ids; dapr-host.ts): which events it has published
 * (and when), which the ledger has confirmed (dropped from the stored outbox at the next commit),
 * and the pause before the next confirmation round.
 */
export class OutboxTracker {
  private readonly sentAt = new Map<string, number>();
  private readonly confirmed = new Set<string>();
  /**
   * Stored events whose publish failed (or whose read did), to go with the next turn. With the
   * turn's own events they are all a turn has to publish once the activation knows every stored
   * id as published (`primed`): a turn then never walks the whole outbox, which holds a second or
   * two of events under load.
   */
  private readonly retry = new Set<string>();
  /** Whether every id of the stored outbox has been picked by this activation (after its first full walk). */
  private primed = false;
  /** Confirmation rounds in a row that found the ledger lagging. */
  private rounds = 0;
  /**
   * Whether the last round found the ledger lagging: an event it was asked about, published a
   * whole first pause before, was not stored (or the ledger could not be asked). Events published
   * since the last round and not stored yet are merely in transit: under a steady load there are
   * always some, and backing off for them would let the outbox grow to 15 s of events.
   */
  private lagging = false;
  /** Whether a confirmation reminder is registered (as far as this activation knows). */
  scheduled = false;

  constructor(private readonly now: () => number = Date.now, private readonly firstMs = OUTBOX_CONFIRM_FIRST_MS) {}

  /**
   * What the turn writes to the index (undefined: nothing): confirmed ids leave their segments
   * (an emptied segment is deleted, a thinned one written again), the turn's own events form a
   * new segment (numbered after `highest`, the highest stored number), and `unsaved` segments
   * (read from an earlier layout) are written whatever happens.
   */
  next(stored: OutboxSegments, added: readonly EventEnvelope[], unsaved: ReadonlySet<number> = NO_SEGMENTS, highest = Math.max(0, ...stored.keys())): OutboxChange | undefined {
    const writes = new Map<number, readonly string[] | undefined>();
    const own = added.map((event) => event.id);
    // Nothing confirmed and nothing to move: the stored segments stay as they are, unwalked.
    if (this.confirmed.size === 0 && unsaved.size === 0) {
      if (own.length === 0) return undefined;
      writes.set(highest + 1, own);
      return { writes, listChanged: false, added: true, removed: [] };
    }
    const segments = new Map<number, readonly string[]>();
    const removed: string[] = [];
    let listChanged = unsaved.size > 0;
    for (const [n, ids] of stored) {
      const kept = this.confirmed.size === 0 ? ids : ids.filter((id) => !this.confirmed.has(id));
      if (kept.length < ids.length) removed.push(...ids.filter((id) => this.confirmed.has(id)));
      if (kept.length === 0) {
        if (!unsaved.has(n)) writes.set(n, undefined);
        listChanged = true;
        continue;
      }
      segments.set(n, kept);
      if (kept.length < ids.length || unsaved.has(n)) writes.set(n, kept);
    }
    if (own.length > 0) {
      segments.set(highest + 1, own);
      writes.set(highest + 1, own);
    }
    return writes.size === 0 && !listChanged ? undefined : { segments, writes, listChanged, added: own.length > 0, removed };
  }

  /** The stored outbox no longer holds the confirmed events. */
  committed(): void {
    for (const id of this.confirmed) {
      this.sentAt.delete(id);
      this.retry.delete(id);
    }
    this.confirmed.clear();
  }

  /** A commit failed: whether the store holds its events is unknown, so the next turn walks the whole outbox. */
  unknown(): void {
    this.primed = false;
  }

  confirm(ids: Iterable<string>): void {
    for (const id of ids) this.confirmed.add(id);
  }

  /** A confirmation round's answer: the ledger holds `held` among `asked` (undefined: it could not be asked). */
  answered(asked: readonly string[], held: ReadonlySet<string> | undefined): void {
    if (!held) {
      this.lagging = true;
      return;
    }
    this.confirm(held);
    const before = this.now() - this.firstMs;
    this.lagging = asked.some((id) => !held.has(id) && (this.sentAt.get(id) ?? Infinity) <= before);
  }

  /**
   * What to publish now: events this activation has not published yet (this turn's, or all of a
   * fresh activation's) and, on a confirmation round, those published at least a round ago.
   * `pending` is asked for only when the whole outbox must be walked (a round, a fresh
   * activation, after a failed commit); otherwise the turn's own events and those to retry are all.
   */
  due(pending: () => readonly string[], resend: boolean, added: readonly string[] = []): string[] {
    if (this.primed && !resend) {
      const due = [...this.retry, ...added.filter((id) => !this.sentAt.has(id))];
      this.retry.clear();
      return due;
    }
    const now = this.now();
    this.primed = true;
    this.retry.clear();
    return pending().filter((id) => {
      const at = this.sentAt.get(id);
      return at === undefined || (resend && now - at >= Math.min(this.firstMs, OUTBOX_CONFIRM_FIRST_MS));
    });
  }

  /** Published (or being published: marked when picked, so a turn meanwhile does not pick it again). */
  sent(id: string): void {
    this.sentAt.set(id, this.now());
  }

  /** The publish failed: the next turn or round sends it again. */
  unsent(id: string): void {
    this.sentAt.delete(id);
    this.retry.add(id);
  }

  /**
   * The pause before the next round: the first pause while the ledger keeps up, doubled for each
   * round in a row that found it lagging (an outage: what it misses is sent again at a bounded
   * rate); 0 (and reset) when the outbox is empty.
   */
  nextDelay(pending: number): number {
    if (pending === 0 || !this.lagging) this.rounds = 0;
    if (pending === 0) return 0;
    const delay = Math.min(Math.max(OUTBOX_CONFIRM_MAX_MS, this.firstMs), this.firstMs * 2 ** this.rounds);
    this.rounds = Math.min(this.rounds + 1, 16);
    return delay;
  }
}
