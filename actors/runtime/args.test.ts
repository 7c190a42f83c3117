// The host's check of an actor call's argument (args.ts), on both hosts: a call whose argument
// does not fit its method's schema is refused with invalid_request naming the field, before the
// turn, and changes nothing.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorId, DaprClient } from '@dapr/dapr';
import { FundsHold } from '../funds-hold/FundsHold';
import { FundsHoldClient } from '../funds-hold/client';
import { openLocalDb } from '../../lib/local-db';
import { DaprSidecar } from '../../lib/dapr-http';
import { startFakeSidecar } from '../../test/support/fake-dapr-sidecar';
import { ACTOR_CLASSES } from '../host/registry';
import { daprActorClass } from './dapr-host';
import { EmbeddedActorHost } from './embedded-host';
import type { ActorCallResult } from './port';

const badReserve = { holdId: 42, amount: 1000, ttlMs: 60_000, requestId: 'r', model: 'm', profileId: 'p' };

describe('actor arguments checked by the host', () => {
  it('when an actor class is registered, then it names a schema for every method it exposes, and nothing else', () => {
    for (const cls of ACTOR_CLASSES) expect(Object.keys(cls.args).sort()).toEqual([...cls.methods].sort());
  });

  it('when a reserve names its hold with a number on the embedded host, then it is refused with invalid_request naming holdId, and nothing is held', async () => {
    const db = openLocalDb(mkdtempSync(join(tmpdir(), 'actor-args-')));
    const host = new EmbeddedActorHost({ db, publish: async () => undefined });
    host.register(FundsHold);
    await host.start();
    try {
      const funds = new FundsHoldClient(host).of('acct_args');
      await funds.credit({ amount: 5000, reference: 'seed' });
      await expect(funds.reserve(badReserve as never)).rejects.toMatchObject({ code: 'invalid_request', param: 'holdId' });
      expect(await funds.getBalance()).toMatchObject({ balance: 5000, held: 0, openHolds: 0 });
    } finally {
      await host.close();
      await db.close();
    }
  });

  it('when the same call reaches the Dapr host adapter, then it answers the same refusal and writes nothing', async () => {
    const { port, store, close } = await startFakeSidecar();
    const sidecar = new DaprSidecar('127.0.0.1', port);
    try {
      const Adapter = daprActorClass(FundsHold, async () => undefined, sidecar);
      const actor = new Adapter(new DaprClient({ daprHost: '127.0.0.1', daprPort: String(port) }), new ActorId('acct_args:pool-3')) as unknown as
        Record<string, (arg: unknown) => Promise<ActorCallResult<unknown>>>;
      const refused = await actor.reserve(badReserve);
      expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_request', param: 'holdId' } });
      expect([...store.keys()].filter((key) => key.startsWith('FundsHold/acct_args'))).toEqual([]);
    } finally {
      await sidecar.close();
      await close();
    }
  });
});
