// The public API of the Session actor: one actor per prototype session (docs/sessions.md), the
// session id is the actor id. It owns the session's owner, its ordered and bounded event log,
// and its one active run: the run's hold on the owner's FundsHold (reserved, settled or released
// by this actor) and the lease that fails the run when the process carrying it vanishes.
// Callers depend on this file only; the actor type name "Session" is frozen.

import { z } from 'zod';
import type { SpendScopes, UsageLine } from '../funds-hold/FundsHoldInterface';
import { routeRecordSchema, type RouteRecord } from '../../lib/route-record';

export const SESSION_ACTOR_TYPE = 'Session';

/** What a reader sees, in order: a run starts, streams deltas, reports its usage, ends once. */
export const SESSION_EVENT_KINDS = ['run.started', 'run.delta', 'run.usage', 'run.completed', 'run.failed'] as const;
export type SessionEventKind = (typeof SESSION_EVENT_KINDS)[number];

export interface SessionEvent {
  /** Strictly increasing within the session, from 1; never reused. */
  id: number;
  kind: SessionEventKind;
  /** ISO 8601, when the actor appended it. */
  at: string;
  data: Record<string, unknown> & { run_id: string };
}

/** The account owns the session; the creating key is recorded, not required (docs/sessions.md). */
export interface SessionOwner {
  accountId: string;
  apiKeyId: string;
}

export interface CreateSessionRequest {
  owner: SessionOwner;
  workspace: string;
}

export interface SessionView {
  sessionId: string;
  workspace: string;
  createdAt: number;
  lastEventId: number;
  /** The run in progress, if any: at most one per session. */
  activeRunId: string | null;
}

export interface StartRunRequest {
  owner: SessionOwner;
  runId: string;
  requestId: string;
  model: string;
  profileId: string;
  maxTokens: number;
  /** Capabilities granted to the run (their gates passed at the gateway). */
  capabilities: string[];
  /** The run's hold on the owner's pool-3 FundsHold: the chat route's estimate and TTL. */
  hold: { amount: number; ttlMs: number };
  /** The spend limits the hold is checked against, as a chat's (FundsHold.reserve): a run spends under them too. */
  spend?: SpendScopes;
  /** The key whose spend the run's charge counts towards (a rotated key's first id), as a chat's. */
  spendKeyId?: string;
  /** How long the run lives without a word from the process carrying it. */
  leaseMs: number;
}

export interface RunStarted {
  runId: string;
  holdId: string;
  /** The id of the run.started event. */
  startedEventId: number;
}

/** Output produced since the last append (empty: a heartbeat that only pushes the lease out). */
export interface AppendRequest {
  runId: string;
  delta: string;
  /** The batch's number in its run (1, 2, …): a batch already taken is not appended again. */
  seq?: number;
}

export interface RunFailure {
  code: string;
  message: string;
}

export interface FinishRunRequest {
  runId: string;
  /** What was produced: settled on the hold. Absent when nothing was produced: the hold is released. */
  usage?: { inputTokens: number; outputTokens: number; lines: UsageLine[]; route?: RouteRecord };
  /** Present when the run did not complete. */
  failure?: RunFailure;
  finishReason?: string;
}

export interface RunOutcome {
  runId: string;
  status: 'completed' | 'failed';
  charged: number;
  lastEventId: number;
}

export interface ReadRequest {
  owner: SessionOwner;
  /** Events with an id above this one. */
  after: number;
  limit: number;
}

export interface ReadResult {
  events: SessionEvent[];
  lastEventId: number;
  /** The oldest id still stored: ids below it were evicted (the log is bounded). */
  firstRetainedId: number;
  /** True when events after `after` were evicted before this read. */
  gap: boolean;
}

export interface SessionApi {
  /** Creates the session and lists it in the owner's workspace index (one turn); a repeat returns it. */
  create(request: CreateSessionRequest): Promise<SessionView>;
  /** Starts a run: the owner only, one at a time; reserves its hold and arms its lease. */
  startRun(request: StartRunRequest): Promise<RunStarted>;
  /** Appends output of the active run and pushes its lease out; run_not_active once it has ended. */
  append(request: AppendRequest): Promise<{ lastEventId: number }>;
  /** Settles (or releases) the run's hold and appends its usage and its end. */
  finishRun(request: FinishRunRequest): Promise<RunOutcome>;
  /** Events after an id, for the owner only: anyone else gets not_found. */
  readEvents(request: ReadRequest): Promise<ReadResult>;
}

// Method names must not collide with the Dapr adapter's own (read, commit, run, …: actors/runtime/dapr-host.ts).
export const SESSION_METHODS = ['create', 'startRun', 'append', 'finishRun', 'readEvents'] as const satisfies readonly (keyof SessionApi)[];

/** Each method's argument, checked by the host before the actor sees it (actors/runtime/args.ts). */
const sessionOwnerArg = z.looseObject({ accountId: z.string().min(1), apiKeyId: z.string() });
export const SESSION_ARGS = {
  create: z.looseObject({ owner: sessionOwnerArg, workspace: z.string() }),
  startRun: z.looseObject({
    owner: sessionOwnerArg, runId: z.string().min(1), requestId: z.string(), model: z.string(), profileId: z.string(), maxTokens: z.number().int().min(0),
    capabilities: z.array(z.string()), hold: z.looseObject({ amount: z.number(), ttlMs: z.number() }), leaseMs: z.number(),
  }),
  append: z.looseObject({ runId: z.string().min(1), delta: z.string(), seq: z.number().int().optional() }),
  finishRun: z.looseObject({ runId: z.string().min(1), usage: z.looseObject({ inputTokens: z.number(), outputTokens: z.number(), lines: z.array(z.unknown()), route: routeRecordSchema.optional() }).optional(), finishReason: z.string().optional() }),
  readEvents: z.looseObject({ owner: sessionOwnerArg, after: z.number(), limit: z.number() }),
} satisfies Record<(typeof SESSION_METHODS)[number], z.ZodType>;
