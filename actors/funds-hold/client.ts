// Typed client of the FundsHold actor over any ActorInvoker (embedded or Dapr).

import { actorProxy } from '../runtime/proxy';
import type { ActorInvoker } from '../runtime/port';
import { FUNDS_HOLD_ACTOR_TYPE, FUNDS_HOLD_METHODS, fundsHoldActorId, type FundsHoldApi } from './FundsHoldInterface';

export class FundsHoldClient {
  constructor(private readonly actors: ActorInvoker) {}

  of(accountId: string, pool?: string): FundsHoldApi {
    return actorProxy<FundsHoldApi>(this.actors, FUNDS_HOLD_ACTOR_TYPE, fundsHoldActorId(accountId, pool), FUNDS_HOLD_METHODS);
  }
}
