// Holds always expire, whatever happened to a reminder: the same cases against every actor host.
// The account is not touched while a hold should expire (no reserve, settle or balance read), so
// only the host's reminders can end it; the ledger tells when its release was delivered.
// On Dapr, the actors app down behind its running sidecar lost the one-shot reminder before the
// safety net; with the sidecar down too, the Scheduler kept the job (that case guards it).

import { randomUUID } from 'node:crypto';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import type { ActorHostUnderTest } from '../support/actor-hosts';
import { eventually, passes } from '../support/eventually';

const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };

export function holdExpiryContract(hostName: string, start: () => Promise<ActorHostUnderTest>): void {
  describe(`hold expiry on the ${hostName} host`, () => {
    let host: ActorHostUnderTest;
    beforeAll(async () => {
      host = await start();
    });
    afterAll(async () => {
      await host?.close();
    });

    for (const [what, sidecar] of [['host', false], ['host (on Dapr: the actors app and its sidecar)', true]] as const) {
      it(`when the ${what} is down for 15 s across a hold's expiry, then once it is back that hold expires, and so does a hold taken after`, async () => {
        const accountId = `acct_${randomUUID().slice(0, 8)}`;
        let funds = new FundsHoldClient(host.invoker).of(accountId);
        await funds.credit({ amount: 1000, reference: 'c' });
        const before = randomUUID();
        await funds.reserve({ holdId: before, amount: 100, ttlMs: 3000, ...meta });
        funds = new FundsHoldClient(await host.outage(15_000, { sidecar })).of(accountId);
        expect(await eventually(() => host.ledgerHas(`${before}:release`), Boolean, 45_000)).toBe(true);

        const after = randomUUID();
        // Idempotent by hold id: retried while a restarted Dapr sidecar is not yet reachable from the others.
        await passes(() => funds.reserve({ holdId: after, amount: 200, ttlMs: 2000, ...meta }), 30_000);
        expect(await eventually(() => host.ledgerHas(`${after}:release`), Boolean, 45_000)).toBe(true);
        expect(await funds.getBalance()).toMatchObject({ balance: 1000, held: 0, available: 1000, openHolds: 0 });
        expect((await host.ledger(accountId)).balance).toBe(1000);
      });
    }
  });
}
