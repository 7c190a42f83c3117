// ImageTask actor: one single-image generation under UNKNOWN_IMAGE_V1 (see ImageTaskInterface.ts
// and transitions.ts). The task owns the lifecycle and the evidence; the money moves on the
// owner's FundsHold (hold id `img:<taskId>`), whose calls are idempotent by hold id, so a turn
// that fails after one of them can simply be run again.
//
// An outcome is recorded (one turn) before the funds move (the next turn): an artifact, once the
// actor has it, is never lost, and a settlement that could not be made is retried by reminder.
// The artifact (up to megabytes of base64) has its own key apart from the task record
// (task-record.ts) and is read uncached only for an answer that shows it.

import { FundsHoldClient } from '../funds-hold/client';
import { DEFAULT_POOL, type FundsHoldApi, type HoldOutcome } from '../funds-hold/FundsHoldInterface';
import { GatewayError } from '../../lib/errors';
import { faultPoint } from '../../lib/fault-points';
import { fromStored, storedAmount, toJsonAmount } from '../../lib/money';
import { usageEvent } from '../../lib/events';
import type { ImageArtifact } from '../../providers/port';
import type { ActorContext, ActorInstance } from '../runtime/port';
import { LifecycleRecord } from '../runtime/lifecycle';
import {
  IMAGE_TASK_ACTOR_TYPE,
  IMAGE_TASK_ARGS,
  IMAGE_TASK_METHODS,
  IMAGE_UNKNOWN_RESOLVED,
  UNKNOWN_IMAGE_PROFILE,
  imageFailureKind,
  imageKeyReused,
  type ImageTaskApi,
  type ImageTaskPhase,
  type ImageTaskView,
  type Outcome,
  type Owner,
  type StartOutcome,
  type StartRequest,
} from './ImageTaskInterface';
import { sameOwner, taskView, type TaskRecord } from './task-record';
import { IMAGE_TASK_LIFECYCLE, type ImageTaskMove } from './transitions';

const TASK_KEY = 'task';
/** The one artifact of the task (the outcome's, or the late one after UNKNOWN). */
const ARTIFACT_KEY = 'artifact';
const DEADLINE_REMINDER = 'deadline';
const FINISH_REMINDER = 'finish';
const FINISH_RETRY_MS = 2000;
/** Evidence is kept small: the first observations tell what happened, the last what is now. */
const MAX_OBSERVATIONS = 50;

export class ImageTask implements ImageTaskApi, ActorInstance {
  static readonly actorType = IMAGE_TASK_ACTOR_TYPE;
  static readonly methods = IMAGE_TASK_METHODS;
  static readonly args = IMAGE_TASK_ARGS;

  private readonly funds: FundsHoldClient;
  private readonly stored: LifecycleRecord<TaskRecord, ImageTaskPhase, ImageTaskMove>;

  constructor(private readonly ctx: ActorContext) {
    this.funds = new FundsHoldClient(ctx.actors);
    this.stored = new LifecycleRecord(ctx.state, TASK_KEY, 'no such image task', IMAGE_TASK_LIFECYCLE, { of: (task) => task.phase, set: (task, to) => { task.phase = to; } });
  }

  async start(request: StartRequest): Promise<StartOutcome> {
    const existing = await this.stored.load();
    if (existing) {
      if (existing.fingerprint !== request.fingerprint || !sameOwner(existing.owner, request.owner)) {
        throw imageKeyReused();
      }
      // The same start again (daprd retrying a start whose first attempt ran, its answer lost):
      // still the owner, or nobody would call the provider. Any other start is a retry, even one
      // with the same request id (a client's X-Request-Id): it must not call the provider again.
      const repeated = existing.startId === request.startId && existing.phase === 'running';
      return { role: repeated ? 'owner' : 'existing', task: await this.view_(existing) };
    }
    // Their bounds (deadlineMs at most UNKNOWN_IMAGE_V1's 24 hours) were checked by the host (IMAGE_TASK_ARGS).
    const { price, deadlineMs, holdTtlMs } = request;
    if (holdTtlMs <= deadlineMs) throw new GatewayError('invalid_request', 'holdTtlMs must outlast deadlineMs', { param: 'holdTtlMs' });
    // The task exists only once its hold does: a refused reservation leaves nothing behind.
    const holdId = await this.takeHold(request, price, holdTtlMs);
    faultPoint('image-after-hold');
    const now = this.ctx.now();
    const deadlineAt = now + deadlineMs;
    // UNKNOWN_IMAGE_V1: the deadline is frozen here, measured from the original reservation.
    await this.ctx.reminders.register(`${DEADLINE_REMINDER}@${deadlineAt}`, deadlineMs);
    const task = this.stored.create('start', (phase): TaskRecord => ({
      phase,
      owner: { accountId: request.owner.accountId, apiKeyId: request.owner.apiKeyId },
      fingerprint: request.fingerprint,
      requestId: request.requestId,
      startId: request.startId,
      model: request.model,
      profileId: request.profileId,
      price: storedAmount(price),
      holdId,
      reservedAt: now,
      deadlineAt,
      call: { ...request.call, sentAt: now },
      seen: [],
      charged: '0',
    }));
    return { role: 'owner', task: await this.view_(task) };
  }

  /**
   * The image's hold: `img:<taskId>`, or, when that hold has already ended (a start that died
   * after taking it and before its task was committed, its hold since expired: nothing was
   * charged on it), a hold of this start request's own. A start that died leaves its hold open
   * for a retry to take over, so the price is never held twice; a repeat of the same start
   * (daprd's retry) names the same holds, so it is idempotent.
   */
  private async takeHold(request: StartRequest, price: number, ttlMs: number): Promise<string> {
    const funds = this.fundsOf(request.owner);
    const reserve = (holdId: string) => funds.reserve({ holdId, amount: price, ttlMs, requestId: request.requestId, model: request.model, profileId: request.profileId, ...(request.spend ? { spend: request.spend } : {}), ...(request.spendKeyId !== undefined ? { spendKeyId: request.spendKeyId } : {}) });
    const first = `img:${this.ctx.actorId}`;
    try {
      await reserve(first);
      return first;
    } catch (error) {
      if (!(error instanceof GatewayError) || error.code !== 'hold_state_conflict') throw error;
    }
    const own = `${first}:${request.startId}`;
    await reserve(own);
    return own;
  }

  async record(outcome: Outcome): Promise<ImageTaskView> {
    const task = await this.stored.required();
    const now = this.ctx.now();
    // Past the deadline the task is UNKNOWN whether or not its reminder has fired yet: an
    // artifact arriving now is a late artifact (zero charge), never a charge.
    if (task.phase === 'running' && now >= task.deadlineAt) await this.resolveUnknown(task);
    if (outcome.kind === 'unresolved') {
      if (task.phase === 'running' || task.phase === 'unknown') this.observe(task, outcome.what, now);
      this.stored.save(task);
    } else if (task.phase === 'running') {
      await this.stored.move(task, 'outcome', async () => {
        if (outcome.kind === 'succeeded') this.ctx.state.set(ARTIFACT_KEY, outcome.artifact);
        task.outcome = outcome.kind === 'succeeded' ? { kind: 'succeeded' } : { kind: 'failed', reason: outcome.reason, via: outcome.via };
        this.observe(task, outcome.kind === 'succeeded' ? `artifact received (${outcome.via})` : `provider rejection confirmed (${outcome.via}): ${outcome.reason}`, now);
        // Should the caller not come back to finish, the reminder does.
        await this.ctx.reminders.register(`${FINISH_REMINDER}@${now + FINISH_RETRY_MS}`, FINISH_RETRY_MS);
      });
    } else if (task.phase === 'unknown') {
      if (outcome.kind === 'succeeded' && !task.late) {
        await this.lateArtifact(task, outcome.artifact, now);
      } else {
        this.observe(task, outcome.kind === 'succeeded' ? 'another late artifact (ignored)' : `after UNKNOWN: ${outcome.reason}`, now);
        this.stored.save(task);
      }
    }
    // settling, succeeded, failed: the first outcome stands; a repeat changes nothing.
    return this.view_(task);
  }

  async finish(): Promise<ImageTaskView> {
    return this.view_(await this.finishTask());
  }

  async expire(): Promise<ImageTaskView> {
    return this.view_(await this.expireTask());
  }

  /** finish without the view: a reminder has no use for the artifact the view would read. */
  private async finishTask(): Promise<TaskRecord> {
    const task = await this.stored.required();
    if (task.phase !== 'settling' || !task.outcome) return task;
    const funds = this.fundsOf(task.owner);
    // The deadline no longer matters; were the unregistering lost, the reminder finds a final phase.
    const unregister = () => this.ctx.reminders.unregister(`${DEADLINE_REMINDER}@${task.deadlineAt}`).catch(() => undefined);
    const outcome = task.outcome;
    const failed = outcome.kind === 'failed';
    await this.stored.move(task, failed ? 'release' : 'settle', async () => {
      // The bill's reason says what the task's answer says (services/gateway/images/answer.ts).
      if (failed) await funds.release({ holdId: task.holdId, reason: imageFailureKind(outcome.reason, outcome.via) === 'rejected' ? 'provider_rejected' : 'provider_failed' });
      else task.charged = storedAmount((await this.settleOrBear(task, funds)).charged);
      await unregister();
    });
    return task;
  }

  private async expireTask(): Promise<TaskRecord> {
    const task = await this.stored.required();
    if (this.ctx.now() < task.deadlineAt) return task;
    if (task.phase === 'settling') return this.finishTask();
    if (task.phase !== 'running') return task;
    await this.resolveUnknown(task);
    return task;
  }

  /**
   * image_unknown_resolved: release the hold (its acknowledgment comes back from FundsHold),
   * keep the evidence, invent no usage, never call the provider again.
   */
  private async resolveUnknown(task: TaskRecord): Promise<void> {
    await this.stored.move(task, 'deadline', async () => {
      await this.fundsOf(task.owner).release({ holdId: task.holdId, reason: IMAGE_UNKNOWN_RESOLVED });
      task.unknown = this.unknownEvidence(task);
    });
  }

  private unknownEvidence(task: TaskRecord): NonNullable<TaskRecord['unknown']> {
    const now = this.ctx.now();
    return {
      profile: UNKNOWN_IMAGE_PROFILE,
      resolution: IMAGE_UNKNOWN_RESOLVED,
      resolvedAt: now,
      reservedAt: task.reservedAt,
      deadlineAt: task.deadlineAt,
      sent: task.call,
      seen: [...task.seen],
    };
  }

  async releaseLate(request: { eventIds: string[] }): Promise<ImageTaskView> {
    const task = await this.stored.required();
    const late = task.late;
    if (!late || late.state !== 'awaiting_ledger') return this.view_(task);
    const acknowledged = new Set(request.eventIds);
    if (!late.eventIds.every((id) => acknowledged.has(id))) {
      throw new GatewayError('invalid_request', 'the late artifact is released only once the ledger holds all of its events', { param: 'eventIds' });
    }
    await this.stored.move(task, 'late_released', () => {
      late.state = 'released';
    });
    return this.view_(task);
  }

  async view(owner: Owner): Promise<ImageTaskView> {
    const task = await this.stored.load();
    // Another owner, or another key of the same owner, learns nothing: not even that it exists.
    if (!task || !sameOwner(task.owner, owner)) throw new GatewayError('not_found', 'no such image task');
    return this.view_(task);
  }

  async onReminder(name: string): Promise<void> {
    // A reminder whose task was never committed (its turn failed after registering) has nothing to do.
    const task = await this.stored.load();
    if (!task) return;
    if (name.startsWith(DEADLINE_REMINDER)) {
      const early = task.deadlineAt - this.ctx.now();
      // A reminder delivered ahead of the frozen deadline is set again for the rest of it.
      if (early > 0) await this.ctx.reminders.register(`${DEADLINE_REMINDER}@${task.deadlineAt}`, early);
      else await this.expireTask();
    } else if (name.startsWith(FINISH_REMINDER)) {
      await this.finishTask();
    }
  }

  /**
   * Settles the hold for the one image; if the hold already ended otherwise, the platform bears it:
   * an expired hold's settle records that itself (FundsHold, `<holdId>:platform-borne`, charged 0);
   * a released one is refused, and the platform-borne usage is recorded here.
   */
  private async settleOrBear(task: TaskRecord, funds: FundsHoldApi): Promise<HoldOutcome | { charged: number }> {
    const lines = [{ unit: 'IMAGE' as const, quantity: 1, unitPrice: toJsonAmount(fromStored(task.price)) }];
    try {
      return await funds.settle({ holdId: task.holdId, lines });
    } catch (error) {
      if (!(error instanceof GatewayError) || error.code !== 'hold_state_conflict') throw error;
      // The hold was released before the artifact could be settled: record the real usage, charge nothing.
      this.emitPlatformBorne(task, 'settle-after-expiry', this.ctx.now());
      return { charged: 0 };
    }
  }

  /** A genuine artifact after UNKNOWN: a real IMAGE quantity-1 event, zero charge, platform-borne. */
  private async lateArtifact(task: TaskRecord, artifact: ImageArtifact, now: number): Promise<void> {
    await this.stored.move(task, 'late_artifact', () => {
      const eventIds = this.emitPlatformBorne(task, 'late-artifact', now);
      this.ctx.state.set(ARTIFACT_KEY, artifact);
      task.late = { state: 'awaiting_ledger', arrivedAt: now, eventIds };
      this.observe(task, 'late artifact arrived', now);
    });
  }

  private emitPlatformBorne(task: TaskRecord, reason: string, now: number): string[] {
    const price = toJsonAmount(fromStored(task.price));
    const common = { accountId: task.owner.accountId, pool: DEFAULT_POOL, holdId: task.holdId, requestId: task.requestId, model: task.model, profileId: task.profileId };
    // One event: the usage with its platform-borne bill, which the ledger appends together.
    const bill = { id: `${this.ctx.actorId}:${reason}:platform-borne`, kind: 'platform_borne' as const, balanceDelta: 0, amount: price, reference: reason };
    const usage = usageEvent(`${this.ctx.actorId}:${reason}:usage`, now, {
      ...common,
      lines: [{ unit: 'IMAGE', quantity: 1, unitPrice: price, cost: price }],
      charged: 0,
      bill,
    }, IMAGE_TASK_ACTOR_TYPE);
    this.ctx.emit(usage);
    return [usage.id, bill.id];
  }

  /** Keeps an observation as evidence: data, not a change of phase. */
  private observe(task: TaskRecord, what: string, at: number): void {
    task.seen.push({ at, what });
    // Keep the first observations and the latest ones.
    if (task.seen.length > MAX_OBSERVATIONS) task.seen.splice(MAX_OBSERVATIONS / 2, 1);
  }

  private fundsOf(owner: Owner): FundsHoldApi {
    return this.funds.of(owner.accountId, DEFAULT_POOL);
  }

  private view_(task: TaskRecord): Promise<ImageTaskView> {
    return taskView(this.ctx.actorId, task, () => this.ctx.state.getUncached<ImageArtifact>(ARTIFACT_KEY));
  }
}
