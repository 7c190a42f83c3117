import { DaprSidecar } from '../../lib/dapr-http';
import { daprActorClass } from '../runtime/dapr-host';
import type { ActorClass } from '../runtime/port';
import { ACTOR_CLASSES } from './registry';

/** Every member name of a class's prototype chain, up to Object. */
function memberNames(cls: { prototype: object }): Set<string> {
  const names = new Set<string>();
  for (let proto: object | null = cls.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) names.add(name);
  }
  return names;
}

describe('actor registry', () => {
  it('when the actor classes are registered, then their type names are unique', () => {
    const types = ACTOR_CLASSES.map((cls) => cls.actorType);
    expect(new Set(types).size).toBe(types.length);
  });

  it('when a method is exposed on the Dapr host, then it takes no name the adapter uses itself (it would replace it)', async () => {
    const sidecar = new DaprSidecar('127.0.0.1', 1);
    const probe = class {
      static readonly actorType = 'Probe';
      static readonly methods: readonly string[] = [];
      static readonly args = {};
      async onReminder(): Promise<void> {}
    } as ActorClass;
    const reserved = memberNames(daprActorClass(probe, async () => undefined, sidecar));
    for (const cls of ACTOR_CLASSES) expect(cls.methods.filter((method) => reserved.has(method))).toEqual([]);
    await sidecar.close();
  });
});
