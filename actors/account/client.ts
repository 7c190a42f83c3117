// Typed client of the Account actor over any ActorInvoker (embedded or Dapr).

import { actorProxy } from '../runtime/proxy';
import type { ActorInvoker } from '../runtime/port';
import { ACCOUNT_ACTOR_TYPE, ACCOUNT_METHODS, type AccountApi } from './AccountInterface';

export class AccountClient {
  constructor(private readonly actors: ActorInvoker) {}

  of(accountId: string): AccountApi {
    return actorProxy<AccountApi>(this.actors, ACCOUNT_ACTOR_TYPE, accountId, ACCOUNT_METHODS);
  }
}
