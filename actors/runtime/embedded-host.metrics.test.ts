// The embedded host's metrics: open holds follow committed turns only, events are counted as
// handed over and as taken, reminders as they fire.

import { z } from 'zod';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FundsHoldClient } from '../funds-hold/client';
import { FundsHold } from '../funds-hold/FundsHold';
import type { EventEnvelope } from '../../lib/events';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { registry } from '../../lib/metrics';
import { EmbeddedActorHost } from './embedded-host';
import type { ActorContext } from './port';

async function value(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const found = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return found?.value ?? 0;
}

/** An actor that opens a hold on the gauge and then fails its turn. */
class FailsAfterGauge {
  static readonly actorType = 'FailsAfterGauge';
  static readonly methods = ['run'] as const;
  static readonly args = { run: z.unknown() };
  constructor(private readonly ctx: ActorContext) {}
  async run(): Promise<void> {
    this.ctx.state.set('x', 1);
    this.ctx.adjustGauge('holds_open', 1);
    throw new Error('the turn fails');
  }
  async onReminder(): Promise<void> {}
}

const hold = (holdId: string, ttlMs = 60_000) => ({ holdId, amount: 1000, ttlMs, requestId: 'r', model: 'm', profileId: 'p' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the embedded host, observed', () => {
  let db: LocalDb;
  let host: EmbeddedActorHost;
  let failPublish = false;

  async function start(deliverInCommit: boolean): Promise<FundsHoldClient> {
    db = openLocalDb(mkdtempSync(join(tmpdir(), 'host-metrics-')));
    const deliver = (_events: readonly EventEnvelope[]) => undefined;
    host = new EmbeddedActorHost({
      db,
      publish: async () => {
        if (failPublish) throw new Error('pub/sub down');
      },
      ...(deliverInCommit ? { deliverInCommit: deliver } : {}),
    });
    host.register(FundsHold);
    host.register(FailsAfterGauge);
    await host.start();
    return new FundsHoldClient(host);
  }

  afterEach(async () => {
    failPublish = false;
    await host.close();
    await db.close();
  });

  it('when holds open and end by settle, release and expiry, then payg_holds_open goes up and back down', async () => {
    const funds = (await start(true)).of('acct_gauge');
    await funds.credit({ amount: 1_000_000, reference: 'seed' });
    const before = await value('payg_holds_open');
    await funds.reserve(hold('h1'));
    await funds.reserve(hold('h2'));
    await funds.reserve(hold('h1'));
    await funds.reserve(hold('h3', 20));
    expect(await value('payg_holds_open')).toBe(before + 3);
    await funds.settle({ holdId: 'h1', lines: [{ unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 10 }] });
    await funds.release({ holdId: 'h2', reason: 'test' });
    await funds.release({ holdId: 'h2', reason: 'test' });
    const fired = await value('payg_reminders_fired_total', { actor_type: 'FundsHold', outcome: 'ok' });
    for (let i = 0; i < 100 && (await funds.getBalance()).openHolds > 0; i += 1) await sleep(20);
    expect((await funds.getBalance()).openHolds).toBe(0);
    expect(await value('payg_holds_open')).toBe(before);
    expect(await value('payg_reminders_fired_total', { actor_type: 'FundsHold', outcome: 'ok' })).toBeGreaterThan(fired);
  });

  it('when a turn fails after moving the gauge, then nothing moves', async () => {
    await start(true);
    const before = await value('payg_holds_open');
    await expect(host.invoke('FailsAfterGauge', 'a', 'run', {})).rejects.toThrow();
    expect(await value('payg_holds_open')).toBe(before);
  });

  it('when events are delivered in the commit, then each is counted published and acknowledged once', async () => {
    const funds = (await start(true)).of('acct_commit');
    const published = await value('payg_events_published_total', { topic: 'billing' });
    const acknowledged = await value('payg_events_acknowledged_total', { topic: 'billing' });
    await funds.credit({ amount: 5, reference: 'one' });
    expect(await value('payg_events_published_total', { topic: 'billing' })).toBe(published + 1);
    expect(await value('payg_events_acknowledged_total', { topic: 'billing' })).toBe(acknowledged + 1);
  });

  it('when the publisher fails, then the event counts as published but not acknowledged', async () => {
    const funds = (await start(false)).of('acct_outbox');
    failPublish = true;
    const published = await value('payg_events_published_total', { topic: 'billing' });
    const acknowledged = await value('payg_events_acknowledged_total', { topic: 'billing' });
    await funds.credit({ amount: 5, reference: 'one' });
    expect(await value('payg_events_published_total', { topic: 'billing' })).toBe(published + 1);
    expect(await value('payg_events_acknowledged_total', { topic: 'billing' })).toBe(acknowledged);
  });
});
