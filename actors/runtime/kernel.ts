// The actor kernel both hosts share: one activation per actor id, its turns one at a time, and
// the turn buffer the actor writes into (state, outbox events, gauges, reminders) until the host
// has committed it. A host supplies only its storage (how a committed value is read, how a turn
// is made durable) and its reminder backend; everything an actor sees (ActorContext) is here.
// Longer than 300 lines on purpose: the turn buffer, its activation and its queue are one
// invariant (what a turn may read while others commit); split, each part would need the others' internals.
//
// - Read-your-writes: a read goes to this turn's writes, then the activation's cache, then
//   the writes of earlier turns still being committed, then the host's store.
// - Only what the actor reads, or writes asking to keep it, is cached (a value only written
//   stays in the store alone), until it is written asking not to keep it.
// - Gauges move once the turn has committed, never for a turn that failed.
// - A failed turn (its body threw, or its commit failed) resets the activation: the method may
//   have mutated cached objects. A later turn that already ran on the reset activation (hosts
//   that overlap commits) is failed too, never committed.
// - Overlapping commits (embedded group commit): the next turn may start while the previous one
//   is still committing. Actors mutate the objects they read in place, so before it starts, the
//   values the committing turns wrote are copied (or encoded, KernelHost.isolate): what commits
//   is each turn's own state, never a later turn's half-done change. A turn whose body fails waits for its predecessors' commits
//   before the activation is reset, so the next turn reads them from the store.

import type { EventEnvelope } from '../../lib/events';
import { metrics, type ActorGauge } from '../../lib/metrics';
import type { ActorClass, ActorContext, ActorInstance, ActorInvoker } from './port';

/**
 * An activation without a call for this long is dropped from memory, on both hosts (lib/config.ts
 * GATEWAY_ACTOR_IDLE_MS has the same default): by the embedded host itself, and on Dapr by daprd,
 * which the actors app tells in its actor config (actorIdleTimeout, in place of Dapr's 1 hour).
 */
export const DEFAULT_ACTOR_IDLE_MS = 10 * 60_000;

/** How often idle activations are looked for: every 30 s (Dapr's default), or as often as the idle time when it is shorter. */
export function idleScanMs(idleMs: number): number {
  return Math.min(30_000, idleMs);
}

/** A removed key in a turn's writes. */
export const DELETED: unique symbol = Symbol('deleted');
/** In the cache: the key is known to be absent from the store. */
const ABSENT: unique symbol = Symbol('absent');

export type Instance = ActorInstance & Record<string, unknown>;

export interface ReminderRegistration {
  /** The name the actor gave. */
  name: string;
  /** The name to register under (see registeredReminderName). */
  registeredAs: string;
  dueInMs: number;
  data: unknown;
  periodMs?: number;
}

/** One turn's uncommitted changes. */
export interface TurnBuffer {
  readonly writes: Map<string, unknown>;
  readonly events: EventEnvelope[];
  readonly gauges: [ActorGauge, number][];
  /** For the host's reminder backend (the embedded host stores them in the turn's commit). */
  readonly reminders: Map<string, unknown>;
  /** The reminder (as registered) this turn was started for. */
  readonly firing: string | undefined;
  /** Keys written with `keep` (ActorState.set): true, cached once the turn is sealed; false, dropped from the cache. */
  readonly keep: Map<string, boolean>;
}

export interface CommitRequest {
  readonly turn: TurnBuffer;
  /** False once an earlier turn of the activation failed: this turn must not be committed. */
  live(): boolean;
  /** The host failed to commit this turn: resets the activation at once (call before moving on). */
  abort(): void;
}

export interface KernelHost {
  readonly actors: ActorInvoker;
  now(): number;
  /** The committed value of a state key (undefined: absent). */
  read(activation: Activation, key: string): unknown;
  /** Runs after the body, before the turn is handed over: a host's own writes (the Dapr outbox). */
  prepare?(activation: Activation, turn: TurnBuffer): Promise<void>;
  /**
   * Overlapping commits: a later turn is about to start while this one is still committing. What
   * the host will commit must no longer share objects the next turn may change in place (the
   * embedded host encodes the values now; by default they are copied).
   */
  isolate?(activation: Activation, turn: TurnBuffer): void;
  /**
   * Makes the turn durable: returns once committed (nothing: committed already), or a promise
   * resolved once committed. Throwing or rejecting: nothing of it was committed.
   */
  commit(activation: Activation, request: CommitRequest): Promise<void> | void;
  register(activation: Activation, turn: TurnBuffer, reminder: ReminderRegistration): Promise<void>;
  /** `names`: the name the actor gave and any fresh name it was registered under by this activation. */
  unregister(activation: Activation, turn: TurnBuffer, name: string, names: string[]): Promise<void>;
}

export interface KernelOptions {
  /**
   * The next turn may start once this one is handed to the host's commit, before it is durable
   * (the embedded host's group commit). Each caller is still answered only after its own commit.
   */
  overlapCommits?: boolean;
  /** Keep "absent" in the cache (the store is remote); otherwise only present values are kept. */
  cacheAbsent?: boolean;
  /** Register a one-shot reminder under a fresh name when it is the one now firing (Dapr Scheduler). */
  freshReminderNames?: boolean;
}

/**
 * Reminder names. The Dapr Scheduler may delete a one-shot job re-registered under its own name
 * from its own callback, so such a registration (and a failed reminder's retry) goes under a
 * fresh name: the actor's name, this suffix and a time. Actors are given back their own name.
 */
export const FRESH_REMINDER_SUFFIX = '~retry@';

/** The name an actor gave a reminder registered under `registered`. */
export function actorReminderName(registered: string): string {
  const at = registered.indexOf(FRESH_REMINDER_SUFFIX);
  return at < 0 ? registered : registered.slice(0, at);
}

/** A fresh name for the reminder registered as `registered` (its retry, or its re-registration). */
export function freshReminderName(registered: string, now: number): string {
  return `${actorReminderName(registered)}${FRESH_REMINDER_SUFFIX}${now}`;
}

/** The name to register `name` under during a turn started for `firing`. */
export function registeredReminderName(name: string, firing: string | undefined, periodic: boolean, now: number): string {
  return !periodic && firing === name ? freshReminderName(name, now) : name;
}

function newTurn(firing?: string): TurnBuffer {
  return { writes: new Map(), events: [], gauges: [], reminders: new Map(), firing, keep: new Map() };
}

const COMMITTED: Promise<void> = Promise.resolve();

interface Committing {
  turn: TurnBuffer;
  durable: Promise<void>;
  copied: boolean;
}

/** A turn handed to the host's commit (a class: no closures per turn). */
class Commit implements CommitRequest {
  constructor(private readonly activation: Activation, readonly turn: TurnBuffer, private readonly incarnation: number) {}
  live(): boolean {
    return this.activation.isLive(this.incarnation);
  }
  abort(): void {
    this.activation.abortCommit(this.incarnation);
  }
}

export class TurnFailedEarlier extends Error {
  constructor() {
    super('an earlier turn of this actor failed to commit');
  }
}

export class Activation {
  private core: Instance | undefined;
  /** Committed state read so far, kept current by this actor's own writes. */
  private cache = new Map<string, unknown>();
  /** Writes handed to the host's commit, not yet durable (only when commits overlap). */
  private pending = new Map<string, { value: unknown; turn: TurnBuffer }>();
  /** Fresh names this activation registered reminders under, by the actor's name. */
  private readonly freshNames = new Map<string, string>();
  private turnBuffer: TurnBuffer = newTurn();
  /** Turns handed to the host's commit, not yet durable (overlapping commits), oldest first. */
  private committing: Committing[] = [];
  /** Bumped when a commit fails: a turn begun on an earlier incarnation is not committed. */
  private incarnation = 0;
  /** The ticket of the turn holding the activation (0: none), and the turns waiting for it. */
  private owner = 0;
  private tickets = 0;
  private readonly waiting: { ticket: number; start: () => void }[] = [];
  /** Turns queued, running or committing. */
  private busy = 0;
  /** When its last turn ended (performance.now()). */
  lastUsed = performance.now();
  /** Whether a turn of this activation has handed anything to the host's commit (state, events, reminders). */
  private changed = false;

  constructor(
    readonly cls: ActorClass,
    readonly actorId: string,
    private readonly host: KernelHost,
    private readonly options: KernelOptions = {},
  ) {}

  /** Whether a turn is queued, running or committing. */
  get active(): boolean {
    return this.busy > 0;
  }

  /**
   * Holds nothing a later turn could use: no turn under way, no state read into the cache or
   * written, no reminder registered under a fresh name. Such is the activation of an id nobody
   * made (a made-up image task, order or session id): a host need not keep it.
   */
  get holdsNothing(): boolean {
    return this.busy === 0 && !this.changed && this.cache.size === 0 && this.pending.size === 0 && this.committing.length === 0 && this.freshNames.size === 0;
  }

  /** Cached values (memory accounting). */
  get cachedValues(): number {
    return this.cache.size;
  }

  /** The turn under way (or the last one). */
  get turn(): TurnBuffer {
    return this.turnBuffer;
  }

  get instance(): Instance {
    if (!this.core) this.core = new this.cls(this.context()) as Instance;
    return this.core;
  }

  /** Forgets the instance and everything it has read: the next turn starts afresh. */
  reset(): void {
    this.core = undefined;
    this.cache = new Map();
    this.pending = new Map();
  }

  /** A commit failed: its turn and every later one already run are void, and the activation reset. */
  private abandon(): void {
    this.incarnation++;
    this.committing = [];
    this.reset();
  }

  /**
   * Before a turn starts beside committing ones: what they commit is their own copy. False when a
   * value could not be copied (that turn's commit will fail the same way): then wait for them.
   */
  private isolateCommitting(): boolean {
    for (const entry of this.committing) {
      if (entry.copied) continue;
      try {
        if (this.host.isolate) {
          this.host.isolate(this, entry.turn);
        } else {
          for (const [key, value] of entry.turn.writes) {
            if (typeof value === 'object' && value !== null) entry.turn.writes.set(key, structuredClone(value));
          }
        }
        entry.copied = true;
      } catch {
        return false;
      }
    }
    return true;
  }

  /** A committed value, through the cache (`keep`: kept there) and the writes still committing. */
  async read<T>(key: string, keep = true): Promise<T | undefined> {
    if (this.cache.has(key)) {
      const cached = this.cache.get(key);
      return cached === ABSENT ? undefined : (cached as T);
    }
    const pending = this.pending.get(key);
    if (pending) {
      if (pending.value === DELETED) return undefined;
      if (keep) this.cache.set(key, pending.value);
      return pending.value as T;
    }
    const incarnation = this.incarnation;
    const stored = (await this.host.read(this, key)) as T | undefined;
    if (keep && incarnation === this.incarnation) {
      if (stored !== undefined) this.cache.set(key, stored);
      else if (this.options.cacheAbsent) this.cache.set(key, ABSENT);
    }
    return stored;
  }

  /** Runs `body` as this actor's next turn (strictly one at a time) and commits it. */
  run<R>(body: (instance: Instance, turn: TurnBuffer) => Promise<R>, firing?: string): Promise<R> {
    this.busy++;
    const ticket = ++this.tickets;
    if (this.owner === 0) {
      this.owner = ticket;
      return this.execute(body, firing, ticket);
    }
    return new Promise<void>((start) => this.waiting.push({ ticket, start })).then(() => this.execute(body, firing, ticket));
  }

  /** Runs a reminder's turn: the actor is told its own name for it (see actorReminderName). */
  remind(registered: string, data: unknown, hooks: { before?: (turn: TurnBuffer) => void; after?: () => void } = {}): Promise<void> {
    return this.run(async (instance, turn) => {
      hooks.before?.(turn);
      await instance.onReminder(actorReminderName(registered), data);
      hooks.after?.();
    }, registered);
  }

  /** The turn holding the activation lets the next queued one start (once; later calls do nothing). */
  private release(ticket: number): void {
    if (this.owner !== ticket) return;
    const next = this.waiting.shift();
    if (next) {
      this.owner = next.ticket;
      next.start();
    } else {
      this.owner = 0;
    }
  }

  /** Whether a commit of a turn begun in `incarnation` may still go ahead (CommitRequest.live). */
  isLive(incarnation: number): boolean {
    return incarnation === this.incarnation;
  }

  /** A commit of a turn begun in `incarnation` failed (CommitRequest.abort). */
  abortCommit(incarnation: number): void {
    if (incarnation === this.incarnation) this.abandon();
  }

  private async execute<R>(body: (instance: Instance, turn: TurnBuffer) => Promise<R>, firing: string | undefined, ticket: number): Promise<R> {
    const overlap = this.options.overlapCommits === true;
    try {
      if (overlap && this.committing.length > 0 && !this.isolateCommitting()) await Promise.allSettled(this.committing.map((entry) => entry.durable));
      const turn = (this.turnBuffer = newTurn(firing));
      const incarnation = this.incarnation;
      let result: R;
      try {
        result = await body(this.instance, turn);
        if (incarnation !== this.incarnation) throw new TurnFailedEarlier();
        if (this.host.prepare) await this.host.prepare(this, turn);
      } catch (error) {
        if (incarnation === this.incarnation) {
          // The earlier turns' writes stay visible until they are durable; then all is forgotten.
          if (this.committing.length > 0) await Promise.allSettled(this.committing.map((entry) => entry.durable));
          if (incarnation === this.incarnation) this.reset();
        }
        throw error;
      }
      const request = new Commit(this, turn, incarnation);
      if (turn.writes.size > 0 || turn.events.length > 0 || turn.reminders.size > 0) this.changed = true;
      // In `committing` before the host sees it: a commit may fail (and reset) at once.
      const entry: Committing = { turn, durable: COMMITTED, copied: false };
      if (overlap) {
        this.seal(turn);
        this.committing.push(entry);
      }
      try {
        const durable = this.host.commit(this, request);
        if (durable) {
          entry.durable = durable;
          if (overlap) this.release(ticket);
          await durable;
        } else if (overlap) {
          // Nothing of its own to commit, but it may have read what earlier turns have not made
          // durable yet: answered once they are, never with what a failed commit undid.
          const earlier = this.committing.filter((other) => other !== entry);
          if (earlier.length > 0) {
            this.release(ticket);
            await Promise.allSettled(earlier.map((other) => other.durable));
            if (incarnation !== this.incarnation) throw new TurnFailedEarlier();
          }
        }
      } catch (error) {
        request.abort();
        throw error;
      }
      if (overlap) {
        const at = this.committing.indexOf(entry);
        if (at >= 0) this.committing.splice(at, 1);
        this.unpend(turn);
      } else {
        this.seal(turn, false);
      }
      for (const [gauge, delta] of turn.gauges) metrics.actorGauge(gauge, delta);
      return result;
    } finally {
      this.release(ticket);
      this.busy--;
      this.lastUsed = performance.now();
    }
  }

  /**
   * The turn's writes as the next turn sees them: a value already cached is updated, one written
   * with `keep` true is cached (a value the actor only writes is not kept, nor one written with
   * `keep` false); the others wait in `pending` until committed.
   */
  private seal(turn: TurnBuffer, pend = true): void {
    for (const [key, value] of turn.writes) {
      const cached = this.cache.has(key) ? this.cache.get(key) : undefined;
      const keep = turn.keep.get(key);
      if (value !== DELETED && keep !== false && (keep === true || (this.cache.has(key) && cached !== ABSENT))) this.cache.set(key, value);
      else if (this.cache.has(key) && value === DELETED && this.options.cacheAbsent) this.cache.set(key, ABSENT);
      else {
        this.cache.delete(key);
        if (pend) this.pending.set(key, { value, turn });
      }
    }
  }

  private unpend(turn: TurnBuffer): void {
    for (const key of turn.writes.keys()) if (this.pending.get(key)?.turn === turn) this.pending.delete(key);
  }

  private context(): ActorContext {
    const turn = () => this.turnBuffer;
    const read = <T>(key: string, keep: boolean): Promise<T | undefined> => {
      const { writes } = turn();
      if (writes.has(key)) {
        const value = writes.get(key);
        return Promise.resolve(value === DELETED ? undefined : (value as T));
      }
      return this.read<T>(key, keep);
    };
    return {
      actorType: this.cls.actorType,
      actorId: this.actorId,
      now: () => this.host.now(),
      actors: this.host.actors,
      state: {
        get: <T>(key: string) => read<T>(key, true),
        getUncached: <T>(key: string) => read<T>(key, false),
        set: (key, value, options) => {
          const { writes, keep } = turn();
          writes.set(key, value);
          if (options?.keep === undefined) keep.delete(key);
          else keep.set(key, options.keep);
        },
        remove: (key) => {
          const { writes, keep } = turn();
          writes.set(key, DELETED);
          keep.delete(key);
        },
      },
      reminders: {
        register: async (name, dueInMs, data, options) => {
          const current = turn();
          const periodMs = options?.periodMs;
          const registeredAs = this.options.freshReminderNames ? registeredReminderName(name, current.firing, Boolean(periodMs), this.host.now()) : name;
          if (registeredAs !== name) this.freshNames.set(name, registeredAs);
          else this.freshNames.delete(name);
          await this.host.register(this, current, { name, registeredAs, dueInMs, data: data ?? null, ...(periodMs ? { periodMs } : {}) });
        },
        unregister: async (name) => {
          const fresh = this.freshNames.get(name);
          this.freshNames.delete(name);
          await this.host.unregister(this, turn(), name, fresh ? [name, fresh] : [name]);
        },
      },
      emit: (event) => void turn().events.push(event),
      adjustGauge: (gauge, delta) => void turn().gauges.push([gauge, delta]),
    };
  }
}
