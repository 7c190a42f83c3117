// Key spend records (key-spend.ts) on the embedded host with a real local database: counters an
// earlier version kept in the FundsHold's hot record move to the keys' own records on the first
// turn, and go on counting there.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACTOR_CLASSES } from '../host/registry';
import { EmbeddedActorHost } from '../runtime/embedded-host';
import { openLocalDb } from '../../lib/local-db';
import { periodStarts } from '../../lib/limits';
import { FundsHoldClient } from './client';
import { FUNDS_HOLD_ACTOR_TYPE, fundsHoldActorId } from './FundsHoldInterface';
import { KEY_SPEND_PREFIX } from './key-spend';
import { STATE_KEY, type FundsState } from './funds-state';

const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };

describe('key spend records', () => {
  it('when a hot record still holds key counters, then the first turn moves them to their own records and they go on counting', async () => {
    const db = openLocalDb(mkdtempSync(join(tmpdir(), 'key-spend-')));
    const actorId = fundsHoldActorId('acct_migrate');
    const key = (name: string) => `${FUNDS_HOLD_ACTOR_TYPE}\u0000${actorId}\u0000${name}`;
    const { day, month } = periodStarts(Date.now());
    const counter = (amount: string) => ({ day: { start: day, amount }, month: { start: month, amount }, total: amount });
    const old: FundsState = { balance: '10000', holds: {}, reminderDueAt: null, spent: counter('700'), keySpent: { key_old: counter('700') } };
    await db.actorState.put(key(STATE_KEY), old);
    const host = new EmbeddedActorHost({ db, publish: async () => undefined });
    for (const cls of ACTOR_CLASSES) host.register(cls);
    await host.start();
    try {
      const funds = new FundsHoldClient(host).of('acct_migrate');
      const limited = { apiKeyId: 'key_old', key: { spend_per_day: 1000 } };
      await expect(funds.reserve({ holdId: 'h1', amount: 301, ttlMs: 60_000, ...meta, spend: limited, spendKeyId: 'key_old' })).rejects.toMatchObject({ code: 'spend_limit_exceeded', extra: expect.objectContaining({ spent: 700 }) });
      // A refused turn commits nothing, the move included; the next turn that commits moves them.
      expect(db.actorState.get(key(STATE_KEY))).toHaveProperty('keySpent');
      await funds.reserve({ holdId: 'h2', amount: 300, ttlMs: 60_000, ...meta, spend: limited, spendKeyId: 'key_old' });
      expect(db.actorState.get(key(STATE_KEY))).not.toHaveProperty('keySpent');
      expect(db.actorState.get(key(`${KEY_SPEND_PREFIX}key_old`))).toEqual(counter('700'));
      await funds.settle({ holdId: 'h2', lines: [{ unit: 'TEXT_OUTPUT', quantity: 250, unitPrice: 1 }] });
      expect(db.actorState.get(key(`${KEY_SPEND_PREFIX}key_old`))).toEqual(counter('950'));
    } finally {
      await host.close();
      await db.close();
    }
  });
});
