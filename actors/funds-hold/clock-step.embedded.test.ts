// The limits kept in periods of the actor's clock (the FundsHold's spend per UTC day and month, the
// Account's rate window and orders per day) when that clock steps back across a period's start: an
// NTP step on the actors' host, or an actor placed on another host whose clock is a little behind.
// A count already made in the later period is never forgotten: the later period stays the current
// one until the clock is past it again. The embedded host runs on a clock the test moves.

import { randomUUID } from 'node:crypto';
import { AccountClient } from '../account/client';
import { startEmbeddedActors, type ActorHostUnderTest } from '../../test/support/actor-hosts';
import { FundsHoldClient } from './client';

jest.setTimeout(60_000);

const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };
const MIDNIGHT = Date.UTC(2026, 11, 1); // the first of a month: a day and a month begin
let clock = MIDNIGHT;
let host: ActorHostUnderTest;

beforeAll(async () => {
  host = await startEmbeddedActors('clock-step-', { now: () => clock });
});
afterAll(async () => {
  await host.close();
});

describe('spend limits when the actor clock steps back across midnight', () => {
  it('when a charge is made just after midnight and the clock steps back a second, then the day and month go on counting it and the limit holds', async () => {
    const funds = new FundsHoldClient(host.invoker).of(`acct_${randomUUID().slice(0, 8)}`);
    await funds.credit({ amount: 1_000_000, reference: 'seed' });
    const spend = { apiKeyId: null, account: { spend_per_day: 1000, spend_per_month: 1000 } };
    const call = async (holdId: string) => {
      await funds.reserve({ holdId, amount: 600, ttlMs: 60_000, ...meta, spend });
      await funds.settle({ holdId, lines: [{ unit: 'TEXT_OUTPUT', quantity: 600, unitPrice: 1 }] });
    };
    clock = MIDNIGHT + 500;
    await call('h1');
    clock = MIDNIGHT - 500; // stepped back a second: the clock reads the previous day and month
    await expect(call('h2')).rejects.toMatchObject({ code: 'spend_limit_exceeded' });
    expect((await funds.getSpend({ apiKeyId: null })).account).toMatchObject({ spend_per_day: 600, spend_per_month: 600 });
    clock = MIDNIGHT + 1500;
    await expect(call('h3')).rejects.toMatchObject({ code: 'spend_limit_exceeded' });
    expect((await funds.getBalance()).balance).toBe(1_000_000 - 600);
  });
});

describe('rate windows when the actor clock steps back across a minute', () => {
  it('when a window is full and the clock steps back into the previous minute, then the call is still refused', async () => {
    const account = new AccountClient(host.invoker).of(`acct_${randomUUID().slice(0, 8)}`);
    await account.setLimits({ limits: { requests_per_minute: 2 } });
    clock = MIDNIGHT + 60_000 + 200;
    expect((await account.admit({ apiKeyId: null, tokens: 0 })).admitted).toBe(true);
    expect((await account.admit({ apiKeyId: null, tokens: 0 })).admitted).toBe(true);
    expect((await account.admit({ apiKeyId: null, tokens: 0 })).admitted).toBe(false);
    clock = MIDNIGHT + 60_000 - 300;
    const refused = await account.admit({ apiKeyId: null, tokens: 0 });
    expect(refused).toMatchObject({ admitted: false, refused: { retryAfterMs: 60_300 } });
    clock = MIDNIGHT + 60_000 + 400;
    expect((await account.admit({ apiKeyId: null, tokens: 0 })).admitted).toBe(false);
    // The next minute counts afresh.
    clock = MIDNIGHT + 120_000;
    expect((await account.admit({ apiKeyId: null, tokens: 0 })).admitted).toBe(true);
  });

  it('when the clock steps back by more than a window, then a fresh window counts (no window that outlasts its minute by the step)', async () => {
    const account = new AccountClient(host.invoker).of(`acct_${randomUUID().slice(0, 8)}`);
    await account.setLimits({ limits: { requests_per_minute: 1 } });
    clock = MIDNIGHT + 3_600_000;
    expect((await account.admit({ apiKeyId: null, tokens: 0 })).admitted).toBe(true);
    clock = MIDNIGHT;
    expect((await account.admit({ apiKeyId: null, tokens: 0 })).admitted).toBe(true);
  });
});

describe('orders per day when the actor clock steps back across midnight', () => {
  it('when the day is full and the clock steps back a second, then the next order is still refused', async () => {
    const account = new AccountClient(host.invoker).of(`acct_${randomUUID().slice(0, 8)}`);
    clock = MIDNIGHT + 500;
    expect(await account.countOrder({ limit: 1 })).toMatchObject({ admitted: true });
    clock = MIDNIGHT - 500;
    expect(await account.countOrder({ limit: 1 })).toMatchObject({ admitted: false });
    clock = MIDNIGHT + 1500;
    expect(await account.countOrder({ limit: 1 })).toMatchObject({ admitted: false, count: 1 });
  });
});
