// Rate admission against the real Account actor on the embedded host: a rotation chain counts in
// one window, a call refused after admission gives its request and tokens back and is answered
// with the rate headers of its wire, and a call bigger than a whole tokens_per_minute is refused
// as too large (413), never told to retry.

import { AccountClient } from '../../../actors/account/client';
import type { AccountApi, NewApiKey } from '../../../actors/account/AccountInterface';
import { GatewayError } from '../../../lib/errors';
import type { Limits } from '../../../lib/limits';
import { startEmbeddedActors, type ActorHostUnderTest } from '../../../test/support/actor-hosts';
import type { Caller } from '../middleware/auth';
import { countedRequest, GIVE_BACK_WAIT_MS, RateAdmission } from './admission';

let host: ActorHostUnderTest;
let accounts: AccountClient;
let admission: RateAdmission;
let n = 0;

beforeAll(async () => {
  host = await startEmbeddedActors('admission-');
  accounts = new AccountClient(host.invoker);
  admission = new RateAdmission(accounts, (error) => {
    throw error;
  });
});
afterAll(async () => {
  await host.close();
});

/** Rate windows are whole minutes of the clock: a case that counts starts well inside one. */
async function awayFromMinuteEdge(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
const hash = (i: number) => i.toString(16).padStart(64, '0');
const newKey = (apiKeyId: string, i: number): NewApiKey => ({ apiKeyId, hash: hash(i), prefix: `sk-payg-${i}`, name: null, scopes: [], expiresAt: null });

/** A new account with one key under `limits` (the actor's record and the caller's projection alike). */
async function limitedKey(limits: Limits): Promise<{ accountId: string; caller: Caller }> {
  const accountId = `acct_admission_${++n}`;
  const apiKeyId = `key_admission_${n}`;
  await accounts.of(accountId).addKey(newKey(apiKeyId, n));
  await accounts.of(accountId).setLimits({ apiKeyId, limits });
  return { accountId, caller: { family: 'api_key', accountId, apiKeyId, spendKeyId: apiKeyId, scopes: new Set(), limits: { key: limits } } };
}

const refusalOf = (promise: Promise<unknown>) => promise.then(() => { throw new Error('admitted'); }, (error: unknown) => error as GatewayError);

describe('rate admission', () => {
  it('when a key is rotated, then its successor counts in the chain\'s window (during the grace too), and the usage read tells the chain\'s count', async () => {
    await awayFromMinuteEdge();
    const { accountId, caller } = await limitedKey({ requests_per_minute: 2 });
    expect(await admission.admit(caller, 10, 'openai')).not.toBeNull();
    await accounts.of(accountId).rotateKey({ apiKeyId: caller.apiKeyId!, successor: { apiKeyId: `${caller.apiKeyId}_next`, hash: hash(1000 + n), prefix: 'sk-payg-next' }, graceMs: 3600_000 });
    // The successor's projection: its own id, the chain's first key as its spend key, the same limits.
    const successor: Caller = { ...caller, apiKeyId: `${caller.apiKeyId}_next`, spendKeyId: caller.apiKeyId };
    expect((await admission.admit(successor, 10, 'openai'))!.headers).toMatchObject({ 'x-ratelimit-remaining-requests': '0' });
    for (const who of [successor, caller]) {
      expect(await refusalOf(admission.admit(who, 10, 'openai'))).toMatchObject({ code: 'rate_limit_exceeded', param: 'requests_per_minute' });
    }
    expect(await admission.usage(successor)).toMatchObject({ key: { requests: 2, tokens: 20 } });
  });

  it('when an admitted call is refused before anything is held, then its request and tokens go back and the refusal carries the headers as they are after that', async () => {
    await awayFromMinuteEdge();
    const { caller } = await limitedKey({ requests_per_minute: 2, tokens_per_minute: 1000 });
    const admitted = (await admission.admit(caller, 300, 'openai'))!;
    expect(admitted.headers).toMatchObject({ 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-remaining-tokens': '700' });
    const refused = (await admitted.refused(new GatewayError('insufficient_funds', 'not enough'))) as GatewayError;
    expect(refused).toMatchObject({ code: 'insufficient_funds', status: 402 });
    expect(refused.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '2', 'x-ratelimit-remaining-tokens': '1000', 'x-ratelimit-reset-requests': expect.stringMatching(/^\d+s$/) });
    // Given back before the refusal is answered: the next call finds the window as the headers told.
    expect(await admission.usage(caller)).toMatchObject({ account: { requests: 0, tokens: 0 }, key: { requests: 0, tokens: 0 } });
    // The Anthropic wire's names; an error that is not the gateway's is left as it is.
    const anthropic = (await admission.admit(caller, 100, 'anthropic'))!;
    const told = (await anthropic.refused(new GatewayError('actor_unavailable', 'down'))) as GatewayError;
    expect(told.headers).toMatchObject({ 'anthropic-ratelimit-requests-limit': '2', 'anthropic-ratelimit-requests-remaining': '2', 'anthropic-ratelimit-tokens-remaining': '1000' });
    expect(told.headers?.['x-ratelimit-remaining-requests']).toBeUndefined();
    const other = new Error('not ours');
    expect(await (await admission.admit(caller, 100, 'openai'))!.refused(other)).toBe(other);
    expect(await admission.usage(caller)).toMatchObject({ key: { requests: 0, tokens: 0 } });
  });

  it('when a counted request turns out to be a replay (its first attempt made the order meanwhile), then its request goes back and its answer tells the window after that', async () => {
    await awayFromMinuteEdge();
    const { caller } = await limitedKey({ requests_per_minute: 2 });
    const replay = await countedRequest(admission, caller, async () => ({ replayed: true }), (result) => result.replayed);
    expect(replay.headers).toMatchObject({ 'x-ratelimit-remaining-requests': '2' });
    const made = await countedRequest(admission, caller, async () => ({ replayed: false }), (result) => result.replayed);
    expect(made.headers).toMatchObject({ 'x-ratelimit-remaining-requests': '1' });
    expect(await admission.usage(caller)).toMatchObject({ key: { requests: 1 } });
  });

  /** Rate admission by the real Account actors, but with its give-backs sent through `correctTokens`. */
  const withGiveBack = (correctTokens: (request: Parameters<AccountApi['correctTokens']>[0]) => Promise<void>) => new RateAdmission({
    of: (accountId: string) => {
      const actor = accounts.of(accountId);
      return { admit: (request: Parameters<AccountApi['admit']>[0]) => actor.admit(request), correctTokens };
    },
  } as unknown as AccountClient);

  it('when a refused call gives its request back, then the refusal is answered only once the window has it, so the client\'s next call finds it (through any instance)', async () => {
    await awayFromMinuteEdge();
    const { caller } = await limitedKey({ requests_per_minute: 1 });
    // The give-back takes a while on its way to the actor (another instance's sidecar, a busy actor).
    const slow = withGiveBack(async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return accounts.of(caller.accountId).correctTokens(request);
    });
    const admitted = (await slow.admit(caller, 0, 'openai'))!;
    await admitted.refused(new GatewayError('insufficient_funds', 'not enough'));
    expect((await admission.admit(caller, 0, 'openai'))!.headers).toMatchObject({ 'x-ratelimit-remaining-requests': '0' });
  });

  it('when the give-back cannot reach the Account actor in time, then the refusal is answered after GIVE_BACK_WAIT_MS all the same, with its own error', async () => {
    await awayFromMinuteEdge();
    const { caller } = await limitedKey({ requests_per_minute: 5 });
    const stuck = withGiveBack(() => new Promise<void>(() => undefined));
    const admitted = (await stuck.admit(caller, 0, 'openai'))!;
    const started = Date.now();
    const refused = (await admitted.refused(new GatewayError('actor_unavailable', 'down'))) as GatewayError;
    expect(refused).toMatchObject({ code: 'actor_unavailable', status: 503 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(GIVE_BACK_WAIT_MS - 50);
    expect(Date.now() - started).toBeLessThan(GIVE_BACK_WAIT_MS + 1000);
  });

  it('when a call\'s tokens alone are above the whole tokens_per_minute, then 413 payload_too_large naming it, without Retry-After, nothing counted; a call that only has to wait gets 429', async () => {
    await awayFromMinuteEdge();
    const { caller } = await limitedKey({ tokens_per_minute: 1000 });
    const tooBig = await refusalOf(admission.admit(caller, 2000, 'anthropic'));
    expect(tooBig).toMatchObject({ code: 'payload_too_large', status: 413, param: 'tokens_per_minute' });
    expect(tooBig.message).toContain('can never be admitted');
    expect(tooBig.headers).toMatchObject({ 'anthropic-ratelimit-tokens-limit': '1000', 'anthropic-ratelimit-tokens-remaining': '1000' });
    expect(tooBig.headers?.['retry-after']).toBeUndefined();
    expect(await admission.usage(caller)).toMatchObject({ key: { requests: 0, tokens: 0 } });
    await admission.admit(caller, 600, 'openai');
    const wait = await refusalOf(admission.admit(caller, 600, 'openai'));
    expect(wait).toMatchObject({ code: 'rate_limit_exceeded', status: 429, param: 'tokens_per_minute' });
    expect(Number(wait.headers?.['retry-after'])).toBeGreaterThan(0);
    // The account's limit counts the same way.
    const account = { ...caller, limits: { account: { tokens_per_minute: 500 } } };
    await accounts.of(caller.accountId).setLimits({ limits: { tokens_per_minute: 500 } });
    expect(await refusalOf(admission.admit(account, 501, 'openai'))).toMatchObject({ code: 'payload_too_large', param: 'tokens_per_minute' });
  });
});
