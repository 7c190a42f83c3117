// Reconciliation on the embedded host with a real local database: FundsHold actors, the LMDB
// ledger written in each turn's own commit, and the gateway's reconciliation over both. A ledger
// that lost an event is made by leaving that event out of the commit's ledger write.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FundsHoldClient } from '../../../actors/funds-hold/client';
import { STATE_KEY, type FundsState } from '../../../actors/funds-hold/funds-state';
import { FUNDS_HOLD_ACTOR_TYPE, fundsHoldActorId } from '../../../actors/funds-hold/FundsHoldInterface';
import { ACTOR_CLASSES } from '../../../actors/host/registry';
import { EmbeddedActorHost } from '../../../actors/runtime/embedded-host';
import { ActorOutboxClient } from '../../../actors/runtime/outbox-client';
import { billingEvent } from '../../../lib/events';
import { openLocalDb, type LocalDb } from '../../../lib/local-db';
import { LmdbLedgerStore } from '../../ledger/lmdb-store';
import { storeLedgerReader } from './reader';
import { reconcile } from './reconcile';

const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };
const output = (quantity: number) => [{ unit: 'TEXT_OUTPUT' as const, quantity, unitPrice: 3 }];

describe('reconciliation on the embedded host', () => {
  let db: LocalDb;
  let host: EmbeddedActorHost;
  let ledger: LmdbLedgerStore;
  let clock = Date.now();
  /** Event ids the ledger never gets. */
  const lost = new Set<string>();
  const run = () => reconcile(storeLedgerReader(ledger), new FundsHoldClient(host), new ActorOutboxClient(host));

  beforeAll(async () => {
    db = openLocalDb(mkdtempSync(join(tmpdir(), 'reconcile-')));
    ledger = new LmdbLedgerStore(db);
    host = new EmbeddedActorHost({
      db,
      publish: async (event) => void ledger.appendSync(event),
      deliverInCommit: (events) => void ledger.appendInTransaction(events.filter((event) => !lost.has(event.id))),
      now: () => clock,
    });
    for (const cls of ACTOR_CLASSES) host.register(cls);
    await host.start();
  });
  afterAll(async () => {
    await host.close();
    await db.close();
  });

  it('when the ledger lost a platform-borne bill or a release, which move no balance, then reconciliation reports each account by its bill counts', async () => {
    const funds = new FundsHoldClient(host);
    const borne = funds.of('acct_borne');
    await borne.credit({ amount: 10_000, reference: 'c' });
    await borne.reserve({ holdId: 'h-borne', amount: 500, ttlMs: 1000, ...meta });
    clock += 2000;
    expect(await borne.getBalance()).toMatchObject({ openHolds: 0, balance: 10_000 });
    // The settle after its expiry: the usage is the platform's, a bill of 0 the ledger never gets.
    lost.add('h-borne:usage-borne').add('h-borne:platform-borne');
    expect(await borne.settle({ holdId: 'h-borne', lines: output(5) })).toMatchObject({ state: 'expired', charged: 0 });
    const released = funds.of('acct_released');
    await released.credit({ amount: 10_000, reference: 'c' });
    await released.reserve({ holdId: 'h-released', amount: 500, ttlMs: 60_000, ...meta });
    lost.add('h-released:release');
    await released.release({ holdId: 'h-released', reason: 'client_gone' });
    const whole = funds.of('acct_whole');
    await whole.credit({ amount: 10_000, reference: 'c' });
    await whole.reserve({ holdId: 'h-whole', amount: 500, ttlMs: 60_000, ...meta });
    await whole.settle({ holdId: 'h-whole', lines: output(5) });
    expect(await run()).toEqual({
      accounts: 3,
      differences: [
        // credit and the expiry's release in the ledger; the actor emitted the platform-borne bill too.
        { accountId: 'acct_borne', pool: 'pool-3', ledger: 10_000, actor: 10_000, ledgerRunningTotal: 10_000, bills: { ledger: 2, actor: 3 }, missing: [] },
        { accountId: 'acct_released', pool: 'pool-3', ledger: 10_000, actor: 10_000, ledgerRunningTotal: 10_000, bills: { ledger: 1, actor: 2 }, missing: [] },
      ],
    });
  });

  it('when an actor\'s record is from before the count (no bills in it), then its count stays unknown and only its balance is compared', async () => {
    const actorId = fundsHoldActorId('acct_old');
    const old: FundsState = { balance: '10000', holds: {}, reminderDueAt: null };
    await db.actorState.put(`${FUNDS_HOLD_ACTOR_TYPE}\u0000${actorId}\u0000${STATE_KEY}`, old);
    // The ledger has the credit that made that balance (a bill the actor never counted).
    await ledger.append(billingEvent('credit:acct_old:pool-3:c', clock, { kind: 'credit', accountId: 'acct_old', pool: 'pool-3', balanceDelta: 10_000, amount: 10_000, reference: 'c' }));
    const account = new FundsHoldClient(host).of('acct_old');
    await account.reserve({ holdId: 'h-old', amount: 500, ttlMs: 60_000, ...meta });
    await account.release({ holdId: 'h-old', reason: 'client_gone' });
    expect(await account.ledgerFigures()).toEqual({ balance: 10_000, bills: null });
    expect(await ledger.account('acct_old', 'pool-3')).toMatchObject({ bills: 2, fundsBills: 2 });
    expect((await run()).differences.filter((d) => d.accountId === 'acct_old')).toEqual([]);
  });

  it('when chats are settled and released on one account while reconciliation runs, then it reports no difference', async () => {
    const account = new FundsHoldClient(host).of('acct_busy');
    await account.credit({ amount: 1_000_000_000, reference: 'c' });
    let running = true;
    let n = 0;
    const chats = Array.from({ length: 4 }, async () => {
      while (running) {
        const holdId = `busy-${n++}`;
        await account.reserve({ holdId, amount: 500, ttlMs: 60_000, ...meta });
        if (n % 3 === 0) await account.release({ holdId, reason: 'client_gone' });
        else await account.settle({ holdId, lines: output(7) });
      }
    });
    try {
      for (let i = 0; i < 20; i++) {
        const differences = (await run()).differences.filter((d) => d.accountId === 'acct_busy');
        expect(differences).toEqual([]);
      }
    } finally {
      running = false;
      await Promise.all(chats);
    }
    expect(n).toBeGreaterThan(20);
  });
});
