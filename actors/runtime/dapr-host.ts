// Dapr actor host: wraps each plain actor class in an @dapr/dapr AbstractActor adapter whose
// class name is the actor type. State lives in the Dapr state manager (Redis state store),
// reminders in the Dapr Scheduler, events go to Dapr pub/sub through a transactional outbox.
// Longer than 300 lines on purpose: the adapter's turn, its outbox layout (one key per event and
// the index, read back from the older one-array layout) and its confirmation round share the
// activation's in-memory outbox; they change together.

import { AbstractActor, Temporal, type ActorId, type DaprClient } from '@dapr/dapr';
import type { Logger } from 'pino';
import type { DaprSidecar } from '../../lib/dapr-http';
import { toGatewayError } from '../../lib/errors';
import { faultPoint } from '../../lib/fault-points';
import { MAX_EVENTS_PER_MESSAGE, type EventEnvelope, type Topic } from '../../lib/events';
import { currentContext, traceparentOf, tracestateOf, type RequestContext } from '../../lib/request-context';
import { endSpan, messagingAttributes, SpanKind, startSpan, withinSpan } from '../../lib/tracing';
import { metrics } from '../../lib/metrics';
import { DaprActorInvoker } from './dapr-invoker';
import { daprOutboxLedger, idsOf, OutboxIndex, OutboxTracker, type OutboxChange, type OutboxLedger, type OutboxSegments } from './dapr-outbox';
import { Activation, actorReminderName, DELETED, freshReminderName, type Instance, type KernelHost } from './kernel';
import { OUTBOX_DELIVER_METHOD, OUTBOX_PENDING_METHOD, type ActorCallResult, type ActorClass, type OutboxDelivery, type OutboxPending } from './port';
import { checkArgument } from './args';

/**
 * The stored outbox, in batches: the events each turn added, under one key per turn
 * (`__outbox:batch:<n>`, one JSON text), beside the list of batch numbers (`__outbox:batches`). A
 * turn writes its own events as one value, numbered on from every batch before it; a confirmation
 * round deletes each batch the ledger holds whole (and writes again the few that it holds in
 * part) and writes the list. So the list can lack the batches added since it was last written: a
 * fresh activation reads on past the highest listed number until one is missing (numbers are
 * never skipped), and a turn writes the list rather than leave UNLISTED_MAX batches out of it,
 * which bounds those reads. Under load a turn carries the events of many calls, so a call costs
 * the store about one write instead of an upsert and a delete per event. Earlier versions'
 * layouts are still read, and moved to this one by the next turn that commits: one key per event
 * (`__outbox:event:<id>`) indexed by segments of ids (`__outbox:segments`, `__outbox:segment:<n>`)
 * or by one flat list (`__outbox:ids`), and before that the whole outbox as one array
 * (`__outbox`). A batch stored as an array of events (before batches were text) is read as it is.
 */
const OUTBOX_BATCHES_KEY = '__outbox:batches';
const outboxBatchKey = (n: number) => `__outbox:batch:${n}`;
const SEGMENTS_KEY = '__outbox:segments';
const segmentKey = (n: number) => `__outbox:segment:${n}`;
const OUTBOX_EVENT_PREFIX = '__outbox:event:';
const FLAT_INDEX_KEY = '__outbox:ids';
const LEGACY_OUTBOX_KEY = '__outbox';
const outboxEventKey = (id: string) => OUTBOX_EVENT_PREFIX + id;
/** The batch an earlier layout's events are moved into (real batches are numbered from 1). */
const EARLIER_LAYOUT_SEGMENT = 0;
/** Fewer than this many batches are left out of the stored list: the turn that would leave out one more writes it. */
const UNLISTED_MAX = 64;
/** Batches past the listed ones read at a time by a fresh activation. */
const PROBE_BATCHES = 16;
/** Confirmation rounds of the outbox, each under a fresh name (`__outbox~retry@<ms>`, kernel.ts). */
const OUTBOX_REMINDER = '__outbox';
const RETRY_MS = 2000;

/** A stored outbox batch's events: its JSON text, or (as stored before) its array; anything else holds none. */
function storedBatch(stored: unknown): unknown[] {
  if (Array.isArray(stored)) return stored;
  if (typeof stored !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(stored);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/**
 * Hands a batch of one topic's events to pub/sub as one message (at most MAX_EVENTS_PER_MESSAGE),
 * resolved once pub/sub has taken it. Each event names its own publish span in `traceparent`.
 */
export type DaprPublisher = (topic: Topic, events: readonly EventEnvelope[]) => Promise<void>;

interface ReminderPayload {
  name: string;
  data: unknown;
}

/** The adapter method the reminder route calls with `{ name, data }`. */
export const REMIND_METHOD = '__remind';

/** A Temporal duration of whole milliseconds (never negative), as Dapr reminders take it. */
function duration(ms: number): Temporal.Duration {
  return Temporal.Duration.from({ milliseconds: Math.max(0, Math.round(ms)) });
}

/** Reminder data as daprd delivers it: JSON, or a base64 or JSON string of it. */
export function decodeReminderData(data: unknown): unknown {
  if (typeof data !== 'string') return data ?? null;
  for (const text of [data, Buffer.from(data, 'base64').toString('utf8')]) {
    try {
      return JSON.parse(text);
    } catch {
      /* next form */
    }
  }
  return data;
}

/** A committed event picked for publishing, with the context of the turn that picked it. */
interface PickedEvent {
  event: EventEnvelope;
  context: RequestContext | undefined;
}

/** The pub/sub messages that carry `picked`: by topic, at most MAX_EVENTS_PER_MESSAGE events each, in their order. */
export function messagesOf(picked: readonly PickedEvent[]): PickedEvent[][] {
  const byTopic = new Map<Topic, PickedEvent[][]>();
  for (const item of picked) {
    const messages = byTopic.get(item.event.topic) ?? [];
    byTopic.set(item.event.topic, messages);
    const last = messages.at(-1);
    if (last && last.length < MAX_EVENTS_PER_MESSAGE) last.push(item);
    else messages.push([item]);
  }
  return [...byTopic.values()].flat();
}

/** Builds the AbstractActor subclass Dapr registers for `cls`; its name is `cls.actorType`. */
export function daprActorClass(cls: ActorClass, publish: DaprPublisher, sidecar: DaprSidecar, logger?: Logger, ledger: OutboxLedger = daprOutboxLedger(sidecar, 'ledger'), outboxConfirmMs?: number): new (client: DaprClient, id: ActorId) => AbstractActor {
  const actors = new DaprActorInvoker(sidecar);
  // The actor kernel (kernel.ts) runs the turns; this adapter gives it storage and reminders.
  // Actor state goes straight to the sidecar's actor state API rather than through the SDK's
  // state manager: reads (absence included) are cached for the activation, a turn's writes and
  // its outbox are one state transaction, and no write needs a "does it exist" round trip first.
  class Adapter extends AbstractActor {
    private kernelActivation: Activation | undefined;
    /** The stored outbox's bookkeeping: published, confirmed by the ledger, next round (dapr-outbox.ts). */
    private readonly outbox = new OutboxTracker(Date.now, outboxConfirmMs);
    /** The turn under way is a confirmation round (publishes again what is due). */
    private resend = false;
    /** What the turn under way changes in the stored outbox; `unlisted`: how many batches the stored list leaves out once it commits. */
    private outboxChange: { change: OutboxChange | undefined; added: EventEnvelope[]; unlisted: number } = { change: undefined, added: [], unlisted: 0 };
    /**
     * The index's segments as stored, by number: read once (not through the activation's cache,
     * which would keep a marker for every segment ever deleted), then kept current by the commits;
     * forgotten when a commit fails (its outcome in the store is unknown).
     */
    private readonly index = new OutboxIndex();
    /** Whether `index` holds every stored batch, listed or not (read once, then kept by the commits). */
    private batchesKnown = false;
    /** Stored batches the stored list leaves out (added since it was last written). */
    private unlisted = 0;
    /** The reading of every stored batch under way (one at a time: a publish outside the turns may ask too). */
    private batchesRead: Promise<void> | undefined;
    /** The events of the stored outbox this activation has in memory (the others are read when needed). */
    private readonly outboxEvents = new Map<string, EventEnvelope>();
    /**
     * Ids of committed events picked for publishing, not yet handed to pub/sub (publishOutbox),
     * each with the context of the turn that picked it (its publish span goes under that turn).
     */
    private readonly toPublish = new Map<string, RequestContext | undefined>();
    /** How many events the last committed outbox holds (a confirmation round is due while any). */
    private outboxSize = 0;
    /** The publishing under way, outside the turns (one at a time per activation). */
    private publishing: Promise<void> | undefined;

    private statePath(key?: string): string {
      const base = `/v1.0/actors/${cls.actorType}/${encodeURIComponent(this.getActorId().getId())}/state`;
      return key === undefined ? base : `${base}/${encodeURIComponent(key)}`;
    }

    /** State values the activation keeps in memory. */
    get cachedValues(): number {
      return this.kernelActivation?.cachedValues ?? 0;
    }

    private get activation(): Activation {
      if (!this.kernelActivation) this.kernelActivation = new Activation(cls, this.getActorId().getId(), this.kernelHost(), { cacheAbsent: true, freshReminderNames: true });
      return this.kernelActivation;
    }

    private kernelHost(): KernelHost {
      return {
        actors,
        now: Date.now,
        read: async (_activation, key) => {
          const { status, json } = await sidecar.request('GET', this.statePath(key));
          if (status === 204 || (status === 200 && json === undefined)) return undefined;
          if (status !== 200) throw new Error(`actor state read failed with ${status}`);
          return json;
        },
        // The outbox joins the turn's writes: the turn's events as a batch of their own, each
        // batch the ledger holds whole deleted, one it holds in part written again, and the list.
        prepare: async (_activation, turn) => {
          const stored = await this.storedOutbox();
          const change = this.outbox.next(stored.segments, turn.events, stored.earlier ? new Set([EARLIER_LAYOUT_SEGMENT]) : undefined, this.index.highest);
          // Moved from an earlier layout: its keys go, its unconfirmed events become batch 0 (same transaction).
          for (const key of stored.earlier?.keys ?? []) turn.writes.set(key, DELETED);
          let unlisted = this.unlisted;
          if (change) {
            const added = new Map(turn.events.map((event) => [event.id, event]));
            for (const [n, ids] of change.writes) {
              const events = ids?.map((id) => added.get(id) ?? this.outboxEvents.get(id)).filter((event) => event !== undefined);
              // As one JSON text: daprd takes a string value as it is, where an array of events
              // is decoded into maps and encoded again field by field, in every state transaction.
              turn.writes.set(outboxBatchKey(n), events === undefined ? DELETED : JSON.stringify(events));
            }
            // A batch only added is found past the listed ones; the list is written when one leaves (or too many are left out).
            const listed = change.listChanged || (change.added && unlisted + 1 >= UNLISTED_MAX);
            if (listed) turn.writes.set(OUTBOX_BATCHES_KEY, change.segments ? [...change.segments.keys()] : [...stored.segments.keys(), ...change.writes.keys()]);
            unlisted = listed ? 0 : unlisted + (change.added ? 1 : 0);
          }
          this.outboxChange = { change, added: turn.events, unlisted };
        },
        commit: async (_activation, { turn }) => {
          if (turn.writes.size > 0) {
            const operations = [...turn.writes].map(([key, value]) =>
              value === DELETED ? { operation: 'delete', request: { key } } : { operation: 'upsert', request: { key, value } });
            try {
              const { status, json } = await sidecar.request('POST', this.statePath(), operations);
              if (status !== 204 && status !== 200) throw new Error(`actor state transaction failed with ${status}: ${JSON.stringify(json)}`);
            } catch (error) {
              this.index.clear();
              this.batchesKnown = false;
              this.outbox.unknown();
              throw error;
            }
          }
          const { change, added, unlisted } = this.outboxChange;
          this.unlisted = unlisted;
          this.outbox.committed();
          if (change) this.index.apply(change);
          for (const id of change?.removed ?? []) this.outboxEvents.delete(id);
          for (const event of added) this.outboxEvents.set(event.id, event);
          // Committed: whatever happens from here on, the events are safe in the stored outbox.
          // They are published after the answer, outside the turns: neither the caller nor the
          // actor's next turn waits for pub/sub or for the confirmation round's registration.
          this.publishAfterTurn(added, this.resend);
        },
        // Registered at once (the Scheduler is no part of the state transaction).
        register: (_activation, _turn, reminder) =>
          this.registerActorReminder(reminder.registeredAs, duration(reminder.dueInMs), reminder.periodMs ? duration(reminder.periodMs) : undefined, undefined, { name: reminder.registeredAs, data: reminder.data } satisfies ReminderPayload),
        // With any fresh name it was registered under (that one is best effort: were it left, its
        // firing finds nothing to do); the outcome is the actor's own name's.
        unregister: async (_activation, _turn, name, names) => {
          const [own] = await Promise.allSettled([this.unregisterActorReminder(name), ...names.filter((other) => other !== name).map((other) => this.unregisterActorReminder(other))]);
          if (own.status === 'rejected') throw own.reason;
        },
      };
    }

    /**
     * One turn at a time, even should daprd hand the app a second call while one runs (a call
     * retried by the resiliency policy after its timeout reaches the app beside the first):
     * the second then runs after the first and, every method being idempotent by its
     * request's id, answers the same outcome instead of repeating the change.
     * A turn: the method, then state and outbox in one state transaction, then publishing.
     */
    async run(body: (core: Instance) => Promise<unknown>, resend = false, firing?: { name: string; data: unknown }): Promise<ActorCallResult<unknown>> {
      const activation = this.activation;
      try {
        const result = firing
          ? await activation.remind(firing.name, firing.data, { before: () => void (this.resend = resend), after: () => faultPoint('reminder-before-commit') })
          : await activation.run(async (core) => {
            this.resend = resend;
            return body(core);
          });
        return { ok: true, result };
      } catch (error) {
        // A failed turn leaves nothing behind (the kernel has reset the activation).
        return { ok: false, error: toGatewayError(error).toJSON() };
      }
    }

    /**
     * The stored outbox's batches (the list through the activation's cache; each batch's events
     * read once, then kept in memory and current by the commits), and what an earlier layout still
     * holds: its ids as batch 0 (their events in memory) and the keys the move deletes.
     */
    private async storedOutbox(): Promise<{ segments: OutboxSegments; earlier?: { keys: string[] } }> {
      // The earlier layouts' keys beside the list (all cached, absent ones too, after the first turn).
      // Until the batches are known, batch 1 too, in the same round: with none listed, a first batch is numbered 1.
      const [list, segmentList, flat, old, first] = await Promise.all([
        ...[OUTBOX_BATCHES_KEY, SEGMENTS_KEY, FLAT_INDEX_KEY, LEGACY_OUTBOX_KEY].map((key) => this.activation.read(key)),
        this.batchesKnown ? undefined : this.activation.read(outboxBatchKey(1), false),
      ]);
      if (!this.batchesKnown) await (this.batchesRead ??= this.readBatches(Array.isArray(list) ? (list as number[]) : [], first).finally(() => (this.batchesRead = undefined)));
      // In number order: the list's, then the batches past it, and the commits append (OutboxTracker.next).
      // The index itself, not a copy: only a commit changes it, after the turn's last look at it.
      const segments = this.index.segments;
      if (!Array.isArray(segmentList) && !Array.isArray(flat) && !Array.isArray(old)) return { segments };
      const earlier = await this.earlierLayout(segmentList, flat, old, segments);
      return { segments: new Map([[EARLIER_LAYOUT_SEGMENT, earlier.ids], ...segments]), earlier: { keys: earlier.keys } };
    }

    /**
     * Every stored batch into memory: the listed ones (one listed but missing counts as empty, and
     * leaves the list with the next turn), then those added since the list was written, read on
     * from the highest listed number until one is missing: the next one alone, then
     * PROBE_BATCHES at a time. `first` is batch 1 as read beside the list.
     */
    private async readBatches(listed: readonly number[], first: unknown): Promise<void> {
      this.index.clear();
      const batches = await Promise.all(listed.map(async (n) => [n, await this.activation.read(outboxBatchKey(n), false)] as const));
      for (const [n, stored] of batches) this.keepBatch(n, stored);
      const highest = Math.max(0, ...listed);
      let next = highest + 1;
      let found: unknown[] = next === 1 ? [first] : [await this.activation.read(outboxBatchKey(next), false)];
      for (;;) {
        const missing = found.indexOf(undefined);
        for (const stored of missing < 0 ? found : found.slice(0, missing)) this.keepBatch(next++, stored);
        if (missing >= 0) break;
        const numbers = Array.from({ length: PROBE_BATCHES }, (_, i) => next + i);
        found = await Promise.all(numbers.map((n) => this.activation.read(outboxBatchKey(n), false)));
      }
      this.unlisted = next - 1 - highest;
      this.batchesKnown = true;
    }

    /** A stored batch's events into memory, and its ids as segment `n`. */
    private keepBatch(n: number, stored: unknown): void {
      const batch = storedBatch(stored).filter((event): event is EventEnvelope => typeof (event as EventEnvelope | null)?.id === 'string');
      for (const event of batch) this.outboxEvents.set(event.id, event);
      this.index.keep(n, batch.map((event) => event.id));
    }

    /**
     * The ids an earlier layout holds that no batch does, their events loaded into memory, and the
     * keys of that layout the move deletes (every per-event key, confirmed or not).
     */
    private async earlierLayout(segmentList: unknown, flat: unknown, old: unknown, batches: ReadonlyMap<number, readonly string[]>): Promise<{ ids: string[]; keys: string[] }> {
      const keys: string[] = [];
      const ids: string[] = [];
      if (Array.isArray(old)) {
        keys.push(LEGACY_OUTBOX_KEY);
        for (const event of old as EventEnvelope[]) {
          this.outboxEvents.set(event.id, event);
          ids.push(event.id);
        }
      }
      if (Array.isArray(flat)) {
        keys.push(FLAT_INDEX_KEY);
        ids.push(...(flat as string[]));
      }
      if (Array.isArray(segmentList)) {
        keys.push(SEGMENTS_KEY);
        for (const n of segmentList as number[]) {
          keys.push(segmentKey(n));
          const segment = await this.activation.read(segmentKey(n), false);
          if (Array.isArray(segment)) ids.push(...(segment as string[]));
        }
      }
      const inBatches = new Set(idsOf(batches));
      const unique = [...new Set(ids)].filter((id) => !inBatches.has(id));
      // Per-event keys (flat and segmented layouts): read into memory, deleted by the move.
      const perEvent = unique.filter((id) => !this.outboxEvents.has(id));
      for (const id of perEvent) keys.push(outboxEventKey(id));
      const loaded = await Promise.all(perEvent.map(async (id) => [id, (await this.activation.read(outboxEventKey(id), false)) as EventEnvelope | undefined] as const));
      for (const [id, event] of loaded) if (event) this.outboxEvents.set(id, event);
      // An id whose event is gone cannot be published again: it leaves with the move.
      return { ids: unique.filter((id) => this.outboxEvents.has(id)), keys };
    }

    /** Every id the stored outbox holds. */
    private async storedIds(): Promise<string[]> {
      return idsOf((await this.storedOutbox()).segments);
    }

    /** A stored outbox event (undefined: it has left the outbox). Every stored event is in memory once its batch was read. */
    private async outboxEvent(id: string): Promise<EventEnvelope | undefined> {
      if (!this.outboxEvents.has(id)) await this.storedOutbox();
      return this.outboxEvents.get(id);
    }

    private async outboxEventsOf(ids: readonly string[]): Promise<EventEnvelope[]> {
      const events = await Promise.all(ids.map((id) => this.outboxEvent(id)));
      return events.filter((event): event is EventEnvelope => event !== undefined);
    }

    /** Picks what is due from the committed outbox (dapr-outbox.ts) and publishes it in the background. */
    private publishAfterTurn(added: readonly EventEnvelope[], resend: boolean): void {
      const context = currentContext();
      const stored = this.index.segments;
      for (const id of this.outbox.due(() => idsOf(stored), resend, added.map((event) => event.id))) {
        this.outbox.sent(id);
        this.toPublish.set(id, context);
      }
      this.outboxSize = this.index.size;
      this.publishing ??= this.publishOutbox().finally(() => (this.publishing = undefined));
    }

    /**
     * Publishes what was picked until nothing is left, and makes sure a confirmation round is
     * coming while the outbox holds anything. What was picked meanwhile goes together: one
     * message per topic (and per MAX_EVENTS_PER_MESSAGE events), so under load one publish, one
     * stream entry and one delivery carry many events. Never throws: the turn has committed, the
     * next round retries what failed. Only touches this activation's bookkeeping, never its state.
     */
    private async publishOutbox(): Promise<void> {
      for (;;) {
        const picked = [...this.toPublish];
        this.toPublish.clear();
        const loaded = await Promise.all(picked.map(async ([id, context]) => {
          try {
            const event = await this.outboxEvent(id);
            return event ? [{ event, context }] : []; // none: confirmed and gone meanwhile
          } catch {
            this.outbox.unsent(id); // read again by the next turn or round
            return [];
          }
        }));
        await Promise.all(messagesOf(loaded.flat()).map((message) => this.publishMessage(message)));
        await this.scheduleConfirmation();
        if (this.toPublish.size === 0) return;
      }
    }

    /**
     * One message: each event gets its publish span under the turn that picked it (its context
     * travels in the event), the message goes as one send. Taken by pub/sub: each event counts
     * as acknowledged; refused: each goes again with the next turn or round.
     */
    private async publishMessage(message: readonly PickedEvent[]): Promise<void> {
      const spans = message.map(({ event, context }) => startSpan(`publish ${event.topic}`, { kind: SpanKind.PRODUCER, attributes: messagingAttributes('publish', event.topic, event.id) }, context));
      const events = message.map(({ event, context }, i) => {
        const span = spans[i];
        metrics.eventPublished(event.topic);
        if (!span) return event;
        const published = withinSpan(context, span);
        const tracestate = tracestateOf(published);
        return tracestate ? { ...event, traceparent: traceparentOf(published), tracestate } : { ...event, traceparent: traceparentOf(published) };
      });
      try {
        // Resolved only when daprd answered 2xx: pub/sub has taken the message, which is not
        // yet the ledger storing its events (the confirmation round asks the ledger).
        await publish(message[0].event.topic, events);
        for (const { event } of message) metrics.eventAcknowledged(event.topic);
        for (const span of spans) endSpan(span);
      } catch (error) {
        for (const { event } of message) this.outbox.unsent(event.id); // sent again by the next turn or round
        for (const span of spans) endSpan(span, error);
      }
    }

    /** The next confirmation round while the outbox holds events; none (and the pause reset) once empty. */
    private async scheduleConfirmation(): Promise<void> {
      if (this.outboxSize === 0) {
        this.outbox.nextDelay(0);
        return;
      }
      if (this.outbox.scheduled) return;
      this.outbox.scheduled = true;
      // Registered from a round's own callback too: a fresh name each time.
      const name = freshReminderName(OUTBOX_REMINDER, Date.now());
      try {
        await this.registerActorReminder(name, Temporal.Duration.from({ milliseconds: this.outbox.nextDelay(this.outboxSize) }), undefined, undefined, { name, data: null } satisfies ReminderPayload);
      } catch (error) {
        this.outbox.scheduled = false;
        logger?.warn({ err: (error as Error).message, actorType: cls.actorType, actorId: this.getActorId().getId() }, 'outbox round not scheduled; the next turn tries again');
      }
    }

    /** A confirmation round: the ledger names the stored events, they leave the outbox, the rest go again. */
    private async confirmOutbox(): Promise<void> {
      const ids = await this.storedIds();
      if (ids.length === 0) return;
      try {
        this.outbox.answered(ids, await ledger.stored(ids));
      } catch (error) {
        this.outbox.answered(ids, undefined);
        logger?.warn({ err: (error as Error).message, actorType: cls.actorType, actorId: this.getActorId().getId(), pending: ids.length }, 'ledger not asked; outbox events published again');
      }
    }

    /** Host-level read for reconciliation: the events this actor emitted that the ledger lacks. */
    async [OUTBOX_PENDING_METHOD](): Promise<ActorCallResult<unknown>> {
      return this.run(async () => {
        const ids = await this.storedIds();
        const held = ids.length > 0 ? await ledger.stored(ids) : new Set<string>();
        this.outbox.confirm(held);
        return { events: await this.outboxEventsOf(ids.filter((id) => !held.has(id))) } satisfies OutboxPending;
      });
    }

    /** Host-level repair: the outbox goes straight to the ledger (idempotent by id); what it holds leaves the outbox. */
    async [OUTBOX_DELIVER_METHOD](): Promise<ActorCallResult<unknown>> {
      return this.run(async () => {
        const stored = await this.outboxEventsOf(await this.storedIds());
        const held = stored.length > 0 ? await ledger.deliver(stored) : new Set<string>();
        this.outbox.confirm(held);
        return { delivered: stored.filter((event) => held.has(event.id)).map((event) => event.id), pending: stored.filter((event) => !held.has(event.id)).map((event) => event.id) } satisfies OutboxDelivery;
      });
    }

    /** Called by the reminder route of dapr-main.ts (the SDK drops the reminder's name and data). */
    async __remind(payload: ReminderPayload): Promise<void> {
      await this.receiveReminder(payload);
    }

    override async receiveReminder(raw: unknown): Promise<void> {
      // Reminder handlers are not guarded by the SDK: nothing may escape from here.
      const payload = raw as ReminderPayload | undefined;
      try {
        const name = payload?.name ?? '';
        if (actorReminderName(name).startsWith(OUTBOX_REMINDER)) {
          // This round ends here; the turn schedules the next one while events are left.
          this.outbox.scheduled = false;
          const outcome = await this.run(async () => this.confirmOutbox(), true);
          if (!outcome.ok) throw new Error(outcome.error.message);
          metrics.reminderFired(cls.actorType, 'ok');
          return;
        }
        // The actor is told the name it registered the reminder under (kernel.ts).
        const outcome = await this.run(async () => undefined, false, { name, data: payload?.data ?? null });
        if (!outcome.ok) throw new Error(outcome.error.message);
        metrics.reminderFired(cls.actorType, 'ok');
      } catch (error) {
        metrics.reminderFired(cls.actorType, 'failed');
        logger?.warn({ err: (error as Error).message, actorType: cls.actorType, actorId: this.getActorId().getId(), reminder: payload?.name }, 'reminder failed; retrying');
        if (payload?.name) {
          // A fresh name: never re-registered under its own name from its own callback.
          const retry = { name: freshReminderName(payload.name, Date.now()), data: payload.data };
          await this.registerActorReminder(retry.name, Temporal.Duration.from({ milliseconds: RETRY_MS }), undefined, undefined, retry).catch(() => undefined);
        }
      }
    }
  }

  for (const method of cls.methods) {
    Object.defineProperty(Adapter.prototype, method, {
      value: function (this: Adapter, arg: unknown) {
        // An argument that does not fit is refused before the turn: nothing changes, the activation stays.
        try {
          checkArgument(cls, method, arg);
        } catch (error) {
          return Promise.resolve({ ok: false, error: toGatewayError(error).toJSON() });
        }
        return this.run((core) => (core[method] as (a: unknown) => Promise<unknown>).call(core, arg));
      },
    });
  }
  // The Dapr actor type is the class name: it must be exactly the frozen type name.
  Object.defineProperty(Adapter, 'name', { value: cls.actorType });
  return Adapter;
}
