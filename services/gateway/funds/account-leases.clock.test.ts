// A gateway instance's funds leases when its wall clock steps back (an NTP step) while the actor's
// clock runs on: the instance must go on renewing its lease and must never carve a call from a
// lease the actor has let expire (that call's whole usage would be borne by the platform). The
// instance's wall clock (Date.now), its monotonic clock (performance.now) and the actor's clock
// are three clocks the test moves.

import { randomUUID } from 'node:crypto';
import { FundsHoldClient } from '../../../actors/funds-hold/client';
import { startEmbeddedActors, type ActorHostUnderTest } from '../../../test/support/actor-hosts';
import { AccountLeases } from './account-leases';

jest.setTimeout(60_000);

const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };
const TTL_MS = 60_000;
const STEP_BACK_MS = 3_600_000;

let elapsed = 0;
const start = Date.now();
let wallOffset = 0;
const monotonicStart = performance.now();
let host: ActorHostUnderTest;

beforeAll(async () => {
  host = await startEmbeddedActors('lease-clock-', { now: () => start + elapsed });
  jest.spyOn(Date, 'now').mockImplementation(() => start + elapsed + wallOffset);
  jest.spyOn(performance, 'now').mockImplementation(() => monotonicStart + elapsed);
});
afterAll(async () => {
  jest.restoreAllMocks();
  await host.close();
});

describe('funds leases when the instance wall clock steps back', () => {
  it('when the wall clock steps back an hour while a lease is open, then the lease is still renewed and a later call is charged, not borne by the platform', async () => {
    const accountId = `acct_${randomUUID().slice(0, 8)}`;
    const direct = new FundsHoldClient(host.invoker).of(accountId);
    await direct.credit({ amount: 1_000_000, reference: 'seed' });
    const leases = new AccountLeases(direct, { ttlMs: TTL_MS, idleMs: 3_600_000, maxAmount: 100_000 });
    const call = async () => {
      const holdId = randomUUID();
      await leases.reserve({ holdId, amount: 1000, ttlMs: TTL_MS, ...meta });
      return leases.settle({ holdId, lines: [{ unit: 'TEXT_OUTPUT', quantity: 100, unitPrice: 1 }] });
    };
    expect(await call()).toMatchObject({ state: 'settled', charged: 100 });
    expect(leases.openLeases).toBe(1);
    wallOffset = -STEP_BACK_MS;
    // Two ttls pass, the instance's housekeeping running every second as its timer would.
    for (let s = 0; s < (2 * TTL_MS) / 1000; s++) {
      elapsed += 1000;
      leases.tick();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await call()).toMatchObject({ charged: 100 });
    expect((await direct.getBalance()).balance).toBe(1_000_000 - 200);
  });
});
