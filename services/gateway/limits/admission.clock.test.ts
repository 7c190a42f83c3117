// Rate headers when the gateway instance's clock and the Account actor's differ (on Dapr they are
// different processes, often different hosts): a window's reset is the actor's, so the headers
// tell it from the actor's clock, and a 429's x-ratelimit-reset agrees with its Retry-After.

import { AccountClient } from '../../../actors/account/client';
import { GatewayError } from '../../../lib/errors';
import { startEmbeddedActors, type ActorHostUnderTest } from '../../../test/support/actor-hosts';
import type { Caller } from '../middleware/auth';
import { RateAdmission } from './admission';

let host: ActorHostUnderTest;
// The actor's clock: 30 s into a minute, whatever the gateway's clock (Date.now) says.
const ACTOR_NOW = Date.UTC(2026, 10, 29, 12, 0, 30);

beforeAll(async () => {
  host = await startEmbeddedActors('admission-clock-', { now: () => ACTOR_NOW });
});
afterAll(async () => {
  await host.close();
});

describe('rate headers on the actor clock', () => {
  it('when a call is refused over a rate, then x-ratelimit-reset and Retry-After tell the same wait, and an admitted call tells the same reset', async () => {
    const accounts = new AccountClient(host.invoker);
    const accountId = 'acct_clock_headers';
    await accounts.of(accountId).setLimits({ limits: { requests_per_minute: 1 } });
    const caller: Caller = { family: 'api_key', accountId, apiKeyId: 'key_1', spendKeyId: 'key_1', scopes: new Set(), limits: { account: { requests_per_minute: 1 } } };
    const admission = new RateAdmission(accounts);
    const admitted = await admission.admit(caller, 0, 'openai');
    expect(admitted!.headers).toMatchObject({ 'x-ratelimit-reset-requests': '30s' });
    const refused = await admission.admit(caller, 0, 'openai').then(() => undefined, (error: unknown) => error as GatewayError);
    expect(refused?.headers).toMatchObject({ 'retry-after': '30', 'x-ratelimit-reset-requests': '30s' });
  });
});
