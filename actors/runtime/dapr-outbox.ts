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
    stored: (ids) => call('events/stored', { ids }),
    async deliver(events) {
      const held = new Set<string>();
      for (let i = 0; i < events.length; i += DELIVER_BATCH) {
        for (const id of await call('events/append', { events: events.slice(i, i + DELIVER_BATCH) })) held.add(id);
      }
      return held;
    },
  };
}

/** What a turn changes in the stored outbox: its new id index, and the confirmed ids that leave it. */
export interface OutboxChange {
  ids: string[];
  removed: string[];
}

/**
 * One activation's bookkeeping of its stored outbox, by event id (each event is stored under its
 * own key, beside an index of the ids; dapr-host.ts): which events it has published (and when),
 * which the ledger has confirmed (dropped from the stored outbox at the next commit), and the
 * pause before the next confirmation round.
 */
export class OutboxTracker {
  private readonly sentAt = new Map<string, number>();
  private readonly confirmed = new Set<string>();
  /** Confirmation rounds in a row that left events unconfirmed. */
  private rounds = 0;
  /** Whether a confirmation reminder is registered (as far as this activation knows). */
  scheduled = false;

  constructor(private readonly now: () => number = Date.now, private readonly firstMs = OUTBOX_CONFIRM_FIRST_MS) {}

  /** The index to store: the stored ids not confirmed, then this turn's (undefined: unchanged). */
  next(stored: readonly string[], added: readonly EventEnvelope[]): OutboxChange | undefined {
    const removed = stored.filter((id) => this.confirmed.has(id));
    if (added.length === 0 && removed.length === 0) return undefined;
    const kept = removed.length === 0 ? stored : stored.filter((id) => !this.confirmed.has(id));
    return { ids: [...kept, ...added.map((event) => event.id)], removed };
  }

  /** The stored outbox no longer holds the confirmed events. */
  committed(): void {
    for (const id of this.confirmed) this.sentAt.delete(id);
    this.confirmed.clear();
  }

  confirm(ids: Iterable<string>): void {
    for (const id of ids) this.confirmed.add(id);
  }

  /**
   * What to publish now: events this activation has not published yet (this turn's, or all of a
   * fresh activation's) and, on a confirmation round, those published at least a round ago.
   */
  due(pending: readonly string[], resend: boolean): string[] {
    const now = this.now();
    return pending.filter((id) => {
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
  }

  /** The pause before the next round: doubled for each round that left events unconfirmed; 0 (and reset) for none. */
  nextDelay(pending: number): number {
    if (pending === 0) {
      this.rounds = 0;
      return 0;
    }
    const delay = Math.min(Math.max(OUTBOX_CONFIRM_MAX_MS, this.firstMs), this.firstMs * 2 ** this.rounds);
    this.rounds = Math.min(this.rounds + 1, 16);
    return delay;
  }
}
