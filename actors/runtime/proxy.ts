// A typed proxy of one actor over any ActorInvoker (embedded or Dapr): each method of its public
// API becomes a call of the same name with one JSON argument. A proxy holds nothing but its
// invoker, type and id, so one serves every call to its actor: proxies are kept per invoker
// (lib/kept.ts), not made again on every request.

import { Kept } from '../../lib/kept';
import type { ActorInvoker } from './port';

/** Actors per invoker whose proxies are kept (a few hundred bytes each). */
export const KEPT_PROXIES = 1024;

const kept = new WeakMap<ActorInvoker, Kept<{ methods: readonly string[]; proxy: unknown }>>();

export function actorProxy<Api>(actors: ActorInvoker, actorType: string, actorId: string, methods: readonly (keyof Api & string)[]): Api {
  const make = () => ({ methods, proxy: Object.fromEntries(methods.map((method) => [method, (arg: unknown) => actors.invoke(actorType, actorId, method, arg ?? {})])) });
  let proxies = kept.get(actors);
  if (!proxies) kept.set(actors, (proxies = new Kept(KEPT_PROXIES)));
  const found = proxies.get(`${actorType}\u0000${actorId}`, make);
  // Each client passes its type's one list of methods; another list gets a proxy of its own.
  return (found.methods === methods ? found.proxy : make().proxy) as Api;
}
