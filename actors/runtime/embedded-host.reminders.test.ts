// The embedded host's reminders: stored in the turn's own commit (a failed turn leaves none), a
// periodic one fires again each period until unregistered, and FundsHold keeps its holds
// expiring when its reminders were lost (sweep on touch, a lost reminder set again).

import { z } from 'zod';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FundsHoldClient } from '../funds-hold/client';
import { FundsHold } from '../funds-hold/FundsHold';
import type { EventEnvelope } from '../../lib/events';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { EmbeddedActorHost } from './embedded-host';
import type { ActorContext } from './port';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Registers reminders on demand and counts their firings in its state. */
class Ticker {
  static readonly actorType = 'Ticker';
  static readonly methods = ['arm', 'armThenFail', 'fired'] as const;
  static readonly args = { arm: z.unknown(), armThenFail: z.unknown(), fired: z.unknown() };
  constructor(private readonly ctx: ActorContext) {}
  async arm(arg: { periodMs?: number; stopAfter?: number }): Promise<void> {
    this.ctx.state.set('stopAfter', arg.stopAfter ?? Infinity);
    await this.ctx.reminders.register('tick', arg.periodMs ?? 50, null, arg.periodMs ? { periodMs: arg.periodMs } : undefined);
  }
  async armThenFail(): Promise<void> {
    await this.ctx.reminders.register('tick', 50);
    throw new Error('the turn fails');
  }
  async fired(): Promise<number> {
    return (await this.ctx.state.get<number>('fired')) ?? 0;
  }
  async onReminder(): Promise<void> {
    const fired = ((await this.ctx.state.get<number>('fired')) ?? 0) + 1;
    this.ctx.state.set('fired', fired);
    if (fired >= ((await this.ctx.state.get<number>('stopAfter')) ?? Infinity)) await this.ctx.reminders.unregister('tick');
  }
}

describe('reminders on the embedded host', () => {
  let dir: string;
  let db: LocalDb;
  let host: EmbeddedActorHost;
  const events: EventEnvelope[] = [];
  const open = async () => {
    db = openLocalDb(dir);
    host = new EmbeddedActorHost({ db, publish: async (event) => void events.push(event) });
    host.register(Ticker);
    host.register(FundsHold);
    await host.start();
  };
  const close = async () => {
    await host.close();
    await db.close();
  };
  const storedReminders = (actorId: string) => [...db.reminders.getRange()].map(({ value }) => value as { actorId: string; name: string }).filter((r) => r.actorId === actorId).map((r) => r.name);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reminders-'));
    events.length = 0;
    await open();
  });
  afterEach(close);

  it('when a turn registers a reminder and then fails, then no reminder is stored and none fires', async () => {
    await expect(host.invoke('Ticker', 'a', 'armThenFail', {})).rejects.toMatchObject({ code: 'internal_error' });
    expect(storedReminders('a')).toEqual([]);
    await sleep(300);
    expect(await host.invoke('Ticker', 'a', 'fired', {})).toBe(0);
  });

  it('when a periodic reminder is registered, then it fires every period until its handler unregisters it', async () => {
    await host.invoke('Ticker', 'b', 'arm', { periodMs: 100, stopAfter: 3 });
    expect(storedReminders('b')).toEqual(['tick']);
    await sleep(1000);
    expect(await host.invoke('Ticker', 'b', 'fired', {})).toBe(3);
    expect(storedReminders('b')).toEqual([]);
  });

  it('when the host restarts, then a periodic reminder goes on firing', async () => {
    await host.invoke('Ticker', 'c', 'arm', { periodMs: 100 });
    await sleep(250);
    await close();
    await open();
    const before = (await host.invoke<number>('Ticker', 'c', 'fired', {}));
    await sleep(500);
    expect(await host.invoke<number>('Ticker', 'c', 'fired', {})).toBeGreaterThan(before + 1);
  });

  it("when a FundsHold's reminders are all lost, then the next touch ends its overdue hold, and a hold taken after gets its reminders again", async () => {
    const funds = new FundsHoldClient(host).of('acct_lost');
    await funds.credit({ amount: 1000, reference: 'c' });
    await funds.reserve({ holdId: 'h1', amount: 100, ttlMs: 500, requestId: 'r', model: 'm', profileId: 'p' });
    expect(storedReminders('acct_lost:pool-3')).toEqual(['expire-holds:net', expect.stringMatching(/^expire-holds@\d+$/)]);
    await close();
    // The same database, its reminders removed (as a lost Scheduler job would be).
    db = openLocalDb(dir);
    for (const { key } of [...db.reminders.getRange()]) db.reminders.removeSync(key);
    await db.close();
    await sleep(600);
    await open();
    expect(storedReminders('acct_lost:pool-3')).toEqual([]);
    const again = new FundsHoldClient(host).of('acct_lost');
    expect(await again.getBalance()).toMatchObject({ balance: 1000, held: 0, openHolds: 0 });
    expect(events.map((e) => e.id)).toContain('h1:release');

    await again.reserve({ holdId: 'h2', amount: 100, ttlMs: 300, requestId: 'r', model: 'm', profileId: 'p' });
    // The lost one-shot (its recorded due time has passed) is set again.
    expect(storedReminders('acct_lost:pool-3')).toContainEqual(expect.stringMatching(/^expire-holds@\d+$/));
    for (let i = 0; i < 50 && !events.some((e) => e.id === 'h2:release'); i++) await sleep(100);
    expect(events.map((e) => e.id)).toContain('h2:release');
  });
});
