// Embedded actor host: one process, the actor kernel (kernel.ts) over the local database. State,
// outbox and reminders are durable in LMDB; a due reminder still fires after a restart.
// Longer than 300 lines on purpose: activation lifecycle, durable reminders and the commit path
// share the host's bookkeeping of turns in flight (idle eviction must see all three).
//
// Group commit: the turns that end together (in one pass of the event loop) are committed in one
// LMDB transaction (group-commit.ts); each caller is answered once its own turn has committed.
// An actor's next turn may start while the previous one is committing: it reads that turn's
// writes (kernel.ts keeps them visible until committed), and should that commit fail, it fails too.
//
// Memory stays flat however many calls pass: an activation caches only what its actor has read
// (a value only written, such as each ended hold's record, is left to the database), and an
// activation idle for `idleMs` is dropped (as Dapr deactivates idle actors), never one with a
// turn under way, queued or committing.

import { GatewayError, toGatewayError } from '../../lib/errors';
import type { EventEnvelope } from '../../lib/events';
import { asBinary } from 'lmdb';
import type { LocalDb } from '../../lib/local-db';
import { metrics } from '../../lib/metrics';
import { faultPoint } from '../../lib/fault-points';
import { detached } from '../../lib/request-context';
import { SpanKind, tracedActorCall } from '../../lib/tracing';
import { GroupCommitter } from './group-commit';
import { Activation, DEFAULT_ACTOR_IDLE_MS, DELETED, idleScanMs, type CommitRequest, type Instance, type KernelHost, type TurnBuffer } from './kernel';
import { OUTBOX_DELIVER_METHOD, OUTBOX_PENDING_METHOD, type ActorClass, type ActorInvoker, type OutboxDelivery, type OutboxPending } from './port';
import { checkArgument } from './args';

export type Publisher = (event: EventEnvelope) => Promise<void>;

interface StoredReminder {
  actorType: string;
  actorId: string;
  name: string;
  dueAt: number;
  data: unknown;
  /** Set for a periodic reminder: due again this long after each firing. */
  periodMs?: number;
}

/** A turn's reminder changes (TurnBuffer.reminders), by reminder key. */
type ReminderChanges = Map<string, StoredReminder | typeof DELETED>;

/** How lmdb-js marks a value given as encoded bytes (lmdb asBinary). */
const ENCODED = '\x10binary-data\x02';
const MAX_TIMER_MS = 2 ** 31 - 1;
const OUTBOX_RETRY_MS = 2000;
export { DEFAULT_ACTOR_IDLE_MS } from './kernel';

const activationKey = (actorType: string, actorId: string) => `${actorType}\u0000${actorId}`;

export interface EmbeddedHostOptions {
  db: LocalDb;
  publish: Publisher;
  /**
   * An in-process consumer on the same database (the embedded ledger): a turn's events are
   * delivered inside the state commit's own transaction (its write transaction is open: the
   * consumer writes in it), so the outbox is not needed for them. It must be synchronous and
   * idempotent by event id.
   */
  deliverInCommit?: (events: readonly EventEnvelope[]) => void;
  now?: () => number;
  /** An activation without a turn for this long is dropped (default DEFAULT_ACTOR_IDLE_MS). */
  idleMs?: number;
  /** Observes every actor call (tracing, metrics); must not throw. */
  onCall?: (actorType: string, actorId: string, method: string, durationMs: number, ok: boolean) => void;
  /**
   * Whether the data directory is still this process's (lib/data-dir-lock.ts, DataDirLock.held):
   * asked before each commit, so that a process that stalled while another took the directory
   * writes none of the turns that were due.
   */
  held?: () => boolean;
}

export class EmbeddedActorHost implements ActorInvoker {
  private readonly classes = new Map<string, ActorClass>();
  private readonly activations = new Map<string, Activation>();
  /** Turns not yet answered (close waits for them). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Reminder changes handed to a commit not yet done: what `storedReminder` answers meanwhile. */
  private readonly committingReminders = new Map<string, { change: StoredReminder | typeof DELETED; turn: TurnBuffer }>();
  private outboxRetry: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly now: () => number;
  private readonly idleMs: number;
  private readonly idleScan: NodeJS.Timeout;
  private readonly committer: GroupCommitter;
  private readonly kernel: KernelHost;

  constructor(private readonly options: EmbeddedHostOptions) {
    this.now = options.now ?? Date.now;
    this.idleMs = options.idleMs ?? DEFAULT_ACTOR_IDLE_MS;
    this.idleScan = setInterval(() => this.deactivateIdle(), idleScanMs(this.idleMs));
    this.idleScan.unref();
    this.committer = new GroupCommitter(options.db.root, (activation, turn) => this.write(activation, turn), options.held);
    const db = options.db;
    // The state database's own encoder (lmdb-js: the same its puts use, shared structures included).
    const encoder = (db.actorState as unknown as { encoder: { encode(value: unknown): Uint8Array } }).encoder;
    this.kernel = {
      actors: this,
      now: this.now,
      read: (activation, key) => db.actorState.get(stateKey(activation, key)),
      commit: (activation, request) => this.commit(activation, request),
      // Encoded now, as the commit would (so it costs nothing more): the bytes are this turn's.
      isolate: (_activation, turn) => {
        for (const [key, value] of turn.writes) {
          if (value !== DELETED && !isEncoded(value)) turn.writes.set(key, asBinary(Uint8Array.prototype.slice.call(encoder.encode(value))));
        }
      },
      // Stored in the turn's own commit (with its state), so a crash keeps both or neither.
      register: async (activation, turn, reminder) => {
        const { actorType } = activation.cls;
        const stored: StoredReminder = { actorType, actorId: activation.actorId, name: reminder.registeredAs, dueAt: this.now() + reminder.dueInMs, data: reminder.data, ...(reminder.periodMs ? { periodMs: reminder.periodMs } : {}) };
        turn.reminders.set(reminderKey(actorType, activation.actorId, reminder.registeredAs), stored);
      },
      unregister: async (activation, turn, _name, names) => {
        for (const name of names) turn.reminders.set(reminderKey(activation.cls.actorType, activation.actorId, name), DELETED);
      },
    };
  }

  register(cls: ActorClass): void {
    this.classes.set(cls.actorType, cls);
  }

  /** Schedules every stored reminder (due ones fire at once) and republishes the pending outbox. */
  async start(): Promise<void> {
    for (const { value } of this.options.db.reminders.getRange()) this.schedule(value as StoredReminder);
    await this.flushOutbox();
  }

  /** What the host keeps in memory: activations and the state values they cache. */
  stats(): { activations: number; cachedValues: number; reminderTimers: number } {
    let cachedValues = 0;
    for (const activation of this.activations.values()) cachedValues += activation.cachedValues;
    return { activations: this.activations.size, cachedValues, reminderTimers: this.timers.size };
  }

  /** LMDB transactions the host has committed turns in, and the turns (group commit). */
  commitStats(): { transactions: number; turns: number } {
    return this.committer.stats();
  }

  /** Whether the database failed to commit turns within the last `withinMs`, none committed since (readiness). */
  storageFailing(withinMs: number): boolean {
    return this.committer.storageFailing(withinMs);
  }

  /** Drops activations idle for idleMs; one with a turn running, queued or committing stays. */
  private deactivateIdle(): void {
    const idleSince = performance.now() - this.idleMs;
    for (const [key, activation] of this.activations) {
      if (activation.lastUsed <= idleSince && !activation.active) this.activations.delete(key);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleScan);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    if (this.outboxRetry) clearTimeout(this.outboxRetry);
    await Promise.allSettled([...this.inFlight]);
  }

  invoke<R>(actorType: string, actorId: string, method: string, arg: unknown): Promise<R> {
    const cls = this.classes.get(actorType);
    if (!cls) return Promise.reject(new GatewayError('not_found', `unknown actor type ${actorType}`));
    // The host-level outbox methods (port.ts): the embedded ledger appends an event inside the
    // commit that emits it (or the host publishes its outbox itself), so nothing is pending here.
    if (method === OUTBOX_PENDING_METHOD) return this.turn(cls, actorId, method, (a) => a.run(async () => ({ events: [] } satisfies OutboxPending as R)));
    if (method === OUTBOX_DELIVER_METHOD) return this.turn(cls, actorId, method, (a) => a.run(async () => ({ delivered: [], pending: [] } satisfies OutboxDelivery as R)));
    if (!cls.methods.includes(method)) return Promise.reject(new GatewayError('not_found', `${actorType} has no method ${method}`));
    // An argument that does not fit is refused before the turn: nothing changes.
    try {
      checkArgument(cls, method, arg);
    } catch (error) {
      return Promise.reject(error);
    }
    const call = () => this.turn(cls, actorId, method, (a) => a.run((instance: Instance) => (instance[method] as (x: unknown) => Promise<R>).call(instance, arg)));
    // In process, one span per call (client and server are the same here), named as on Dapr.
    return tracedActorCall(SpanKind.INTERNAL, actorType, actorId, method, call);
  }

  /** Runs one turn on the actor's activation (kernel.ts queues them one at a time), observed. */
  private turn<R>(cls: ActorClass, actorId: string, label: string, run: (activation: Activation) => Promise<R>): Promise<R> {
    const started = performance.now();
    const activation = this.activate(cls, actorId);
    const outcome = run(activation);
    this.inFlight.add(outcome);
    return outcome.then((result) => {
      this.settled(outcome, activation, label, started, true);
      return result;
    }, (error: unknown) => {
      this.settled(outcome, activation, label, started, false);
      throw toGatewayError(error);
    });
  }

  private settled(outcome: Promise<unknown>, activation: Activation, label: string, started: number, ok: boolean): void {
    const { cls: { actorType }, actorId } = activation;
    this.inFlight.delete(outcome);
    // An actor that has no state (an id a caller made up: a task, order or session nobody
    // created) is not kept for the idle time: a flood of made-up ids would hold one activation
    // each for that long.
    if (activation.holdsNothing) {
      const key = activationKey(actorType, actorId);
      if (this.activations.get(key) === activation) this.activations.delete(key);
    }
    this.options.onCall?.(actorType, actorId, label, performance.now() - started, ok);
  }

  private activate(cls: ActorClass, actorId: string): Activation {
    const key = activationKey(cls.actorType, actorId);
    let activation = this.activations.get(key);
    if (!activation) {
      activation = new Activation(cls, actorId, this.kernel, { overlapCommits: true });
      this.activations.set(key, activation);
    }
    return activation;
  }

  /** Hands the turn to the group commit; then timers, metrics and (without in-commit delivery) publishing. */
  private commit(activation: Activation, request: CommitRequest): Promise<void> | void {
    const { writes, events, reminders } = request.turn;
    if (writes.size === 0 && events.length === 0 && reminders.size === 0) return;
    const changes = reminders as ReminderChanges;
    for (const [rKey, change] of changes) this.committingReminders.set(rKey, { change, turn: request.turn });
    return this.committer.commit(activation, request).then(() => this.committed(request.turn), (error: unknown) => {
      this.forgetCommitting(request.turn);
      throw error;
    });
  }

  private forgetCommitting(turn: TurnBuffer): void {
    for (const rKey of turn.reminders.keys()) if (this.committingReminders.get(rKey)?.turn === turn) this.committingReminders.delete(rKey);
  }

  /** After the turn's commit: its reminders' timers, and its events counted (or published). */
  private committed(turn: TurnBuffer): Promise<void> | void {
    if (turn.reminders.size > 0) {
      this.forgetCommitting(turn);
      this.scheduleCommitted(turn.reminders as ReminderChanges);
    }
    if (this.options.deliverInCommit) {
      // Delivered in the commit: handed over and taken at once, and only once it has committed.
      for (const event of turn.events) {
        metrics.eventPublished(event.topic);
        metrics.eventAcknowledged(event.topic);
      }
    } else if (turn.events.length > 0) {
      return this.publishAll(turn.events);
    }
  }

  /** One turn's writes, inside the group's LMDB transaction: state, reminders, the outbox (or the in-process delivery). */
  private write(activation: Activation, turn: TurnBuffer): void {
    const { actorState, outbox, reminders } = this.options.db;
    const deliver = this.options.deliverInCommit;
    for (const [key, value] of turn.writes) {
      if (value === DELETED) actorState.removeSync(stateKey(activation, key));
      else actorState.putSync(stateKey(activation, key), value);
    }
    if (deliver) {
      if (turn.events.length > 0) deliver(turn.events);
    } else {
      for (const event of turn.events) outbox.putSync(event.id, event);
    }
    for (const [rKey, reminder] of turn.reminders as ReminderChanges) {
      if (reminder === DELETED) reminders.removeSync(rKey);
      else reminders.putSync(rKey, reminder);
    }
  }

  private async publishAll(events: EventEnvelope[]): Promise<void> {
    for (const event of events) {
      try {
        metrics.eventPublished(event.topic);
        await this.options.publish(event);
        metrics.eventAcknowledged(event.topic);
        this.options.db.outbox.removeSync(event.id);
      } catch {
        this.scheduleOutboxRetry();
      }
    }
  }

  /** Publishes whatever the outbox still holds (after a restart or a failed publish). */
  async flushOutbox(): Promise<void> {
    const pending = [...this.options.db.outbox.getRange()].map(({ value }) => value as EventEnvelope);
    await this.publishAll(pending);
  }

  private scheduleOutboxRetry(): void {
    if (this.closed || this.outboxRetry) return;
    this.outboxRetry = setTimeout(() => detached(() => {
      this.outboxRetry = undefined;
      void this.flushOutbox();
    }), OUTBOX_RETRY_MS);
    this.outboxRetry.unref();
  }

  /** Timers follow the committed reminders (never a turn's that failed). */
  private scheduleCommitted(reminders: ReminderChanges): void {
    for (const [rKey, reminder] of reminders) {
      if (reminder !== DELETED) {
        this.schedule(reminder);
      } else {
        clearTimeout(this.timers.get(rKey));
        this.timers.delete(rKey);
      }
    }
  }

  private schedule(reminder: StoredReminder): void {
    if (this.closed) return;
    const rKey = reminderKey(reminder.actorType, reminder.actorId, reminder.name);
    clearTimeout(this.timers.get(rKey));
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, reminder.dueAt - this.now()));
    // Scheduled during some request, the reminder is no part of it: it runs detached.
    const timer = setTimeout(() => detached(() => void this.fire(rKey, reminder)), delay);
    timer.unref();
    this.timers.set(rKey, timer);
  }

  /** The reminder as stored, or as a turn still committing leaves it. */
  private storedReminder(rKey: string): StoredReminder | undefined {
    const committing = this.committingReminders.get(rKey);
    if (committing) return committing.change === DELETED ? undefined : committing.change;
    return this.options.db.reminders.get(rKey) as StoredReminder | undefined;
  }

  private async fire(rKey: string, reminder: StoredReminder): Promise<void> {
    this.timers.delete(rKey);
    if (reminder.dueAt > this.now()) return this.schedule(reminder);
    const cls = this.classes.get(reminder.actorType);
    if (!cls) return;
    if (this.storedReminder(rKey)?.dueAt !== reminder.dueAt) return; // replaced or removed since scheduled
    try {
      // The firing reminder is removed (a periodic one: moved to its next due time) in the turn's
      // own commit, so a crash before that commit leaves it stored and it fires again after a
      // restart. Set before the handler runs: a reminder the handler registers again replaces it.
      await this.turn(cls, reminder.actorId, `reminder:${reminder.name}`, (activation) => activation.remind(reminder.name, reminder.data, {
        before: (turn) => {
          if (this.storedReminder(rKey)?.dueAt === reminder.dueAt) {
            turn.reminders.set(rKey, reminder.periodMs ? { ...reminder, dueAt: this.now() + reminder.periodMs } : DELETED);
          }
        },
        after: () => faultPoint('reminder-before-commit'),
      }));
      metrics.reminderFired(reminder.actorType, 'ok');
    } catch {
      metrics.reminderFired(reminder.actorType, 'failed');
      // A failed reminder turn committed nothing: the reminder is still stored. It is retried,
      // so a due expiry is never lost.
      const current = this.storedReminder(rKey);
      if (!current || current.dueAt === reminder.dueAt) {
        const retry = { ...reminder, dueAt: this.now() + OUTBOX_RETRY_MS };
        this.options.db.reminders.putSync(rKey, retry);
        this.schedule(retry);
      }
    }
  }
}

function isEncoded(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ENCODED in value;
}

function stateKey(activation: Activation, key: string): string {
  return `${activation.cls.actorType}\u0000${activation.actorId}\u0000${key}`;
}

function reminderKey(actorType: string, actorId: string, name: string): string {
  return `${actorType}\u0000${actorId}\u0000${name}`;
}
