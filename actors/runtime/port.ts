// The actor-context port: what an actor class may use. Both hosts (embedded, Dapr) implement it,
// so the same actor classes run on either. State changes made during one method call are
// committed together with the events the call emits (transactional outbox), or not at all.

import type { z } from 'zod';
import type { EventEnvelope } from '../../lib/events';
import type { ActorGauge } from '../../lib/metrics';

export interface ActorState {
  get<T>(key: string): Promise<T | undefined>;
  /**
   * Like get, but the value is not kept in the activation's cache: for a large value needed
   * seldom (an image artifact), so that memory does not hold it between calls.
   */
  getUncached<T>(key: string): Promise<T | undefined>;
  /**
   * `options.keep` true: once the turn is sealed the value stays in the activation's cache, as a
   * value the actor read would: for one it reads again in a later turn (a record it appends to),
   * which would otherwise be fetched from the store then. False: it leaves the cache (a value the
   * actor read but will not need again, so memory does not hold it). Without it, a value already
   * cached is kept current and one only written is not kept.
   */
  set<T>(key: string, value: T, options?: { keep?: boolean }): void;
  remove(key: string): void;
}

export interface ReminderOptions {
  /**
   * Periodic: due again every `periodMs` after the first time, until unregistered. A firing the
   * host could not deliver (actor down) is followed by the next period's, so it suits a safety net.
   */
  periodMs?: number;
}

export interface ActorReminders {
  /**
   * Reminder `name` due in `dueInMs` (one-shot unless options.periodMs); registering the same name
   * again replaces it. The embedded host stores it in the turn's own commit; Dapr at once.
   */
  register(name: string, dueInMs: number, data?: unknown, options?: ReminderOptions): Promise<void>;
  unregister(name: string): Promise<void>;
}

export interface ActorContext {
  readonly actorType: string;
  readonly actorId: string;
  readonly state: ActorState;
  readonly reminders: ActorReminders;
  /** Adds an event to the outbox in the same commit as the state; the host publishes it after. */
  emit(event: EventEnvelope): void;
  /**
   * Moves one of the host's gauges (lib/metrics.ts) by `delta` once this turn has committed, and
   * never for a turn that fails, so the gauge follows committed state, not attempts.
   */
  adjustGauge(gauge: ActorGauge, delta: number): void;
  /**
   * Calls another actor (its own turn, committed on its own). Never this actor itself: actors
   * are not reentrant. A call made during a turn that later fails is not undone, so such calls
   * must be idempotent (FundsHold's are, by hold id).
   */
  readonly actors: ActorInvoker;
  now(): number;
}

/** Every actor class: built per activation with its context; `onReminder` receives due reminders. */
export interface ActorInstance {
  onReminder(name: string, data: unknown): Promise<void>;
}

export interface ActorClass<T extends ActorInstance = ActorInstance> {
  new (context: ActorContext): T;
  /** The frozen public actor type name (Dapr actor type). */
  readonly actorType: string;
  /** Methods callable from outside, each taking one JSON argument and returning JSON. */
  readonly methods: readonly string[];
  /** The schema of each method's argument, checked by the host before the call (args.ts). */
  readonly args: Readonly<Record<string, z.ZodType>>;
}

/** What callers (the gateway) use: the same on both hosts. Errors come back as GatewayError. */
export interface ActorInvoker {
  invoke<R>(actorType: string, actorId: string, method: string, arg: unknown): Promise<R>;
}

/** Wire result of an actor call on both hosts: domain errors travel as values, not exceptions. */
export type ActorCallResult<R> = { ok: true; result: R } | { ok: false; error: { code: string; message: string; param?: string; extra?: Record<string, unknown> } };

/**
 * Host-level methods every actor type answers (reconciliation, docs/money.md): the events the
 * actor emitted that the ledger has not stored, and their direct delivery to the ledger.
 */
export const OUTBOX_PENDING_METHOD = '__outboxPending';
export const OUTBOX_DELIVER_METHOD = '__outboxDeliver';

export interface OutboxPending {
  events: EventEnvelope[];
}

export interface OutboxDelivery {
  /** Ids the ledger holds now (they have left the outbox). */
  delivered: string[];
  /** Ids still not stored (the ledger refused or lost them): still in the outbox. */
  pending: string[];
}
