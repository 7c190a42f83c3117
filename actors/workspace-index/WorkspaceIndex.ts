// WorkspaceIndex actor: the account's workspaces (one small record of names) and, under a key
// per workspace, its sessions, so adding a session rewrites only its own workspace's list.

import { GatewayError } from '../../lib/errors';
import type { ActorContext, ActorInstance } from '../runtime/port';
import { StateRecord, StateRecords } from '../runtime/state-record';
import {
  MAX_SESSIONS_PER_WORKSPACE,
  MAX_WORKSPACES,
  WORKSPACE_INDEX_ACTOR_TYPE,
  WORKSPACE_INDEX_ARGS,
  WORKSPACE_INDEX_METHODS,
  type AddSessionRequest,
  type WorkspaceIndexApi,
  type WorkspaceView,
} from './WorkspaceIndexInterface';

const NAMES_KEY = 'workspaces';
const SESSIONS_KEY_PREFIX = 'sessions:';

type Names = Record<string, { createdAt: number }>;
type Sessions = { sessionId: string; createdAt: number }[];

export class WorkspaceIndex implements WorkspaceIndexApi, ActorInstance {
  static readonly actorType = WORKSPACE_INDEX_ACTOR_TYPE;
  static readonly methods = WORKSPACE_INDEX_METHODS;
  static readonly args = WORKSPACE_INDEX_ARGS;

  private readonly names: StateRecord<Names>;
  private readonly sessions: StateRecords<Sessions>;

  constructor(ctx: ActorContext) {
    this.names = new StateRecord(ctx.state, NAMES_KEY, 'no workspaces');
    this.sessions = new StateRecords(ctx.state, SESSIONS_KEY_PREFIX);
  }

  async add(request: AddSessionRequest): Promise<{ added: boolean }> {
    const names = (await this.names.load()) ?? {};
    const sessions = (await this.sessions.get(request.workspace)) ?? [];
    if (sessions.some((s) => s.sessionId === request.sessionId)) return { added: false };
    // Own names only: a workspace named like an Object.prototype member ("constructor") is a name like any other.
    if (!Object.hasOwn(names, request.workspace)) {
      if (Object.keys(names).length >= MAX_WORKSPACES) throw new GatewayError('session_limit_reached', `an account has at most ${MAX_WORKSPACES} workspaces`, { param: 'workspace' });
      names[request.workspace] = { createdAt: request.createdAt };
      this.names.save(names);
    }
    if (sessions.length >= MAX_SESSIONS_PER_WORKSPACE) {
      throw new GatewayError('session_limit_reached', `a workspace has at most ${MAX_SESSIONS_PER_WORKSPACE} sessions`, { param: 'workspace' });
    }
    sessions.push({ sessionId: request.sessionId, createdAt: request.createdAt });
    this.sessions.set(request.workspace, sessions);
    return { added: true };
  }

  async list(): Promise<{ workspaces: WorkspaceView[] }> {
    const names = (await this.names.load()) ?? {};
    const workspaces: WorkspaceView[] = [];
    for (const name of Object.keys(names).sort()) {
      const sessions = (await this.sessions.get(name)) ?? [];
      workspaces.push({ name, createdAt: names[name].createdAt, sessions: [...sessions].reverse() });
    }
    return { workspaces };
  }

  async onReminder(): Promise<void> {}
}
