// A typed proxy of one actor over any ActorInvoker (embedded or Dapr): each method of its public
// API becomes a call of the same name with one JSON argument.

import type { ActorInvoker } from './port';

export function actorProxy<Api>(actors: ActorInvoker, actorType: string, actorId: string, methods: readonly (keyof Api & string)[]): Api {
  return Object.fromEntries(methods.map((method) => [method, (arg: unknown) => actors.invoke(actorType, actorId, method, arg ?? {})])) as Api;
}
