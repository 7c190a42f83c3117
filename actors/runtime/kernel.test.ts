// The actor kernel on its own, over an in-memory store whose commits the test resolves or fails:
// read-your-writes, the delete marker, what a failed turn leaves, gauges after commit, the
// reminder name rules, and overlapping commits (the next turn before the previous is durable).

import { registry } from '../../lib/metrics';
import { Activation, actorReminderName, DELETED, freshReminderName, registeredReminderName, TurnFailedEarlier, type CommitRequest, type KernelHost, type KernelOptions, type ReminderRegistration } from './kernel';
import type { ActorContext } from './port';

/** A store whose commits wait until the test settles them (or commit at once when `auto`). */
class Store {
  readonly values = new Map<string, unknown>();
  readonly waiting: { request: CommitRequest; resolve: () => void; reject: (error: Error) => void }[] = [];
  readonly registered: ReminderRegistration[] = [];
  readonly unregistered: string[][] = [];
  auto = true;
  /** Like the embedded host: a turn with nothing to write commits nothing (no promise to wait for). */
  skipEmpty = false;
  now = 1_000;

  host(): KernelHost {
    return {
      actors: { invoke: () => Promise.reject(new Error('no calls here')) },
      now: () => this.now,
      read: (_activation, key) => structuredClone(this.values.get(key)),
      commit: (_activation, request) => this.skipEmpty && request.turn.writes.size === 0 && request.turn.events.length === 0 ? undefined : new Promise<void>((resolve, reject) => {
        const entry = { request, resolve: () => (this.apply(request), resolve()), reject };
        if (this.auto) entry.resolve();
        else this.waiting.push(entry);
      }),
      register: async (_activation, _turn, reminder) => void this.registered.push(reminder),
      unregister: async (_activation, _turn, _name, names) => void this.unregistered.push(names),
    };
  }

  private apply({ turn }: CommitRequest): void {
    for (const [key, value] of turn.writes) {
      if (value === DELETED) this.values.delete(key);
      else this.values.set(key, structuredClone(value));
    }
  }
}

let built = 0;
let remindersSeen: string[] = [];

/** Runs whatever the test gives it, with its context. */
class Probe {
  static readonly actorType = 'Probe';
  static readonly methods = [] as const;
  static readonly args = {};
  constructor(readonly ctx: ActorContext) {
    built++;
  }
  async onReminder(name: string): Promise<void> {
    remindersSeen.push(name);
    if (name === 'again') await this.ctx.reminders.register('again', 10);
    if (name === 'periodic') await this.ctx.reminders.register('periodic', 10, null, { periodMs: 10 });
  }
}

function activation(store: Store, options: KernelOptions = {}): Activation {
  return new Activation(Probe, 'p1', store.host(), options);
}

const turn = <R>(a: Activation, body: (ctx: ActorContext) => Promise<R>) => a.run((instance) => body((instance as unknown as Probe).ctx));

async function gauge(): Promise<number> {
  const metric = registry.getSingleMetric('payg_holds_open');
  return (await metric!.get()).values[0]?.value ?? 0;
}

beforeEach(() => {
  built = 0;
  remindersSeen = [];
});

describe('the actor kernel', () => {
  it('when a turn writes and removes keys, then it reads its own writes, and the next turn reads them committed', async () => {
    const store = new Store();
    store.values.set('gone', 'old');
    const a = activation(store);
    const seen = await turn(a, async (ctx) => {
      ctx.state.set('k', { n: 1 });
      ctx.state.remove('gone');
      return [await ctx.state.get('k'), await ctx.state.get('gone'), await ctx.state.getUncached('k')];
    });
    expect(seen).toEqual([{ n: 1 }, undefined, { n: 1 }]);
    expect(store.values.get('k')).toEqual({ n: 1 });
    expect(store.values.has('gone')).toBe(false);
    expect(await turn(a, async (ctx) => [await ctx.state.get('k'), await ctx.state.get('gone')])).toEqual([{ n: 1 }, undefined]);
  });

  it('when the actor only writes a key, then the activation does not keep it; a key it reads is kept current', async () => {
    const store = new Store();
    store.values.set('read', 1);
    const a = activation(store);
    await turn(a, async (ctx) => {
      await ctx.state.get('read');
      ctx.state.set('read', 2);
      ctx.state.set('written', 'x');
      await ctx.state.getUncached('other');
    });
    expect(a.cachedValues).toBe(1);
    store.values.set('read', 99); // not read again from the store: the cache holds 2
    expect(await turn(a, async (ctx) => ctx.state.get('read'))).toBe(2);
  });

  it('when the store is remote (cacheAbsent), then a key read as absent is not read again, and once written is forgotten', async () => {
    const store = new Store();
    const a = activation(store, { cacheAbsent: true });
    const reads: string[] = [];
    const host = store.host();
    const counting = new Activation(Probe, 'p2', { ...host, read: (act, key) => (reads.push(key), host.read(act, key)) }, { cacheAbsent: true });
    await turn(counting, async (ctx) => ctx.state.get('missing'));
    await turn(counting, async (ctx) => ctx.state.get('missing'));
    expect(reads).toEqual(['missing']);
    await turn(counting, async (ctx) => ctx.state.set('missing', 5));
    expect(counting.cachedValues).toBe(0);
    expect(await turn(counting, async (ctx) => ctx.state.get('missing'))).toBe(5);
    expect(a.cachedValues).toBe(0);
  });

  it('when a turn writes a key asking to keep it, then later turns read it from the cache, a key known absent too, until it is removed', async () => {
    const store = new Store();
    const reads: string[] = [];
    const host = store.host();
    const a = new Activation(Probe, 'p3', { ...host, read: (act, key) => (reads.push(key), host.read(act, key)) }, { cacheAbsent: true });
    await turn(a, async (ctx) => {
      ctx.state.set('chunk', 'line 1', { keep: true });
      ctx.state.set('record', 'once');
    });
    expect(await turn(a, async (ctx) => ctx.state.get('chunk'))).toBe('line 1');
    expect(reads).toEqual([]);
    // Known absent, then written with keep: no read either.
    await turn(a, async (ctx) => ctx.state.get('next'));
    await turn(a, async (ctx) => ctx.state.set('next', 'line 2', { keep: true }));
    store.values.set('next', 'changed behind its back'); // not read again: the cache holds line 2
    expect(await turn(a, async (ctx) => ctx.state.get('next'))).toBe('line 2');
    expect(reads).toEqual(['next']);
    // A later write without keep, and a removal, leave it as before: a removed key known absent.
    await turn(a, async (ctx) => ctx.state.remove('chunk'));
    expect(await turn(a, async (ctx) => ctx.state.get('chunk'))).toBeUndefined();
    expect(reads).toEqual(['next']);
    expect(await turn(a, async (ctx) => ctx.state.get('record'))).toBe('once');
    expect(reads).toEqual(['next', 'record']);
  });

  it('when a turn writes a cached key asking not to keep it, then it leaves the cache and a later read goes to the store', async () => {
    const store = new Store();
    store.values.set('full', 'lines');
    const reads: string[] = [];
    const host = store.host();
    const a = new Activation(Probe, 'p4', { ...host, read: (act, key) => (reads.push(key), host.read(act, key)) });
    await turn(a, async (ctx) => ctx.state.get('full'));
    expect(a.cachedValues).toBe(1);
    await turn(a, async (ctx) => ctx.state.set('full', 'all lines', { keep: false }));
    expect(a.cachedValues).toBe(0);
    expect(await turn(a, async (ctx) => ctx.state.get('full'))).toBe('all lines');
    expect(reads).toEqual(['full', 'full']);
  });

  it('when a turn writes a key with keep and its commit fails (overlapping commits: kept before it is durable), then nothing is kept', async () => {
    const store = new Store();
    store.values.set('chunk', 'stored');
    store.auto = false;
    const a = activation(store, { overlapCommits: true });
    const failing = turn(a, async (ctx) => ctx.state.set('chunk', 'not committed', { keep: true }));
    await new Promise((resolve) => setImmediate(resolve));
    store.waiting.shift()!.reject(new Error('the store refused'));
    await expect(failing).rejects.toThrow('the store refused');
    store.auto = true;
    expect(await turn(a, async (ctx) => ctx.state.get('chunk'))).toBe('stored');
  });

  it('when a turn throws after changing a cached object, then nothing is committed and the next turn starts afresh from the store', async () => {
    const store = new Store();
    store.values.set('rec', { n: 1 });
    const a = activation(store);
    await turn(a, async (ctx) => ctx.state.get('rec'));
    const builtBefore = built;
    await expect(turn(a, async (ctx) => {
      const rec = (await ctx.state.get<{ n: number }>('rec'))!;
      rec.n = 2; // changed in place, then the turn fails
      ctx.state.set('other', 1);
      throw new Error('the turn fails');
    })).rejects.toThrow('the turn fails');
    expect(store.values.has('other')).toBe(false);
    expect(await turn(a, async (ctx) => ctx.state.get('rec'))).toEqual({ n: 1 });
    expect(built).toBe(builtBefore + 1);
  });

  it('when a turn moves a gauge, then it moves only once the commit is done, and never for a failed commit', async () => {
    const store = new Store();
    store.auto = false;
    const a = activation(store);
    const before = await gauge();
    const ok = turn(a, async (ctx) => ctx.adjustGauge('holds_open', 1));
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.waiting).toHaveLength(1);
    expect(await gauge()).toBe(before);
    store.waiting.shift()!.resolve();
    await ok;
    expect(await gauge()).toBe(before + 1);
    const failed = turn(a, async (ctx) => ctx.adjustGauge('holds_open', 1));
    await new Promise((resolve) => setImmediate(resolve));
    store.waiting.shift()!.reject(new Error('commit failed'));
    await expect(failed).rejects.toThrow('commit failed');
    expect(await gauge()).toBe(before + 1);
  });

  it('when turns are queued, then they run one at a time in order', async () => {
    const store = new Store();
    const a = activation(store);
    const log: string[] = [];
    const slow = (label: string, ms: number) => turn(a, async () => {
      log.push(`start ${label}`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`end ${label}`);
    });
    await Promise.all([slow('a', 30), slow('b', 1), slow('c', 10)]);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(a.active).toBe(false);
  });
});

describe('reminder names', () => {
  it('the fresh name of a reminder carries the actor\'s name, and the actor is given back its own name', () => {
    expect(freshReminderName('expire@5', 77)).toBe('expire@5~retry@77');
    expect(freshReminderName('expire@5~retry@77', 90)).toBe('expire@5~retry@90');
    expect(actorReminderName('expire@5~retry@90')).toBe('expire@5');
    expect(actorReminderName('plain')).toBe('plain');
    // Only a one-shot registered under the very name now firing gets a fresh one.
    expect(registeredReminderName('a', 'a', false, 3)).toBe('a~retry@3');
    expect(registeredReminderName('a', 'a', true, 3)).toBe('a');
    expect(registeredReminderName('a', 'a~retry@1', false, 3)).toBe('a');
    expect(registeredReminderName('a', undefined, false, 3)).toBe('a');
  });

  it('when a reminder fires under a fresh name, then onReminder gets the plain name; re-registered from its own firing, it goes under a fresh name and unregistering reaches both', async () => {
    const store = new Store();
    const a = activation(store, { freshReminderNames: true });
    await a.remind('again~retry@5', null);
    expect(remindersSeen).toEqual(['again']);
    expect(store.registered.at(-1)).toMatchObject({ name: 'again', registeredAs: 'again' });
    await a.remind('again', null);
    expect(store.registered.at(-1)).toMatchObject({ name: 'again', registeredAs: `again~retry@${store.now}` });
    await a.remind('periodic', null);
    expect(store.registered.at(-1)).toMatchObject({ name: 'periodic', registeredAs: 'periodic' });
    await turn(a, async (ctx) => ctx.reminders.unregister('again'));
    expect(store.unregistered.at(-1)).toEqual(['again', `again~retry@${store.now}`]);
  });

  it('when the host has no Scheduler (embedded), then names are kept as given', async () => {
    const store = new Store();
    const a = activation(store);
    await a.remind('again', null);
    expect(store.registered.at(-1)).toMatchObject({ name: 'again', registeredAs: 'again' });
  });
});

describe('overlapping commits', () => {
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  it('when the next turn starts before the previous one is durable, then it reads its writes (cached or not), and each answer waits for its own commit', async () => {
    const store = new Store();
    store.auto = false;
    const a = activation(store, { overlapCommits: true });
    store.values.set('rec', { n: 0 });
    let firstAnswered = false;
    const first = turn(a, async (ctx) => {
      const rec = (await ctx.state.get<{ n: number }>('rec'))!;
      rec.n = 1;
      ctx.state.set('rec', rec);
      ctx.state.set('only-written', 'w');
    }).then(() => (firstAnswered = true));
    const second = turn(a, async (ctx) => {
      const rec = (await ctx.state.get<{ n: number }>('rec'))!;
      const written = await ctx.state.get('only-written');
      rec.n = 2; // in place: must not reach the first turn's commit
      ctx.state.set('rec', rec);
      return written;
    });
    for (let i = 0; i < 5 && store.waiting.length < 2; i++) await flush();
    expect(store.waiting).toHaveLength(2);
    expect(firstAnswered).toBe(false);
    expect(store.waiting[0].request.turn.writes.get('rec')).toEqual({ n: 1 });
    store.waiting.shift()!.resolve();
    await first;
    expect(store.values.get('rec')).toEqual({ n: 1 });
    store.waiting.shift()!.resolve();
    expect(await second).toBe('w');
    expect(store.values.get('rec')).toEqual({ n: 2 });
  });

  it('when a turn only reads while the previous one is committing, then it is answered once that commit is durable, and fails if that commit fails', async () => {
    for (const outcome of ['durable', 'failed'] as const) {
      const store = new Store();
      store.auto = false;
      store.skipEmpty = true;
      store.values.set('rec', { n: 0 });
      const a = activation(store, { overlapCommits: true });
      const first = turn(a, async (ctx) => ctx.state.set('rec', { n: 1 }));
      let answered = false;
      const read = turn(a, async (ctx) => ctx.state.get<{ n: number }>('rec')).then((value) => ((answered = true), value));
      for (let i = 0; i < 5 && store.waiting.length < 1; i++) await flush();
      for (let i = 0; i < 5; i++) await flush();
      // It read the first turn's write, not yet durable: no answer yet.
      expect(answered).toBe(false);
      if (outcome === 'durable') {
        store.waiting.shift()!.resolve();
        await first;
        expect(await read).toEqual({ n: 1 });
      } else {
        store.waiting.shift()!.reject(new Error('disk full'));
        await expect(first).rejects.toThrow('disk full');
        await expect(read).rejects.toBeInstanceOf(TurnFailedEarlier);
      }
    }
  });

  it('when a turn\'s commit fails, then a later turn that read its writes fails too and is never committed; the next starts from the store', async () => {
    const store = new Store();
    store.auto = false;
    store.values.set('rec', { n: 0 });
    const a = activation(store, { overlapCommits: true });
    const first = turn(a, async (ctx) => ctx.state.set('rec', { n: 1 }));
    const second = turn(a, async (ctx) => ctx.state.set('seen', await ctx.state.get('rec')));
    for (let i = 0; i < 5 && store.waiting.length < 2; i++) await flush();
    const [one, two] = store.waiting.splice(0);
    expect(two.request.live()).toBe(true);
    one.reject(new Error('disk full'));
    await expect(first).rejects.toThrow('disk full');
    expect(two.request.live()).toBe(false);
    two.reject(new TurnFailedEarlier());
    await expect(second).rejects.toBeInstanceOf(TurnFailedEarlier);
    store.auto = true;
    expect(await turn(a, async (ctx) => ctx.state.get('rec'))).toEqual({ n: 0 });
    expect(store.values.has('seen')).toBe(false);
  });

  it('when a turn\'s body fails while the previous one is committing, then the previous still commits and the next turn reads it', async () => {
    const store = new Store();
    store.auto = false;
    store.values.set('rec', { n: 0 });
    const a = activation(store, { overlapCommits: true });
    const first = turn(a, async (ctx) => {
      const rec = (await ctx.state.get<{ n: number }>('rec'))!;
      rec.n = 1;
      ctx.state.set('rec', rec);
    });
    const second = turn(a, async (ctx) => {
      (await ctx.state.get<{ n: number }>('rec'))!.n = 666;
      throw new Error('refused');
    });
    const third = turn(a, async (ctx) => ctx.state.get('rec'));
    for (let i = 0; i < 5 && store.waiting.length < 1; i++) await flush();
    expect(store.waiting).toHaveLength(1);
    store.waiting.shift()!.resolve();
    await first;
    await expect(second).rejects.toThrow('refused');
    for (let i = 0; i < 5 && store.waiting.length < 1; i++) await flush();
    store.waiting.shift()?.resolve();
    expect(await third).toEqual({ n: 1 });
    expect(store.values.get('rec')).toEqual({ n: 1 });
  });
});
