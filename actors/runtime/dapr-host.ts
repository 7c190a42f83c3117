// Dapr actor host: wraps each plain actor class in an @dapr/dapr AbstractActor adapter whose
// class name is the actor type. State lives in the Dapr state manager (Redis state store),
// reminders in the Dapr Scheduler, events go to Dapr pub/sub through a transactional outbox.

import { AbstractActor, Temporal, type ActorId, type DaprClient } from '@dapr/dapr';
import type { Logger } from 'pino';
import type { DaprSidecar } from '../../lib/dapr-http';
import { toGatewayError } from '../../lib/errors';
import { faultPoint } from '../../lib/fault-points';
import type { EventEnvelope } from '../../lib/events';
import { metrics, type ActorGauge } from '../../lib/metrics';
import { DaprActorInvoker } from './dapr-invoker';
import { daprOutboxLedger, OutboxTracker, type OutboxLedger } from './dapr-outbox';
import { OUTBOX_DELIVER_METHOD, OUTBOX_PENDING_METHOD, type ActorCallResult, type ActorClass, type ActorContext, type ActorInstance, type OutboxDelivery, type OutboxPending } from './port';

const OUTBOX_KEY = '__outbox';
/** Confirmation rounds of the outbox: `__outbox`, or `__outbox@<ms>` (a fresh name, see receiveReminder). */
const OUTBOX_REMINDER = '__outbox';
const RETRY_MS = 2000;
const REMOVED = Symbol('removed');
/** Appended to a reminder's name when a failed reminder is retried (see receiveReminder). */
export const RETRY_SUFFIX = '~retry@';

export type DaprPublisher = (event: EventEnvelope) => Promise<void>;

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

/** Builds the AbstractActor subclass Dapr registers for `cls`; its name is `cls.actorType`. */
export function daprActorClass(cls: ActorClass, publish: DaprPublisher, sidecar: DaprSidecar, logger?: Logger, ledger: OutboxLedger = daprOutboxLedger(sidecar, 'ledger'), outboxConfirmMs?: number): new (client: DaprClient, id: ActorId) => AbstractActor {
  const actors = new DaprActorInvoker(sidecar);
  // Actor state goes straight to the sidecar's actor state API rather than through the SDK's
  // state manager: reads (absence included) are cached for the activation, a turn's writes and
  // its outbox are one state transaction, and no write needs a "does it exist" round trip first.
  class Adapter extends AbstractActor {
    private core: (ActorInstance & Record<string, unknown>) | undefined;
    private events: EventEnvelope[] = [];
    /** This turn's gauge changes, applied once its commit has succeeded. */
    private gauges: [ActorGauge, number][] = [];
    /** This turn's writes, committed in one transaction when the method has returned. */
    private writes = new Map<string, { value: unknown } | typeof REMOVED>();
    /** Committed state read since activation, kept current by its writes (REMOVED: known absent). */
    private cache = new Map<string, { value: unknown } | typeof REMOVED>();

    private statePath(key?: string): string {
      const base = `/v1.0/actors/${cls.actorType}/${encodeURIComponent(this.getActorId().getId())}/state`;
      return key === undefined ? base : `${base}/${encodeURIComponent(key)}`;
    }

    /** `keep` false: read without caching (a large value needed seldom). */
    private async read(key: string, keep = true): Promise<unknown> {
      const cached = this.cache.get(key);
      if (cached !== undefined) return cached === REMOVED ? undefined : cached.value;
      const { status, json } = await sidecar.request('GET', this.statePath(key));
      if (status === 204 || (status === 200 && json === undefined)) {
        if (keep) this.cache.set(key, REMOVED);
        return undefined;
      }
      if (status !== 200) throw new Error(`actor state read failed with ${status}`);
      if (keep) this.cache.set(key, { value: json });
      return json;
    }

    private async commit(writes: Map<string, { value: unknown } | typeof REMOVED>): Promise<void> {
      if (writes.size === 0) return;
      const operations = [...writes].map(([key, write]) =>
        write === REMOVED ? { operation: 'delete', request: { key } } : { operation: 'upsert', request: { key, value: write.value } });
      const { status, json } = await sidecar.request('POST', this.statePath(), operations);
      if (status !== 204 && status !== 200) throw new Error(`actor state transaction failed with ${status}: ${JSON.stringify(json)}`);
      // What is only written is not kept (each ended hold's record would stay for good): a write
      // updates a value read before; a key read as absent and now written is simply forgotten.
      for (const [key, write] of writes) {
        const cached = this.cache.get(key);
        if (cached === undefined) continue;
        if (cached === REMOVED && write !== REMOVED) this.cache.delete(key);
        else this.cache.set(key, write);
      }
    }
    /** The stored outbox's bookkeeping: published, confirmed by the ledger, next round (dapr-outbox.ts). */
    private readonly outbox = new OutboxTracker(Date.now, outboxConfirmMs);

    private instance(): ActorInstance & Record<string, unknown> {
      if (!this.core) this.core = new cls(this.context()) as ActorInstance & Record<string, unknown>;
      return this.core;
    }

    private context(): ActorContext {
      return {
        actorType: cls.actorType,
        actorId: this.getActorId().getId(),
        now: Date.now,
        actors,
        state: {
          get: async <T>(key: string) => {
            const written = this.writes.get(key);
            if (written !== undefined) return written === REMOVED ? undefined : (written.value as T);
            return (await this.read(key)) as T | undefined;
          },
          getUncached: async <T>(key: string) => {
            const written = this.writes.get(key);
            if (written !== undefined) return written === REMOVED ? undefined : (written.value as T);
            return (await this.read(key, false)) as T | undefined;
          },
          set: (key, value) => {
            this.writes.set(key, { value });
          },
          remove: (key) => {
            this.writes.set(key, REMOVED);
          },
        },
        reminders: {
          register: (name, dueInMs, data, options) =>
            this.registerActorReminder(name, duration(dueInMs), options?.periodMs ? duration(options.periodMs) : undefined, undefined, { name, data: data ?? null } satisfies ReminderPayload),
          unregister: (name) => this.unregisterActorReminder(name),
        },
        emit: (event) => {
          this.events.push(event);
        },
        adjustGauge: (gauge, delta) => {
          this.gauges.push([gauge, delta]);
        },
      };
    }

    /** The turn under way (or the last one): turns of this activation run one after another. */
    private queue: Promise<unknown> = Promise.resolve();

    /**
     * One turn at a time, even should daprd hand the app a second call while one runs (a call
     * retried by the resiliency policy after its timeout reaches the app beside the first):
     * the second then runs after the first and, every method being idempotent by its
     * request's id, answers the same outcome instead of repeating the change.
     */
    run(body: (core: ActorInstance & Record<string, unknown>) => Promise<unknown>, resend = false): Promise<ActorCallResult<unknown>> {
      const turn = this.queue.then(() => this.turn(body, resend));
      this.queue = turn;
      return turn;
    }

    /** One turn: run the method, then commit state and outbox in one state transaction, then publish. */
    private async turn(body: (core: ActorInstance & Record<string, unknown>) => Promise<unknown>, resend: boolean): Promise<ActorCallResult<unknown>> {
      this.events = [];
      this.writes = new Map();
      this.gauges = [];
      try {
        const result = await body(this.instance());
        const stored = await this.storedOutbox();
        const outbox = this.outbox.next(stored, this.events);
        if (outbox) this.writes.set(OUTBOX_KEY, { value: outbox });
        await this.commit(this.writes);
        this.outbox.committed();
        for (const [gauge, delta] of this.gauges) metrics.actorGauge(gauge, delta);
        // Committed: whatever happens from here on, the events are safe in the stored outbox.
        await this.sendOutbox(outbox ?? stored, resend);
        return { ok: true, result };
      } catch (error) {
        // A failed turn leaves nothing behind: the method may have mutated cached objects.
        this.cache = new Map();
        this.core = undefined;
        return { ok: false, error: toGatewayError(error).toJSON() };
      } finally {
        this.events = [];
        this.writes = new Map();
        this.gauges = [];
      }
    }

    private async storedOutbox(): Promise<EventEnvelope[]> {
      const stored = await this.read(OUTBOX_KEY);
      return Array.isArray(stored) ? (stored as EventEnvelope[]) : [];
    }

    /**
     * Publishes what is due (dapr-outbox.ts) and makes sure a confirmation round is coming while
     * the outbox holds anything. Never throws: the turn has committed, the next round retries.
     */
    private async sendOutbox(pending: EventEnvelope[], resend: boolean): Promise<void> {
      await Promise.all(this.outbox.due(pending, resend).map(async (event) => {
        try {
          metrics.eventPublished(event.topic);
          // Resolved only when daprd answered 2xx: pub/sub has taken the event, which is not
          // yet the ledger storing it (the confirmation round asks the ledger).
          await publish(event);
          metrics.eventAcknowledged(event.topic);
          this.outbox.sent(event.id);
        } catch {
          /* sent again by the next round */
        }
      }));
      if (pending.length === 0) {
        this.outbox.nextDelay(0);
        return;
      }
      if (this.outbox.scheduled) return;
      const name = `${OUTBOX_REMINDER}@${Date.now()}`;
      try {
        await this.registerActorReminder(name, Temporal.Duration.from({ milliseconds: this.outbox.nextDelay(pending.length) }), undefined, undefined, { name, data: null } satisfies ReminderPayload);
        this.outbox.scheduled = true;
      } catch (error) {
        logger?.warn({ err: (error as Error).message, actorType: cls.actorType, actorId: this.getActorId().getId() }, 'outbox round not scheduled; the next turn tries again');
      }
    }

    /** A confirmation round: the ledger names the stored events, they leave the outbox, the rest go again. */
    private async confirmOutbox(): Promise<void> {
      const stored = await this.storedOutbox();
      if (stored.length === 0) return;
      try {
        this.outbox.confirm(await ledger.stored(stored.map((event) => event.id)));
      } catch (error) {
        logger?.warn({ err: (error as Error).message, actorType: cls.actorType, actorId: this.getActorId().getId(), pending: stored.length }, 'ledger not asked; outbox events published again');
      }
    }

    /** Host-level read for reconciliation: the events this actor emitted that the ledger lacks. */
    async [OUTBOX_PENDING_METHOD](): Promise<ActorCallResult<unknown>> {
      return this.run(async () => {
        const stored = await this.storedOutbox();
        const held = stored.length > 0 ? await ledger.stored(stored.map((event) => event.id)) : new Set<string>();
        this.outbox.confirm(held);
        return { events: stored.filter((event) => !held.has(event.id)) } satisfies OutboxPending;
      });
    }

    /** Host-level repair: the outbox goes straight to the ledger (idempotent by id); what it holds leaves the outbox. */
    async [OUTBOX_DELIVER_METHOD](): Promise<ActorCallResult<unknown>> {
      return this.run(async () => {
        const stored = await this.storedOutbox();
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
        if (name.startsWith(OUTBOX_REMINDER)) {
          // This round ends here; the turn schedules the next one while events are left.
          this.outbox.scheduled = false;
          const outcome = await this.run(async () => this.confirmOutbox(), true);
          if (!outcome.ok) throw new Error(outcome.error.message);
          metrics.reminderFired(cls.actorType, 'ok');
          return;
        }
        const outcome = await this.run(async (core) => {
          await core.onReminder(name, payload?.data ?? null);
          faultPoint('reminder-before-commit');
        });
        if (!outcome.ok) throw new Error(outcome.error.message);
        metrics.reminderFired(cls.actorType, 'ok');
      } catch (error) {
        metrics.reminderFired(cls.actorType, 'failed');
        logger?.warn({ err: (error as Error).message, actorType: cls.actorType, actorId: this.getActorId().getId(), reminder: payload?.name }, 'reminder failed; retrying');
        if (payload?.name) {
          // A fresh name: the Scheduler may delete a one-shot job re-registered under its own
          // name from its own callback. Actors match their reminders by name prefix.
          const retry = { name: `${payload.name.split(RETRY_SUFFIX)[0]}${RETRY_SUFFIX}${Date.now()}`, data: payload.data };
          await this.registerActorReminder(retry.name, Temporal.Duration.from({ milliseconds: RETRY_MS }), undefined, undefined, retry).catch(() => undefined);
        }
      }
    }
  }

  for (const method of cls.methods) {
    Object.defineProperty(Adapter.prototype, method, {
      value: function (this: Adapter, arg: unknown) {
        return this.run((core) => (core[method] as (a: unknown) => Promise<unknown>).call(core, arg));
      },
    });
  }
  // The Dapr actor type is the class name: it must be exactly the frozen type name.
  Object.defineProperty(Adapter, 'name', { value: cls.actorType });
  return Adapter;
}
