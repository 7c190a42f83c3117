// The embedded host's memory stays flat: a value an actor only wrote (each ended hold's record)
// is not kept, an image artifact is not kept once stored, idle activations are dropped (never
// one with a turn running or queued), and a call to an actor that has no state leaves none. The live heap is measured in a child process with
// --expose-gc (Jest cannot force a collection), on a real LMDB.

import { z } from 'zod';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildSync } from 'esbuild';
import { FundsHoldClient } from '../funds-hold/client';
import { FundsHold } from '../funds-hold/FundsHold';
import { ImageTask } from '../image-task/ImageTask';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { ROOT } from '../../test/support/processes';
import { EmbeddedActorHost } from './embedded-host';
import type { ActorContext } from './port';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts its calls in memory: a fresh activation starts again from zero. */
class Counter {
  static readonly actorType = 'Counter';
  static readonly methods = ['count'] as const;
  static readonly args = { count: z.unknown() };
  private calls = 0;
  constructor(private readonly ctx: ActorContext) {}
  async count(arg: { waitMs?: number }): Promise<{ calls: number; stored: number }> {
    if (arg.waitMs) await sleep(arg.waitMs);
    this.calls += 1;
    const stored = ((await this.ctx.state.get<number>('n')) ?? 0) + 1;
    this.ctx.state.set('n', stored);
    return { calls: this.calls, stored };
  }
  async onReminder(): Promise<void> {}
}

const reserve = (holdId: string) => ({ holdId, amount: 1000, ttlMs: 3_600_000, requestId: holdId, model: 'm', profileId: 'p' });

describe('the embedded host, memory', () => {
  let db: LocalDb;
  let host: EmbeddedActorHost | undefined;

  function start(idleMs?: number): EmbeddedActorHost {
    db = openLocalDb(mkdtempSync(join(tmpdir(), 'host-memory-')));
    host = new EmbeddedActorHost({ db, publish: async () => undefined, deliverInCommit: () => undefined, ...(idleMs ? { idleMs } : {}) });
    host.register(FundsHold);
    host.register(Counter);
    return host;
  }

  afterEach(async () => {
    await host?.close();
    await db?.close();
    host = undefined;
  });

  it('when thousands of holds are reserved and settled on one account, then the activation caches only what it reads, not each ended hold', async () => {
    const funds = new FundsHoldClient(start()).of('acct_mem');
    await funds.credit({ amount: 1_000_000_000, reference: 'seed' });
    for (let i = 0; i < 3000; i++) {
      await funds.reserve(reserve(`h${i}`));
      await funds.settle({ holdId: `h${i}`, lines: [{ unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 5 }] });
    }
    // The funds record (read on every turn); nothing per hold.
    expect(host!.stats()).toMatchObject({ activations: 1, cachedValues: 1 });
    // An ended hold is still known, from the database: a repeat answers the same, a reuse conflicts.
    expect(await funds.settle({ holdId: 'h7', lines: [] })).toMatchObject({ state: 'settled', charged: 5 });
    await expect(funds.reserve(reserve('h7'))).rejects.toMatchObject({ code: 'hold_state_conflict' });
    expect(await funds.getBalance()).toMatchObject({ balance: 1_000_000_000 - 3000 * 5, held: 0 });
  });

  it('when thousands of carved holds of a lease settle in batches, then the activation keeps only the chunk of endings being filled, not one per 32 holds', async () => {
    const funds = new FundsHoldClient(start()).of('acct_lease_mem');
    await funds.credit({ amount: 1_000_000_000, reference: 'seed' });
    await funds.openLease({ leaseId: 'L', amount: 100_000_000, minAmount: 1, ttlMs: 3_600_000 });
    const carved = (carve: number) => ({ holdId: `c${carve}`, amount: 1000, requestId: `c${carve}`, model: 'm', profileId: 'p', carve });
    for (let from = 0; from < 3000; from += 7) {
      const settle = Array.from({ length: 7 }, (_, i) => ({ ...carved(from + i), lines: [{ unit: 'TEXT_OUTPUT' as const, quantity: 1, unitPrice: 5 }] }));
      const { settled } = await funds.leaseBatch({ leaseId: 'L', ttlMs: 3_600_000, settle });
      expect(settled.every((item) => item.outcome?.state === 'settled')).toBe(true);
    }
    // The funds record and the chunk still filling (94 chunks were written).
    expect(host!.stats()).toMatchObject({ activations: 1, cachedValues: 2 });
    // An ended carve is still found, from the database: a repeat answers the same.
    const { settled } = await funds.leaseBatch({ leaseId: 'L', ttlMs: 3_600_000, settle: [{ ...carved(40), lines: [] }] });
    expect(settled[0].outcome).toMatchObject({ state: 'settled', charged: 5 });
    expect(host!.stats()).toMatchObject({ cachedValues: 2 });
  });

  it('when an actor has had no call for the idle time, then its activation is dropped and the next call finds its state in the database', async () => {
    const h = start(150);
    expect(await h.invoke('Counter', 'a', 'count', {})).toEqual({ calls: 1, stored: 1 });
    expect(await h.invoke('Counter', 'a', 'count', {})).toEqual({ calls: 2, stored: 2 });
    await sleep(600);
    expect(h.stats().activations).toBe(0);
    expect(await h.invoke('Counter', 'a', 'count', {})).toEqual({ calls: 1, stored: 3 });
  });

  it('when thousands of calls name actors nobody made (made-up task, order or session ids), then no activation is kept for them, and one with state still is', async () => {
    const h = start();
    h.register(ImageTask);
    const owner = { accountId: 'acct_probe', apiKeyId: 'key_probe' };
    for (let i = 0; i < 2000; i++) {
      await expect(h.invoke('ImageTask', randomUUID(), 'view', owner)).rejects.toMatchObject({ code: 'not_found' });
    }
    expect(h.stats().activations).toBe(0);
    // An actor with state keeps its activation until idle, as before.
    expect(await h.invoke('Counter', 'kept', 'count', {})).toEqual({ calls: 1, stored: 1 });
    expect(await h.invoke('Counter', 'kept', 'count', {})).toEqual({ calls: 2, stored: 2 });
    expect(h.stats().activations).toBe(1);
  });

  it('when a turn outlasts the idle time, with another queued behind it, then the activation is kept until both have run', async () => {
    const h = start(100);
    expect(await h.invoke('Counter', 'b', 'count', {})).toEqual({ calls: 1, stored: 1 });
    await sleep(300); // idle: dropped
    const slow = h.invoke('Counter', 'b', 'count', { waitMs: 700 });
    const queued = h.invoke('Counter', 'b', 'count', {});
    expect(await slow).toEqual({ calls: 1, stored: 2 });
    expect(await queued).toEqual({ calls: 2, stored: 3 });
    expect(h.stats().activations).toBe(1);
  });

  it('when tens of thousands of chats and some 1 MiB images pass, then the live heap stays flat (< 32 bytes per chat, < 16 KiB per image)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'host-memory-probe-'));
    const probe = join(dir, 'probe.js');
    buildSync({ entryPoints: [join(ROOT, 'test/support/host-memory-probe.ts')], bundle: true, platform: 'node', target: 'node20', format: 'cjs', packages: 'external', outfile: probe, logLevel: 'warning' });
    let stdout: string;
    try {
      ({ stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--no-flush-bytecode', probe, '25000', '30', String(1024 * 1024), join(dir, 'db')], {
        env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') },
        maxBuffer: 1024 * 1024,
      }));
    } finally {
      rmSync(dir, { recursive: true, force: true }); // some 100 MB of images
    }
    const { bytesPerTurn, bytesPerImage } = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(bytesPerTurn).toBeLessThan(32);
    expect(bytesPerImage).toBeLessThan(16 * 1024);
  }, 300_000);
});
