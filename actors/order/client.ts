// Typed client of the Order actor over any ActorInvoker (embedded or Dapr).

import { actorProxy } from '../runtime/proxy';
import type { ActorInvoker } from '../runtime/port';
import { ORDER_ACTOR_TYPE, ORDER_METHODS, type OrderApi } from './OrderInterface';

export class OrderClient {
  constructor(private readonly actors: ActorInvoker) {}

  of(orderId: string): OrderApi {
    return actorProxy<OrderApi>(this.actors, ORDER_ACTOR_TYPE, orderId, ORDER_METHODS);
  }
}
