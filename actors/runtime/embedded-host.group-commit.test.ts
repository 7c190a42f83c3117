// The embedded host's group commit, on a real local database: turns that end together share one
// LMDB transaction, each caller is answered only once its turn is in the database, a turn that
// throws fails alone, and a turn whose commit fails is failed and leaves nothing behind while the
// turns that shared its transaction are committed.

import { z } from 'zod';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { EmbeddedActorHost } from './embedded-host';
import type { ActorContext } from './port';

/** Cannot be stored: encoding it throws (inside the commit's transaction). */
class Unstorable {
  toJSON(): never {
    throw new Error('cannot be encoded');
  }
}

class Counter {
  static readonly actorType = 'Counter';
  static readonly methods = ['bump', 'bumpThenThrow', 'bumpUnstorable', 'count'] as const;
  static readonly args = { bump: z.unknown(), bumpThenThrow: z.unknown(), bumpUnstorable: z.unknown(), count: z.unknown() };
  constructor(private readonly ctx: ActorContext) {}
  async bump(): Promise<number> {
    const count = ((await this.ctx.state.get<number>('count')) ?? 0) + 1;
    this.ctx.state.set('count', count);
    this.ctx.emit({ id: `${this.ctx.actorId}:${count}`, topic: 'usage', type: 'test', occurredAt: new Date(0).toISOString(), data: { accountId: this.ctx.actorId, pool: 'p' } } as never);
    return count;
  }
  async bumpThenThrow(): Promise<number> {
    await this.bump();
    throw new Error('the method fails');
  }
  async bumpUnstorable(): Promise<number> {
    const count = await this.bump();
    this.ctx.state.set('bad', new Unstorable());
    return count;
  }
  async count(): Promise<number> {
    return (await this.ctx.state.get<number>('count')) ?? 0;
  }
  async onReminder(): Promise<void> {}
}

describe('group commit on the embedded host', () => {
  let db: LocalDb;
  let host: EmbeddedActorHost;
  /** The events delivered in commits (written to the database, as the embedded ledger does). */
  const delivered = () => [...db.ledger.getKeys()] as string[];
  const stored = (actorId: string, key: string) => db.actorState.get(`Counter\u0000${actorId}\u0000${key}`);

  beforeEach(async () => {
    db = openLocalDb(mkdtempSync(join(tmpdir(), 'group-commit-')));
    // Delivered inside the commit (as the embedded ledger is): with its turn's state or not at all.
    host = new EmbeddedActorHost({ db, publish: async () => undefined, deliverInCommit: (events) => events.forEach((event) => db.ledger.putSync(event.id, 1)) });
    host.register(Counter);
    await host.start();
  });

  afterEach(async () => {
    await host.close();
    await db.close();
  });

  it('when the data directory is no longer this process\'s at commit time, then the turns due are failed and nothing of them is written', async () => {
    let held = true;
    const guarded = new EmbeddedActorHost({ db, publish: async () => undefined, deliverInCommit: (events) => events.forEach((event) => db.ledger.putSync(event.id, 1)), held: () => held });
    guarded.register(Counter);
    await guarded.start();
    try {
      expect(await guarded.invoke<number>('Counter', 'g1', 'bump', {})).toBe(1);
      held = false;
      await expect(guarded.invoke<number>('Counter', 'g1', 'bump', {})).rejects.toMatchObject({ code: 'internal_error' });
      await expect(guarded.invoke<number>('Counter', 'g2', 'bump', {})).rejects.toMatchObject({ code: 'internal_error' });
      expect(stored('g1', 'count')).toBe(1);
      expect(stored('g2', 'count')).toBeUndefined();
      expect(delivered()).toEqual(['g1:1']);
    } finally {
      await guarded.close();
    }
  });

  it('when 64 turns on different actors arrive together, then they commit in fewer transactions than turns, and each caller is answered once its turn is stored', async () => {
    const before = host.commitStats();
    const seenAtAnswer = await Promise.all(Array.from({ length: 64 }, (_, i) =>
      host.invoke<number>('Counter', `a${i}`, 'bump', {}).then((count) => ({ count, stored: stored(`a${i}`, 'count') }))));
    for (const { count, stored: value } of seenAtAnswer) expect(value).toBe(count);
    const after = host.commitStats();
    expect(after.turns - before.turns).toBe(64);
    expect(after.transactions - before.transactions).toBeLessThan(64);
    expect(delivered()).toHaveLength(64);
  });

  it('when turns begin one by one in one pass of the event loop (as many provider answers arrive together), then they share one transaction and each caller is answered once its turn is stored', async () => {
    const before = host.commitStats();
    // Each call from its own callback: its turn runs to its end before the next call begins.
    const calls = await new Promise<Promise<{ count: number; stored: unknown }>[]>((resolve) => {
      const started: Promise<{ count: number; stored: unknown }>[] = [];
      for (let i = 0; i < 20; i++) {
        setImmediate(() => {
          started.push(host.invoke<number>('Counter', `s${i}`, 'bump', {}).then((count) => ({ count, stored: stored(`s${i}`, 'count') })));
          if (started.length === 20) resolve(started);
        });
      }
    });
    for (const { count, stored: value } of await Promise.all(calls)) expect(value).toBe(count);
    const after = host.commitStats();
    expect(after.turns - before.turns).toBe(20);
    expect(after.transactions - before.transactions).toBeLessThanOrEqual(2);
  });

  it('when many turns on one actor arrive together, then each reads the one before, all are stored, in fewer transactions than turns', async () => {
    const before = host.commitStats();
    const counts = await Promise.all(Array.from({ length: 50 }, () => host.invoke<number>('Counter', 'hot', 'bump', {})));
    expect(counts).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(stored('hot', 'count')).toBe(50);
    expect(host.commitStats().transactions - before.transactions).toBeLessThan(50);
  });

  it('when one turn throws among others arriving together, then only it fails and nothing of it is stored', async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => host.invoke<number>('Counter', `t${i}`, i === 7 ? 'bumpThenThrow' : 'bump', {})));
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
    expect(outcomes[7]).toMatchObject({ status: 'rejected' });
    expect(stored('t7', 'count')).toBeUndefined();
    expect(stored('t8', 'count')).toBe(1);
    expect(delivered()).not.toContain('t7:1');
    expect(await host.invoke('Counter', 't7', 'count', {})).toBe(0);
  });

  it('when one turn cannot be committed, then it fails and leaves no partial state, while the turns that shared its transaction are committed', async () => {
    const before = host.commitStats();
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => host.invoke<number>('Counter', `c${i}`, i === 3 ? 'bumpUnstorable' : 'bump', {})));
    expect(outcomes[3]).toMatchObject({ status: 'rejected' });
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(19);
    // Nothing of the failed turn: neither its counter (written before the bad value) nor its event.
    expect(stored('c3', 'count')).toBeUndefined();
    expect(stored('c3', 'bad')).toBeUndefined();
    expect(delivered()).not.toContain('c3:1');
    for (const i of [0, 1, 2, 4, 19]) expect(stored(`c${i}`, 'count')).toBe(1);
    expect(host.commitStats().turns - before.turns).toBe(19);
    // Its activation starts afresh from the database.
    expect(await host.invoke('Counter', 'c3', 'count', {})).toBe(0);
    expect(await host.invoke('Counter', 'c3', 'bump', {})).toBe(1);
  });

  it('when the database fails a commit itself, then the host tells it (for readiness) until a transaction commits; a turn whose own writes fail does not', async () => {
    // The database's own failure (a full disk answers EIO from the commit): after the turns' writes.
    const commit = db.root.transactionSync.bind(db.root);
    let failCommits = 0;
    (db.root as { transactionSync: unknown }).transactionSync = <T>(writes: () => T): T =>
      commit(() => {
        const written = writes();
        if (failCommits > 0) {
          failCommits--;
          throw new Error('Input/output error');
        }
        return written;
      });
    expect(host.storageFailing(10_000)).toBe(false);
    await expect(host.invoke('Counter', 'u', 'bumpUnstorable', {})).rejects.toThrow();
    expect(host.storageFailing(10_000)).toBe(false);
    // The group's transaction and the turn's own retry both fail.
    failCommits = 2;
    await expect(host.invoke('Counter', 'd', 'bump', {})).rejects.toThrow();
    expect(stored('d', 'count')).toBeUndefined();
    expect(host.storageFailing(10_000)).toBe(true);
    expect(host.storageFailing(10_000 - 1)).toBe(true);
    expect(host.storageFailing(0)).toBe(false);
    expect(await host.invoke('Counter', 'd', 'bump', {})).toBe(1);
    expect(host.storageFailing(10_000)).toBe(false);
  });

  it('when an actor\'s turn cannot be committed, then its next turns queued behind it see none of it', async () => {
    const outcomes = await Promise.allSettled([
      host.invoke<number>('Counter', 'p', 'bump', {}),
      host.invoke<number>('Counter', 'p', 'bumpUnstorable', {}),
      host.invoke<number>('Counter', 'p', 'bump', {}),
      host.invoke<number>('Counter', 'p', 'count', {}),
    ]);
    expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: 1 });
    expect(outcomes[1]).toMatchObject({ status: 'rejected' });
    // A later turn either ran on the failed turn's writes (and failed with it) or after it, without them.
    for (const later of outcomes.slice(2)) if (later.status === 'fulfilled') expect(later.value).toBeLessThanOrEqual(2);
    const count = await host.invoke<number>('Counter', 'p', 'count', {});
    expect(stored('p', 'count')).toBe(count);
    expect(delivered().filter((id) => id.startsWith('p:'))).toHaveLength(count);
  });
});
