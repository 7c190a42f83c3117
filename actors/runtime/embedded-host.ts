// Embedded actor host: one process, turn-based concurrency per actor id, state, outbox and
// reminders durable in the local database. A due reminder still fires after a restart.
//
// Memory stays flat however many calls pass: an activation caches only what its actor has read
// (a value only written, such as each ended hold's record, is left to the database), and an
// activation idle for `idleMs` is dropped (as Dapr deactivates idle actors), never one with a
// turn under way or queued.

import { GatewayError, toGatewayError } from '../../lib/errors';
import type { EventEnvelope } from '../../lib/events';
import type { LocalDb } from '../../lib/local-db';
import { metrics, type ActorGauge } from '../../lib/metrics';
import { faultPoint } from '../../lib/fault-points';
import { detached } from '../../lib/request-context';
import { SpanKind, tracedActorCall } from '../../lib/tracing';
import { OUTBOX_DELIVER_METHOD, OUTBOX_PENDING_METHOD, type ActorClass, type ActorContext, type ActorInstance, type ActorInvoker, type OutboxDelivery, type OutboxPending } from './port';

export type Publisher = (event: EventEnvelope) => Promise<void>;

interface Turn {
  dirty: Map<string, unknown>;
  events: EventEnvelope[];
  gauges: [ActorGauge, number][];
  /** Reminders registered (or removed: DELETED) during the turn, by key: stored in its commit. */
  reminders: Map<string, StoredReminder | typeof DELETED>;
}

interface Activation {
  instance: ActorInstance & Record<string, unknown>;
  /** Committed state read so far (and kept current by this actor's own writes). */
  cache: Map<string, unknown>;
  /** The uncommitted changes of the turn under way. */
  turn: Turn;
  /** When its last turn ended (performance.now()): idle activations are dropped. */
  lastUsed: number;
}

interface StoredReminder {
  actorType: string;
  actorId: string;
  name: string;
  dueAt: number;
  data: unknown;
  /** Set for a periodic reminder: due again this long after each firing. */
  periodMs?: number;
}

const DELETED = Symbol('deleted');
const MAX_TIMER_MS = 2 ** 31 - 1;
const OUTBOX_RETRY_MS = 2000;
/** Dropped after this long without a turn (lib/config.ts GATEWAY_ACTOR_IDLE_MS has the same default). */
export const DEFAULT_ACTOR_IDLE_MS = 10 * 60_000;
/** How often idle activations are looked for, at most (Dapr scans every 30 s). */
const IDLE_SCAN_MS = 30_000;

export interface EmbeddedHostOptions {
  db: LocalDb;
  publish: Publisher;
  /**
   * An in-process consumer on the same database (the embedded ledger): events are delivered
   * inside the state commit's own transaction, so the outbox is not needed for them. It must be
   * synchronous and idempotent by event id.
   */
  deliverInCommit?: (event: EventEnvelope) => void;
  now?: () => number;
  /** An activation without a turn for this long is dropped (default DEFAULT_ACTOR_IDLE_MS). */
  idleMs?: number;
  /** Observes every actor call (tracing, metrics); must not throw. */
  onCall?: (actorType: string, actorId: string, method: string, durationMs: number, ok: boolean) => void;
}

export class EmbeddedActorHost implements ActorInvoker {
  private readonly classes = new Map<string, ActorClass>();
  private readonly activations = new Map<string, Activation>();
  private readonly turns = new Map<string, Promise<unknown>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private outboxRetry: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly now: () => number;
  private readonly idleMs: number;
  private readonly idleScan: NodeJS.Timeout;

  constructor(private readonly options: EmbeddedHostOptions) {
    this.now = options.now ?? Date.now;
    this.idleMs = options.idleMs ?? DEFAULT_ACTOR_IDLE_MS;
    this.idleScan = setInterval(() => this.deactivateIdle(), Math.min(IDLE_SCAN_MS, this.idleMs));
    this.idleScan.unref();
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
    for (const activation of this.activations.values()) cachedValues += activation.cache.size;
    return { activations: this.activations.size, cachedValues, reminderTimers: this.timers.size };
  }

  /** Drops activations idle for idleMs; one with a turn running or queued is in `turns` and stays. */
  private deactivateIdle(): void {
    const idleSince = performance.now() - this.idleMs;
    for (const [key, activation] of this.activations) {
      if (activation.lastUsed <= idleSince && !this.turns.has(key)) this.activations.delete(key);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleScan);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    if (this.outboxRetry) clearTimeout(this.outboxRetry);
    await Promise.allSettled([...this.turns.values()]);
  }

  invoke<R>(actorType: string, actorId: string, method: string, arg: unknown): Promise<R> {
    const cls = this.classes.get(actorType);
    if (!cls) return Promise.reject(new GatewayError('not_found', `unknown actor type ${actorType}`));
    // The host-level outbox methods (port.ts): the embedded ledger appends an event inside the
    // commit that emits it (or the host publishes its outbox itself), so nothing is pending here.
    if (method === OUTBOX_PENDING_METHOD) return this.turn(cls, actorId, async () => ({ events: [] } satisfies OutboxPending as R), method);
    if (method === OUTBOX_DELIVER_METHOD) return this.turn(cls, actorId, async () => ({ delivered: [], pending: [] } satisfies OutboxDelivery as R), method);
    if (!cls.methods.includes(method)) return Promise.reject(new GatewayError('not_found', `${actorType} has no method ${method}`));
    const call = () => this.turn(cls, actorId, (instance) => (instance[method] as (a: unknown) => Promise<R>).call(instance, arg), method);
    // In process, one span per call (client and server are the same here), named as on Dapr.
    return tracedActorCall(SpanKind.INTERNAL, actorType, actorId, method, call);
  }

  /** Runs `body` as the next turn of the actor: strictly one at a time per actor id. */
  private turn<R>(cls: ActorClass, actorId: string, body: (instance: Activation['instance'], turn: Turn) => Promise<R>, label: string): Promise<R> {
    const key = `${cls.actorType}\u0000${actorId}`;
    const previous = this.turns.get(key);
    const run = previous ? previous.then(() => this.execute(cls, actorId, key, body, label)) : this.execute(cls, actorId, key, body, label);
    const tail = run.then(noop, noop);
    this.turns.set(key, tail);
    void tail.then(() => {
      if (this.turns.get(key) === tail) this.turns.delete(key);
    });
    return run;
  }

  private async execute<R>(cls: ActorClass, actorId: string, key: string, body: (instance: Activation['instance'], turn: Turn) => Promise<R>, label: string): Promise<R> {
    const started = performance.now();
    const activation = this.activate(cls, actorId, key);
    const { dirty, events, gauges, reminders } = activation.turn;
    let ok = false;
    try {
      const result = await body(activation.instance, activation.turn);
      this.commit(key, dirty, events, reminders);
      ok = true;
      for (const [gauge, delta] of gauges) metrics.actorGauge(gauge, delta);
      // Only what the actor reads is cached: a value it only wrote stays in the database alone.
      for (const [stateKey, value] of dirty) {
        if (value === DELETED) activation.cache.delete(stateKey);
        else if (activation.cache.has(stateKey)) activation.cache.set(stateKey, value);
      }
      if (events.length > 0 && !this.options.deliverInCommit) await this.publishAll(events);
      return result;
    } catch (error) {
      // The method may have mutated cached objects before failing: drop the activation.
      this.activations.delete(key);
      throw toGatewayError(error);
    } finally {
      activation.lastUsed = performance.now();
      this.options.onCall?.(cls.actorType, actorId, label, activation.lastUsed - started, ok);
    }
  }

  private activate(cls: ActorClass, actorId: string, key: string): Activation {
    let activation = this.activations.get(key);
    if (!activation) {
      const created: Activation = { instance: undefined as unknown as Activation['instance'], cache: new Map(), turn: newTurn(), lastUsed: performance.now() };
      created.instance = new cls(this.context(cls.actorType, actorId, key, created)) as Activation['instance'];
      this.activations.set(key, created);
      activation = created;
    } else {
      activation.turn = newTurn();
    }
    return activation;
  }

  private context(actorType: string, actorId: string, key: string, activation: Activation): ActorContext {
    const db = this.options.db;
    const cache = activation.cache;
    const turnOf = () => activation.turn;
    /** This turn's write, else the cached value, else the database's (kept in the cache when `keep`). */
    const read = async <T>(stateKey: string, keep: boolean): Promise<T | undefined> => {
      const { dirty } = turnOf();
      if (dirty.has(stateKey)) {
        const value = dirty.get(stateKey);
        return value === DELETED ? undefined : (value as T);
      }
      if (cache.has(stateKey)) return cache.get(stateKey) as T;
      const stored = db.actorState.get(`${key}\u0000${stateKey}`) as T | undefined;
      if (keep && stored !== undefined) cache.set(stateKey, stored);
      return stored;
    };
    return {
      actorType,
      actorId,
      now: this.now,
      actors: this,
      state: {
        get: <T>(stateKey: string) => read<T>(stateKey, true),
        getUncached: <T>(stateKey: string) => read<T>(stateKey, false),
        set<T>(stateKey: string, value: T): void {
          turnOf().dirty.set(stateKey, value);
        },
        remove(stateKey: string): void {
          turnOf().dirty.set(stateKey, DELETED);
        },
      },
      // Stored in the turn's own commit (with its state), so a crash keeps both or neither.
      reminders: {
        register: async (name, dueInMs, data, options) => {
          const periodMs = options?.periodMs;
          const reminder: StoredReminder = { actorType, actorId, name, dueAt: this.now() + dueInMs, data: data ?? null, ...(periodMs ? { periodMs } : {}) };
          turnOf().reminders.set(reminderKey(actorType, actorId, name), reminder);
        },
        unregister: async (name) => {
          turnOf().reminders.set(reminderKey(actorType, actorId, name), DELETED);
        },
      },
      emit(event: EventEnvelope): void {
        turnOf().events.push(event);
      },
      adjustGauge(gauge, delta): void {
        turnOf().gauges.push([gauge, delta]);
      },
    };
  }

  /** State changes, reminders and the outbox (or the in-process delivery) in one LMDB transaction. */
  private commit(key: string, dirty: Map<string, unknown>, events: EventEnvelope[], reminders: Turn['reminders']): void {
    if (dirty.size === 0 && events.length === 0 && reminders.size === 0) return;
    const { root, actorState, outbox } = this.options.db;
    const deliver = this.options.deliverInCommit;
    root.transactionSync(() => {
      for (const [stateKey, value] of dirty) {
        if (value === DELETED) actorState.removeSync(`${key}\u0000${stateKey}`);
        else actorState.putSync(`${key}\u0000${stateKey}`, value);
      }
      for (const event of events) {
        if (deliver) deliver(event);
        else outbox.putSync(event.id, event);
      }
      this.storeReminders(reminders);
    });
    this.scheduleCommitted(reminders);
    // Delivered in the commit: handed over and taken at once, and only once it has committed.
    if (deliver) {
      for (const event of events) {
        metrics.eventPublished(event.topic);
        metrics.eventAcknowledged(event.topic);
      }
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

  private storeReminders(reminders: Turn['reminders']): void {
    for (const [rKey, reminder] of reminders) {
      if (reminder === DELETED) this.options.db.reminders.removeSync(rKey);
      else this.options.db.reminders.putSync(rKey, reminder);
    }
  }

  /** Timers follow the committed reminders (never a turn's that failed). */
  private scheduleCommitted(reminders: Turn['reminders']): void {
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

  private async fire(rKey: string, reminder: StoredReminder): Promise<void> {
    this.timers.delete(rKey);
    if (reminder.dueAt > this.now()) return this.schedule(reminder);
    const cls = this.classes.get(reminder.actorType);
    if (!cls) return;
    const stored = () => this.options.db.reminders.get(rKey) as StoredReminder | undefined;
    if (stored()?.dueAt !== reminder.dueAt) return; // replaced or removed since scheduled
    try {
      // The firing reminder is removed (a periodic one: moved to its next due time) in the turn's
      // own commit, so a crash before that commit leaves it stored and it fires again after a
      // restart. Set before the handler runs: a reminder the handler registers again replaces it.
      await this.turn(cls, reminder.actorId, async (instance, turn) => {
        if (stored()?.dueAt === reminder.dueAt) {
          turn.reminders.set(rKey, reminder.periodMs ? { ...reminder, dueAt: this.now() + reminder.periodMs } : DELETED);
        }
        await instance.onReminder(reminder.name, reminder.data);
        faultPoint('reminder-before-commit');
      }, `reminder:${reminder.name}`);
      metrics.reminderFired(reminder.actorType, 'ok');
    } catch {
      metrics.reminderFired(reminder.actorType, 'failed');
      // A failed reminder turn committed nothing: the reminder is still stored. It is retried,
      // so a due expiry is never lost.
      const current = stored();
      if (!current || current.dueAt === reminder.dueAt) {
        const retry = { ...reminder, dueAt: this.now() + OUTBOX_RETRY_MS };
        this.options.db.reminders.putSync(rKey, retry);
        this.schedule(retry);
      }
    }
  }
}

function reminderKey(actorType: string, actorId: string, name: string): string {
  return `${actorType}\u0000${actorId}\u0000${name}`;
}

function newTurn(): Turn {
  return { dirty: new Map(), events: [], gauges: [], reminders: new Map() };
}

function noop(): void {}
