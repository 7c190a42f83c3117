// Prototype sessions, as a story (docs/sessions.md). A caller creates a session in one of its
// workspaces; starts runs in it, one at a time, each a real model call checked and estimated
// exactly like the open chat route and held on the same pool-3 FundsHold; and follows the
// session's events. Everything is refused before anything is held; the run proceeds in this
// process once its hold is reserved (./run.ts), and its events reach every reader through the
// Session actor (./event-stream.ts).

import { randomUUID } from 'node:crypto';
import type { SessionClient } from '../../../actors/session/client';
import type { SessionOwner } from '../../../actors/session/SessionInterface';
import type { WorkspaceIndexClient } from '../../../actors/workspace-index/client';
import { GatewayError } from '../../../lib/errors';
import { prepareChat, type ChatInput } from '../chat/prepare';
import { openAiWire } from '../chat/wires';
import { CHAT_TOKEN_COUNTING, tokenBound } from '../chat/use-case';
import { spendOf } from '../limits/admission';
import { countCall } from '../limits/account-share';
import type { StreamAnswer } from '../http/answer';
import { sessionEventStream } from './event-stream';
import { isSessionId, parseSessionBody, resumeAfter, runCapabilities } from './request';
import { carryRun, type RunDeps } from './run';

export interface SessionDeps extends RunDeps {
  sessions: SessionClient;
  workspaces: WorkspaceIndexClient;
  pollMs: number;
}

export interface SessionCreated {
  session_id: string;
  workspace: string;
  created_at: string;
  events_url: string;
}

export interface RunAccepted {
  run_id: string;
  session_id: string;
  status: 'running';
  model: string;
  capabilities: string[];
  /** The id of this run's run.started event: resume after started_event_id − 1 to follow just this run. */
  started_event_id: number;
  events_url: string;
}

const eventsUrl = (sessionId: string) => `/v1/sessions/${sessionId}/events`;
const iso = (ms: number) => new Date(ms).toISOString();

function noSuchSession(): GatewayError {
  return new GatewayError('not_found', 'no such session');
}

export class SessionService {
  constructor(private readonly deps: SessionDeps) {}

  async create(owner: SessionOwner, body: unknown): Promise<SessionCreated> {
    const { workspace } = parseSessionBody(body);
    const sessionId = randomUUID();
    const view = await this.deps.sessions.of(sessionId).create({ owner, workspace });
    return { session_id: sessionId, workspace: view.workspace, created_at: iso(view.createdAt), events_url: eventsUrl(sessionId) };
  }

  async workspaces(accountId: string) {
    const { workspaces } = await this.deps.workspaces.of(accountId).list({});
    return {
      workspaces: workspaces.map((w) => ({
        name: w.name,
        created_at: iso(w.createdAt),
        sessions: w.sessions.map((s) => ({ session_id: s.sessionId, created_at: iso(s.createdAt) })),
      })),
    };
  }

  /**
   * Every check of the chat route, its rate and spend limits too, then the run's hold (in the
   * actor), then the call in the background. The answer's headers are the rate limit's, as a chat's.
   */
  async startRun(sessionId: string, owner: SessionOwner, input: ChatInput): Promise<{ accepted: RunAccepted; headers: Record<string, string> }> {
    if (!isSessionId(sessionId)) throw noSuchSession();
    const capabilities = runCapabilities(input.capabilities);
    const chat = prepareChat(this.deps.chat, openAiWire, input);
    const session = this.deps.sessions.of(sessionId);
    const runId = randomUUID();
    // A run is a model call of the account while it lasts: past its share, refused before anything is counted or held.
    const stopRunning = countCall(this.deps.chat.callsRunning, input.caller.accountId);
    const spend = spendOf(input.caller);
    let admitted;
    let started;
    try {
      // Over a rate: refused here, before anything is held (429), as a chat is.
      admitted = await this.deps.chat.limits?.admit(input.caller, tokenBound(chat), 'openai', CHAT_TOKEN_COUNTING);
      started = await session.startRun({
        owner,
        runId,
        requestId: input.requestId,
        model: chat.resolved.model.id,
        profileId: chat.resolved.profile.profile_id,
        maxTokens: chat.upstream.call.maxTokens,
        capabilities,
        hold: { amount: chat.estimate, ttlMs: this.deps.chat.holdTtlMs },
        ...(spend ? { spend } : {}),
        ...(input.caller.spendKeyId !== undefined ? { spendKeyId: input.caller.spendKeyId } : {}),
        leaseMs: this.deps.leaseMs,
      });
    } catch (error) {
      stopRunning();
      // Refused (429 by a rate, or 402, 409, 503 at the start): nothing held; a start refused
      // after its admission counts against no rate either.
      throw admitted ? await admitted.refused(error) : error;
    }
    this.deps.wakeups.wake(sessionId);
    void carryRun(this.deps, { sessionId, runId, session, chat, accountId: owner.accountId, holdId: started.holdId, ...(admitted ? { admitted } : {}) }).finally(stopRunning);
    return {
      accepted: { run_id: runId, session_id: sessionId, status: 'running', model: chat.resolved.model.id, capabilities, started_event_id: started.startedEventId, events_url: eventsUrl(sessionId) },
      headers: admitted?.headers ?? {},
    };
  }

  /** `lastEventId`: the Last-Event-ID header; `lastEventIdQuery`: the last_event_id query parameter (either resumes). */
  /** `recheckCredential`: throws once the caller's credential would be refused (the stream then ends). */
  async events(sessionId: string, owner: SessionOwner, resume: { lastEventId: string | string[] | undefined; lastEventIdQuery: unknown }, signal: AbortSignal, recheckCredential?: () => Promise<void>): Promise<StreamAnswer> {
    if (!isSessionId(sessionId)) throw noSuchSession();
    const { after, param } = resumeAfter(resume.lastEventId, resume.lastEventIdQuery);
    const { pollMs, wakeups, chat } = this.deps;
    try {
      return await sessionEventStream({ pollMs, wakeups, logger: chat.logger, drain: chat.drain }, { session: this.deps.sessions.of(sessionId), sessionId, owner, after, ...(recheckCredential ? { recheckCredential } : {}) }, signal);
    } catch (error) {
      // The actor names the header; the id may have come in the query.
      if (error instanceof GatewayError && error.param === 'Last-Event-ID' && param !== error.param) {
        throw new GatewayError(error.code, error.message.replace('Last-Event-ID', param), { param });
      }
      throw error;
    }
  }
}
