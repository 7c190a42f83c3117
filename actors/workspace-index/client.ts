// Typed client of the WorkspaceIndex actor over any ActorInvoker (embedded or Dapr).

import { actorProxy } from '../runtime/proxy';
import type { ActorInvoker } from '../runtime/port';
import { WORKSPACE_INDEX_ACTOR_TYPE, WORKSPACE_INDEX_METHODS, type WorkspaceIndexApi } from './WorkspaceIndexInterface';

export class WorkspaceIndexClient {
  constructor(private readonly actors: ActorInvoker) {}

  of(accountId: string): WorkspaceIndexApi {
    return actorProxy<WorkspaceIndexApi>(this.actors, WORKSPACE_INDEX_ACTOR_TYPE, accountId, WORKSPACE_INDEX_METHODS);
  }
}
