// Typed client of the Session actor over any ActorInvoker (embedded or Dapr).

import { actorProxy } from '../runtime/proxy';
import type { ActorInvoker } from '../runtime/port';
import { SESSION_ACTOR_TYPE, SESSION_METHODS, type SessionApi } from './SessionInterface';

export class SessionClient {
  constructor(private readonly actors: ActorInvoker) {}

  of(sessionId: string): SessionApi {
    return actorProxy<SessionApi>(this.actors, SESSION_ACTOR_TYPE, sessionId, SESSION_METHODS);
  }
}
