// Session actor: one prototype session (see SessionInterface.ts and transitions.ts). Its turns
// serialize everything about the session: the event log's ids, the one active run, the run's
// money. The run's hold lives on the owner's pool-3 FundsHold (hold id `run:<runId>`): reserved
// when the run starts, settled for what was produced or released when it ends, released by the
// lease reminder when the process carrying the run stops reporting. FundsHold calls are
// idempotent by hold id, so a turn that fails after one of them can simply be run again; a start
// that fails after its reservation releases that hold itself (the gateway's retry is a new run).

import { FundsHoldClient } from '../funds-hold/client';
import { DEFAULT_POOL, type FundsHoldApi, type UsageLine } from '../funds-hold/FundsHoldInterface';
import { GatewayError } from '../../lib/errors';
import type { ActorContext, ActorInstance } from '../runtime/port';
import { LifecycleRecord, type StateField } from '../runtime/lifecycle';
import { fromStored, storedAmount, toJsonAmount, type StoredAmount } from '../../lib/money';
import { WorkspaceIndexClient } from '../workspace-index/client';
import { EventLog, MAX_READ, emptyCursor, type LogCursor } from './event-log';
import {
  SESSION_ACTOR_TYPE,
  SESSION_ARGS,
  SESSION_METHODS,
  type AppendRequest,
  type CreateSessionRequest,
  type FinishRunRequest,
  type ReadRequest,
  type ReadResult,
  type RunOutcome,
  type RunStarted,
  type SessionApi,
  type SessionEvent,
  type SessionOwner,
  type SessionView,
  type StartRunRequest,
} from './SessionInterface';
import { RUN_LIFECYCLE, type RunMove, type RunPhase } from './transitions';

const SESSION_KEY = 'session';
/** Lease reminders are named `lease@<runId>@<due>…`: each registration unique (Dapr Scheduler). */
const LEASE_REMINDER = 'lease';
const MIN_LEASE_MS = 1000;
const MAX_LEASE_MS = 3_600_000;
/** One append's output: the gateway flushes far smaller batches. */
const MAX_DELTA_CHARS = 64 * 1024;

interface ActiveRun {
  runId: string;
  phase: RunPhase;
  holdId: string;
  leaseMs: number;
  leaseUntil: number;
  /** The pending lease reminder's name. */
  reminder: string;
  /** The id of its run.started event (answered again to a repeated start). */
  startedEventId?: number;
  /** The last append batch taken: a repeated batch (a retry whose first attempt ran) is not appended twice. */
  lastSeq?: number;
}

interface SessionRecord {
  owner: SessionOwner;
  workspace: string;
  createdAt: number;
  log: LogCursor;
  run: ActiveRun | null;
  /** The last run that ended: a repeated finishRun of it answers the same outcome. */
  lastRun: { runId: string; status: RunOutcome['status']; charged: StoredAmount } | null;
}

function intIn(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new GatewayError('invalid_request', `${field} must be an integer from ${min} to ${max}`, { param: field });
  }
  return value;
}

type LogEntry = { kind: SessionEvent['kind']; data: SessionEvent['data'] };

/**
 * A session's state is its run's phase: `new` while no run is active. A run that ends leaves the
 * session (its outcome kept in `lastRun`), so the next run starts from `new` again.
 */
const RUN_PHASE: StateField<SessionRecord, RunPhase> = {
  of: (session) => session.run?.phase ?? 'new',
  set: (session, to) => {
    if (session.run) session.run.phase = to;
  },
};

/** Records written before amounts were stored as strings hold the last run's charge as a number. */
function upgradeSession(session: SessionRecord): SessionRecord {
  const last = session.lastRun;
  return last && typeof last.charged === 'number' ? { ...session, lastRun: { ...last, charged: storedAmount(last.charged) } } : session;
}

/** The outcome a run's final phase is (the table leads complete, fail and expire only to these). */
function ended(phase: RunPhase): RunOutcome['status'] {
  if (phase === 'running') throw new Error('a run that has ended cannot be running');
  return phase;
}

/** A run.usage's counts from usage lines: every prompt unit (cache reads and writes included) is input, TEXT_OUTPUT is output. */
function tokensOf(lines: readonly UsageLine[]): { input_tokens: number; output_tokens: number } {
  let input = 0;
  let output = 0;
  for (const line of lines) {
    if (line.unit === 'TEXT_OUTPUT') output += line.quantity;
    else if (line.unit.startsWith('TEXT_INPUT')) input += line.quantity;
  }
  return { input_tokens: input, output_tokens: output };
}

const leaseReminderPrefix = (runId: string) => `${LEASE_REMINDER}@${runId}@`;

export class Session implements SessionApi, ActorInstance {
  static readonly actorType = SESSION_ACTOR_TYPE;
  static readonly methods = SESSION_METHODS;
  static readonly args = SESSION_ARGS;

  private readonly stored: LifecycleRecord<SessionRecord, RunPhase, RunMove>;
  private readonly log: EventLog;

  constructor(private readonly ctx: ActorContext) {
    this.stored = new LifecycleRecord(ctx.state, SESSION_KEY, 'no such session', RUN_LIFECYCLE, RUN_PHASE, upgradeSession);
    this.log = new EventLog(ctx.state, ctx.now);
  }

  async create(request: CreateSessionRequest): Promise<SessionView> {
    const existing = await this.stored.load();
    if (existing) {
      if (existing.owner.accountId !== request.owner.accountId) throw new GatewayError('invalid_request', 'this session id is taken');
      return this.view_(existing);
    }
    if (typeof request.workspace !== 'string' || request.workspace === '') throw new GatewayError('invalid_request', 'workspace is required', { param: 'workspace' });
    const owner = { accountId: request.owner.accountId, apiKeyId: request.owner.apiKeyId };
    const createdAt = this.ctx.now();
    // Listed before it exists: a refused listing (the account's bound) leaves no session behind.
    await new WorkspaceIndexClient(this.ctx.actors).of(owner.accountId).add({ workspace: request.workspace, sessionId: this.ctx.actorId, createdAt });
    const session: SessionRecord = { owner, workspace: request.workspace, createdAt, log: emptyCursor(), run: null, lastRun: null };
    this.stored.save(session);
    return this.view_(session);
  }

  async startRun(request: StartRunRequest): Promise<RunStarted> {
    const session = await this.owned(request.owner);
    // The same start again (a retry whose first attempt ran): its outcome, not a second run.
    if (session.run?.runId === request.runId && session.run.startedEventId !== undefined) {
      return { runId: request.runId, holdId: session.run.holdId, startedEventId: session.run.startedEventId };
    }
    if (session.run) {
      throw new GatewayError('run_in_progress', 'a run of this session is in progress; start the next one when it has ended', { extra: { run_id: session.run.runId } });
    }
    const leaseMs = intIn(request.leaseMs, 'leaseMs', MIN_LEASE_MS, MAX_LEASE_MS);
    const holdId = `run:${request.runId}`;
    const funds = this.funds(session);
    // The run exists only once its hold does: a refused reservation (402) leaves nothing behind.
    try {
      await funds.reserve({
        holdId, amount: request.hold.amount, ttlMs: request.hold.ttlMs, requestId: request.requestId, model: request.model, profileId: request.profileId,
        // Under the caller's spend limits, and counted towards its key's spend, exactly as a chat.
        ...(request.spend ? { spend: request.spend } : {}),
        ...(request.spendKeyId !== undefined ? { spendKeyId: request.spendKeyId } : {}),
      });
    } catch (error) {
      // A refusal holds nothing; an answer lost on the way may have left the hold open.
      if (!(error instanceof GatewayError) || error.status >= 500) await this.abandon(funds, holdId);
      throw error;
    }
    try {
      const now = this.ctx.now();
      const reminder = `${leaseReminderPrefix(request.runId)}${now + leaseMs}`;
      await this.ctx.reminders.register(reminder, leaseMs);
      let startedEventId = 0;
      await this.stored.move(session, 'start', async (_, phase) => {
        const [started] = await this.log.append(session.log, [{
          kind: 'run.started',
          data: { run_id: request.runId, model: request.model, max_tokens: request.maxTokens, held: request.hold.amount, capabilities: request.capabilities },
        }]);
        startedEventId = started.id;
        session.run = { runId: request.runId, phase, holdId, leaseMs, leaseUntil: now + leaseMs, reminder, startedEventId };
      });
      return { runId: request.runId, holdId, startedEventId };
    } catch (error) {
      // This turn fails, so the run will not exist: nor may its hold, which would otherwise lock
      // the funds (and count against the spend limits) until it expired, as nobody starts this run again.
      await this.abandon(funds, holdId);
      throw error;
    }
  }

  /** Releases the hold of a run that was not started (best effort: the hold's expiry is the backstop). */
  private async abandon(funds: FundsHoldApi, holdId: string): Promise<void> {
    await funds.release({ holdId, reason: 'run_not_started' }).catch(() => undefined);
  }

  async append(request: AppendRequest): Promise<{ lastEventId: number }> {
    const session = await this.stored.required();
    const run = this.active(session, request.runId);
    if (typeof request.delta !== 'string' || request.delta.length > MAX_DELTA_CHARS) {
      throw new GatewayError('invalid_request', `delta must be a string of at most ${MAX_DELTA_CHARS} characters`, { param: 'delta' });
    }
    if (request.seq !== undefined) {
      if (!Number.isSafeInteger(request.seq) || request.seq < 1) throw new GatewayError('invalid_request', 'seq must be a positive integer', { param: 'seq' });
      if (request.seq <= (run.lastSeq ?? 0)) return { lastEventId: session.log.lastEventId };
      run.lastSeq = request.seq;
    }
    await this.stored.move(session, 'output', async () => {
      run.leaseUntil = this.ctx.now() + run.leaseMs;
      if (request.delta !== '') await this.log.append(session.log, [{ kind: 'run.delta', data: { run_id: run.runId, delta: request.delta } }]);
    });
    return { lastEventId: session.log.lastEventId };
  }

  async finishRun(request: FinishRunRequest): Promise<RunOutcome> {
    const session = await this.stored.required();
    const last = session.lastRun;
    if (last?.runId === request.runId) return { ...last, charged: toJsonAmount(fromStored(last.charged)), lastEventId: session.log.lastEventId };
    const run = this.active(session, request.runId);
    const funds = this.funds(session);
    let charged = 0;
    const status = await this.stored.move(session, request.failure ? 'fail' : 'complete', async (_, to) => {
      const entries: LogEntry[] = [];
      if (request.usage) {
        const { lines, route } = request.usage;
        charged = (await funds.settle({ holdId: run.holdId, lines, ...(route ? { route } : {}) })).charged;
        entries.push({ kind: 'run.usage', data: { run_id: run.runId, input_tokens: request.usage.inputTokens, output_tokens: request.usage.outputTokens, charged } });
      } else {
        await funds.release({ holdId: run.holdId, reason: request.failure ? 'run_failed' : 'nothing_produced' });
      }
      entries.push(request.failure
        ? { kind: 'run.failed', data: { run_id: run.runId, code: request.failure.code, message: request.failure.message, charged } }
        : { kind: 'run.completed', data: { run_id: run.runId, finish_reason: request.finishReason ?? null, charged } });
      await this.end(session, entries, ended(to), charged);
    });
    return { runId: run.runId, status: ended(status), charged, lastEventId: session.log.lastEventId };
  }

  async readEvents(request: ReadRequest): Promise<ReadResult> {
    const session = await this.owned(request.owner);
    const after = intIn(request.after, 'Last-Event-ID', 0, Number.MAX_SAFE_INTEGER);
    const limit = intIn(request.limit, 'limit', 1, MAX_READ);
    const { lastEventId, firstRetainedId } = session.log;
    // Ids are never reused: one above the last was never given out by this session.
    if (after > lastEventId) throw new GatewayError('invalid_request', `Last-Event-ID ${after} is beyond this session's last event (${lastEventId})`, { param: 'Last-Event-ID' });
    return { events: await this.log.read(session.log, after, limit), lastEventId, firstRetainedId, gap: after + 1 < firstRetainedId };
  }

  async onReminder(name: string): Promise<void> {
    if (!name.startsWith(`${LEASE_REMINDER}@`)) return;
    // A reminder whose run has ended (or whose turn never committed) has nothing to do.
    const session = await this.stored.load();
    const run = session?.run;
    if (!session || !run || !name.startsWith(leaseReminderPrefix(run.runId))) return;
    const now = this.ctx.now();
    if (run.leaseUntil > now) {
      // Pushed out by appends since it was armed: armed again for the rest.
      run.reminder = `${leaseReminderPrefix(run.runId)}${run.leaseUntil}`;
      await this.ctx.reminders.register(run.reminder, run.leaseUntil - now);
      this.stored.save(session);
      return;
    }
    await this.stored.move(session, 'expire', (_, to) => this.expireRun(session, run, ended(to)));
  }

  /**
   * A run whose lease ran out ends as its hold's expiry would: what was recorded as delivered is
   * charged. When the hold was charged for a progress record, `run.usage` (that record's counts
   * and the charge) comes before `run.failed`, as on every run that produced something.
   */
  private async expireRun(session: SessionRecord, run: ActiveRun, status: RunOutcome['status']): Promise<void> {
    const funds = this.funds(session);
    let charged = 0;
    let recorded: UsageLine[] = [];
    let settledEarlier = false;
    try {
      // As its expiry would: what the gateway recorded as delivered (progress) is charged.
      const outcome = await funds.release({ holdId: run.holdId, reason: 'run_lease_expired', asExpiry: true });
      charged = outcome.charged;
      recorded = outcome.chargedFor ?? [];
    } catch (error) {
      if (!(error instanceof GatewayError) || error.code !== 'hold_state_conflict') throw error;
      // The hold ended another way: settled by a finishRun whose own record here never committed,
      // or expired. What it charged stands (a repeated settle answers the first outcome). The
      // settled usage's counts are not known here (FundsHold keeps no lines of a settle): no run.usage.
      charged = await funds.settle({ holdId: run.holdId, lines: [] }).then((outcome) => outcome.charged, () => 0);
      settledEarlier = true;
    }
    const entries: LogEntry[] = [];
    if (recorded.length > 0) entries.push({ kind: 'run.usage', data: { run_id: run.runId, ...tokensOf(recorded), charged } });
    entries.push({
      kind: 'run.failed',
      data: {
        run_id: run.runId,
        code: 'run_lease_expired',
        message: charged > 0
          ? settledEarlier
            ? 'the process carrying the run stopped reporting after its usage was settled'
            : 'the process carrying the run stopped reporting; the output it had recorded as delivered was charged'
          : 'the process carrying the run stopped reporting; its hold was released and nothing was charged',
        charged,
      },
    });
    await this.end(session, entries, status, charged);
  }

  /** The run's last entries appended; the session keeps its outcome (a run's final phase lives there). */
  private async end(session: SessionRecord, entries: LogEntry[], status: RunOutcome['status'], charged: number): Promise<void> {
    const run = session.run as ActiveRun;
    await this.log.append(session.log, entries);
    // Were the unregistering lost, the reminder finds the run ended and does nothing.
    await this.ctx.reminders.unregister(run.reminder).catch(() => undefined);
    session.run = null;
    session.lastRun = { runId: run.runId, status, charged: storedAmount(charged) };
  }

  /** The session for its owner account only: anyone else learns nothing, not even that it exists. */
  private async owned(owner: SessionOwner): Promise<SessionRecord> {
    const session = await this.stored.load();
    if (!session || session.owner.accountId !== owner?.accountId) throw new GatewayError('not_found', 'no such session');
    return session;
  }

  private active(session: SessionRecord, runId: string): ActiveRun {
    if (!session.run || session.run.runId !== runId) throw new GatewayError('run_not_active', `run ${runId} is not the active run of this session`);
    return session.run;
  }

  private funds(session: SessionRecord): FundsHoldApi {
    return new FundsHoldClient(this.ctx.actors).of(session.owner.accountId, DEFAULT_POOL);
  }

  private view_(session: SessionRecord): SessionView {
    return { sessionId: this.ctx.actorId, workspace: session.workspace, createdAt: session.createdAt, lastEventId: session.log.lastEventId, activeRunId: session.run?.runId ?? null };
  }
}
