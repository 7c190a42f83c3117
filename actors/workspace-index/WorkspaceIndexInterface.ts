// The public API of the WorkspaceIndex actor: one per account (the account id is the actor id),
// the durable list of the account's prototype workspaces and the sessions in each. Turn-based,
// so sessions created at once through several gateways are all listed (no lost update).
// Callers depend on this file only; the actor type name "WorkspaceIndex" is frozen.

import { z } from 'zod';

export const WORKSPACE_INDEX_ACTOR_TYPE = 'WorkspaceIndex';
/** Bounds of one account's index: creating past them is refused with 409 session_limit_reached. */
export const MAX_WORKSPACES = 100;
export const MAX_SESSIONS_PER_WORKSPACE = 1000;

export interface AddSessionRequest {
  workspace: string;
  sessionId: string;
  createdAt: number;
}

export interface WorkspaceView {
  name: string;
  createdAt: number;
  /** Newest first. */
  sessions: { sessionId: string; createdAt: number }[];
}

export interface WorkspaceIndexApi {
  /** Lists the session in its workspace (made on first use); a repeat changes nothing. */
  add(request: AddSessionRequest): Promise<{ added: boolean }>;
  /** Every workspace of the account, by name, each with its sessions. */
  list(request: Record<string, never>): Promise<{ workspaces: WorkspaceView[] }>;
}

export const WORKSPACE_INDEX_METHODS = ['add', 'list'] as const satisfies readonly (keyof WorkspaceIndexApi)[];

/** Each method's argument, checked by the host before the actor sees it (actors/runtime/args.ts). */
export const WORKSPACE_INDEX_ARGS = {
  add: z.looseObject({ workspace: z.string().min(1), sessionId: z.string().min(1), createdAt: z.number() }),
  list: z.looseObject({}),
} satisfies Record<(typeof WORKSPACE_INDEX_METHODS)[number], z.ZodType>;
