import type { ActorInvoker } from './port';
import { actorProxy, KEPT_PROXIES } from './proxy';

interface Api {
  ping(arg: { n: number }): Promise<string>;
  pong(): Promise<string>;
}
const METHODS = ['ping', 'pong'] as const satisfies readonly (keyof Api)[];

/** Answers each call with what it was: type, id, method and argument. */
function invoker(): ActorInvoker {
  return { invoke: async <R>(type: string, id: string, method: string, arg: unknown) => `${type}/${id}.${method}(${JSON.stringify(arg)})` as R };
}

describe('actorProxy', () => {
  it("when an actor's proxy is asked for again on the same invoker, then the same proxy comes back, and it calls that actor", async () => {
    const actors = invoker();
    const proxy = actorProxy<Api>(actors, 'T', 'a', METHODS);
    expect(actorProxy<Api>(actors, 'T', 'a', METHODS)).toBe(proxy);
    expect(await proxy.ping({ n: 1 })).toBe('T/a.ping({"n":1})');
    expect(await proxy.pong()).toBe('T/a.pong({})');
  });

  it('when the actor, its type or the invoker differs, then so does the proxy, each calling its own actor', async () => {
    const actors = invoker();
    const a = actorProxy<Api>(actors, 'T', 'a', METHODS);
    const b = actorProxy<Api>(actors, 'T', 'b', METHODS);
    const otherType = actorProxy<Api>(actors, 'U', 'a', METHODS);
    const otherInvoker = actorProxy<Api>(invoker(), 'T', 'a', METHODS);
    expect(new Set([a, b, otherType, otherInvoker]).size).toBe(4);
    expect(await b.pong()).toBe('T/b.pong({})');
    expect(await otherType.pong()).toBe('U/a.pong({})');
  });

  it('when another list of methods is asked for on a kept actor, then it gets a proxy of that list', () => {
    const actors = invoker();
    actorProxy<Api>(actors, 'T', 'a', METHODS);
    const narrow = actorProxy<Pick<Api, 'pong'>>(actors, 'T', 'a', ['pong']);
    expect(Object.keys(narrow)).toEqual(['pong']);
  });

  it('when more actors than are kept are proxied, then the proxies are made again, each still calling its actor', async () => {
    const actors = invoker();
    const first = actorProxy<Api>(actors, 'T', 'x0', METHODS);
    for (let i = 1; i <= KEPT_PROXIES; i++) actorProxy<Api>(actors, 'T', `x${i}`, METHODS);
    const again = actorProxy<Api>(actors, 'T', 'x0', METHODS);
    expect(again).not.toBe(first);
    expect(await again.pong()).toBe('T/x0.pong({})');
  });
});
