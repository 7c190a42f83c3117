// Hold expiry against the actors app behind a real daprd sidecar (Scheduler reminders): the
// actors app is killed across a hold's expiry and started again, or kills itself at a fault point
// (docs/testing.md) after an expiry reminder ran and before its state was saved.

import { randomUUID } from 'node:crypto';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import { holdExpiryContract } from '../contract/hold-expiry.contract';
import { startDaprActors } from '../support/actor-hosts';
import { eventually, passes } from '../support/eventually';

jest.setTimeout(240_000);

holdExpiryContract('Dapr', () => startDaprActors('hold-expiry-dapr-', 15000));

describe('an expiry reminder turn killed before its commit, on the Dapr host', () => {
  let host: Awaited<ReturnType<typeof startDaprActors>>;
  beforeAll(async () => {
    // Once per data directory: the restarted actors app runs on.
    host = await startDaprActors('crash-reminder-dapr-', 15100, { env: { GATEWAY_TEST_MODE: 'true', GATEWAY_FAULT_POINTS: 'reminder-before-commit:once' } });
  });
  afterAll(async () => {
    await host?.close();
  });

  const alive = (pid: number | undefined) => {
    try {
      return pid !== undefined && process.kill(pid, 0);
    } catch {
      return false;
    }
  };
  const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };

  it('when the actors app dies after an expiry reminder ran but before the state was saved, then once it is back that hold expires, and so does a hold taken after', async () => {
    const accountId = `acct_${randomUUID().slice(0, 8)}`;
    const funds = new FundsHoldClient(host.invoker).of(accountId);
    await funds.credit({ amount: 1000, reference: 'c' });
    const before = randomUUID();
    await funds.reserve({ holdId: before, amount: 100, ttlMs: 2000, ...meta });
    expect(await eventually(async () => alive(host.topology.pid('actors')), (up) => !up, 30_000)).toBe(false);
    // Down long enough for the Scheduler's own retries of that reminder to give up.
    await new Promise((r) => setTimeout(r, 10_000));
    await host.topology.restart('actors');
    expect(await eventually(() => host.ledgerHas(`${before}:release`), Boolean, 45_000)).toBe(true);

    const after = randomUUID();
    await passes(() => funds.reserve({ holdId: after, amount: 200, ttlMs: 2000, ...meta }), 30_000);
    expect(await eventually(() => host.ledgerHas(`${after}:release`), Boolean, 45_000)).toBe(true);
    expect(await funds.getBalance()).toMatchObject({ balance: 1000, held: 0, openHolds: 0 });
  });
});
