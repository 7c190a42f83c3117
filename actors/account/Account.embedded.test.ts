// The Account actor on the embedded host: keys recorded once each, listed newest first, revoked
// at the actor's clock, rotated with a grace (the successor keeps the old key's name, scopes and
// expiry), suspension; everything survives a restart.

import { startEmbeddedActors, type ActorHostUnderTest } from '../../test/support/actor-hosts';
import { AccountClient } from './client';
import { MAX_KEYS_PER_ACCOUNT, type NewApiKey } from './AccountInterface';

jest.setTimeout(60_000);

let host: ActorHostUnderTest;
let n = 0;

beforeAll(async () => {
  host = await startEmbeddedActors('account-');
});
afterAll(async () => {
  await host.close();
});

const account = () => new AccountClient(host.invoker).of(`acct_${++n}`);
/** Rate windows are whole minutes of the clock: a case that counts starts well inside one. */
async function awayFromMinuteEdge(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 3000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
const hash = (i: number) => i.toString(16).padStart(64, '0');
const key = (i: number, extra: Partial<NewApiKey> = {}): NewApiKey => ({ apiKeyId: `key_${i}`, hash: hash(i), prefix: `sk-payg-${i}`, name: null, scopes: [], expiresAt: null, ...extra });

describe('Account actor', () => {
  it('when keys are added, then they are listed newest first, and a repeated add answers the same entry', async () => {
    const a = account();
    const first = await a.addKey(key(1, { name: 'one', scopes: ['compat'] }));
    await a.addKey(key(2));
    expect(await a.addKey(key(1, { name: 'one', scopes: ['compat'] }))).toEqual(first);
    expect((await a.keys({})).keys.map((k) => k.apiKeyId)).toEqual(['key_2', 'key_1']);
    expect(first).toMatchObject({ name: 'one', scopes: ['compat'], revokedAt: null, rotatedFrom: null, rotatedTo: null, createdAt: expect.any(Number) });
    await expect(a.addKey(key(1, { hash: hash(99) }))).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('when a key is revoked, then it carries the revocation time and a repeat keeps the first; an unknown key is 404', async () => {
    const a = account();
    await a.addKey(key(3));
    const revoked = await a.revokeKey({ apiKeyId: 'key_3' });
    expect(revoked.revokedAt).toEqual(expect.any(Number));
    expect(revoked.revokedByOperator).toBe(revoked.revokedAt);
    expect(await a.revokeKey({ apiKeyId: 'key_3' })).toMatchObject({ revokedAt: revoked.revokedAt, revokedByOperator: revoked.revokedAt });
    await expect(a.revokeKey({ apiKeyId: 'key_none' })).rejects.toMatchObject({ code: 'api_key_not_found' });
  });

  it('when a key is rotated, then the successor has its name, scopes and expiry, the old key ends after the grace, and a repeat of the same rotation answers the same', async () => {
    const a = account();
    const expiresAt = Date.now() + 3600_000;
    await a.addKey(key(4, { name: 'svc', scopes: ['media'], expiresAt }));
    const request = { apiKeyId: 'key_4', successor: { apiKeyId: 'key_5', hash: hash(5), prefix: 'sk-payg-5' }, graceMs: 60_000 };
    const { old, successor } = await a.rotateKey(request);
    expect(successor).toMatchObject({ apiKeyId: 'key_5', name: 'svc', scopes: ['media'], expiresAt, rotatedFrom: 'key_4', revokedAt: null });
    expect(old).toMatchObject({ rotatedTo: 'key_5' });
    // Refused by its rotation's grace, not by a revocation call.
    expect(old.revokedByOperator).toBeUndefined();
    const graceEnds = old.revokedAt!;
    expect(graceEnds - successor.createdAt).toBe(60_000);
    expect(await a.rotateKey(request)).toEqual({ old: { ...old, revokedAt: graceEnds }, successor });
    // A revocation during the grace brings the end forward; a revoked key cannot be rotated.
    const now = (await a.revokeKey({ apiKeyId: 'key_4' })).revokedAt!;
    expect(now).toBeLessThan(graceEnds);
    await expect(a.rotateKey({ ...request, successor: { apiKeyId: 'key_6', hash: hash(6), prefix: 'sk-payg-6' } })).rejects.toMatchObject({ code: 'api_key_inactive' });
  });

  it('when an account is suspended and lifted, then the status says since when, and repeats change nothing', async () => {
    const a = account();
    expect(await a.status({})).toEqual({ suspendedAt: null });
    const suspended = await a.setSuspended({ suspended: true });
    expect(suspended.suspendedAt).toEqual(expect.any(Number));
    expect(await a.setSuspended({ suspended: true })).toEqual(suspended);
    // Lifted, the status names the suspension it lifted (its unsuspension's audit entry is named by it).
    expect(await a.setSuspended({ suspended: false })).toEqual({ suspendedAt: null, liftedSuspension: suspended.suspendedAt });
    expect(await a.setSuspended({ suspended: false })).toEqual({ suspendedAt: null, liftedSuspension: suspended.suspendedAt });
  });

  it('when the host restarts, then keys and status are still there', async () => {
    const id = `acct_restart_${++n}`;
    await new AccountClient(host.invoker).of(id).addKey(key(7));
    await new AccountClient(host.invoker).of(id).setSuspended({ suspended: true });
    const invoker = await host.restart();
    const again = new AccountClient(invoker).of(id);
    expect((await again.keys({})).keys.map((k) => k.apiKeyId)).toEqual(['key_7']);
    expect((await again.status({})).suspendedAt).toEqual(expect.any(Number));
  });

  it('when an account holds the most keys it may, then one more is refused', async () => {
    const a = account();
    for (let i = 0; i < MAX_KEYS_PER_ACCOUNT; i++) await a.addKey(key(10_000 + i));
    await expect(a.addKey(key(20_000))).rejects.toMatchObject({ code: 'api_key_limit_reached' });
  });

  it('when rates are limited, then calls are counted in the minute window of the actor clock, the tighter of account and key is told, and a refused call counts nothing', async () => {
    await awayFromMinuteEdge();
    const a = account();
    await a.addKey(key(30));
    await a.setLimits({ limits: { requests_per_minute: 3, tokens_per_minute: 1000 } });
    expect((await a.setLimits({ apiKeyId: 'key_30', limits: { requests_per_minute: 2 } })).limits).toEqual({ requests_per_minute: 2 });
    const first = await a.admit({ apiKeyId: 'key_30', tokens: 100 });
    expect(first).toMatchObject({ admitted: true, requests: { limit: 2, remaining: 1 }, tokens: { limit: 1000, remaining: 900 } });
    expect(first.requests!.resetAt - first.windowStart).toBe(60_000);
    expect(await a.admit({ apiKeyId: 'key_30', tokens: 100 })).toMatchObject({ admitted: true, requests: { remaining: 0 } });
    const refused = await a.admit({ apiKeyId: 'key_30', tokens: 100 });
    expect(refused).toMatchObject({ admitted: false, refused: { limit: 'requests_per_minute', scope: 'key', retryAfterMs: expect.any(Number) } });
    // The account still has one request of its three: another credential of the account gets it.
    expect(await a.admit({ apiKeyId: null, tokens: 100 })).toMatchObject({ admitted: true, requests: { limit: 3, remaining: 0 } });
    expect(await a.admit({ apiKeyId: null, tokens: 1 })).toMatchObject({ admitted: false, refused: { scope: 'account' } });
  });

  it('when the window is read, then it tells what it counted for the account and the key, and counts nothing', async () => {
    await awayFromMinuteEdge();
    const a = account();
    await a.addKey(key(31));
    await a.setLimits({ limits: { requests_per_minute: 10 } });
    expect(await a.rates({ apiKeyId: 'key_31' })).toMatchObject({ account: { requests: 0, tokens: 0 }, key: { requests: 0, tokens: 0 } });
    const admitted = await a.admit({ apiKeyId: 'key_31', tokens: 40 });
    await a.admit({ apiKeyId: null, tokens: 2 });
    const read = await a.rates({ apiKeyId: 'key_31' });
    expect(read).toEqual({ windowStart: admitted.windowStart, resetAt: admitted.windowStart + 60_000, account: { requests: 2, tokens: 42 }, key: { requests: 1, tokens: 40 } });
    // Reading counted nothing; a member token's read has no key.
    expect(await a.rates({ apiKeyId: null })).toEqual({ ...read, key: null });
  });

  it('when a call used fewer tokens than admitted, then the correction gives them back within its window', async () => {
    await awayFromMinuteEdge();
    const a = account();
    await a.setLimits({ limits: { tokens_per_minute: 1000 } });
    const first = await a.admit({ apiKeyId: null, tokens: 900 });
    expect(await a.admit({ apiKeyId: null, tokens: 200 })).toMatchObject({ admitted: false, refused: { limit: 'tokens_per_minute' } });
    await a.correctTokens({ apiKeyId: null, windowStart: first.windowStart, delta: -800 });
    expect(await a.admit({ apiKeyId: null, tokens: 200 })).toMatchObject({ admitted: true, tokens: { remaining: 700 } });
    // A correction for a window that has passed changes nothing.
    await a.correctTokens({ apiKeyId: null, windowStart: first.windowStart - 60_000, delta: -300 });
    expect((await a.admit({ apiKeyId: null, tokens: 0 })).tokens).toMatchObject({ remaining: 700 });
  });

  it('when a rotated key and its successor count as their chain (countAs), then both share one window: the rotation neither resets nor doubles the rate', async () => {
    await awayFromMinuteEdge();
    const a = account();
    await a.addKey(key(32));
    await a.setLimits({ apiKeyId: 'key_32', limits: { requests_per_minute: 2, tokens_per_minute: 100 } });
    expect(await a.admit({ apiKeyId: 'key_32', tokens: 10 })).toMatchObject({ admitted: true, requests: { remaining: 1 } });
    await a.rotateKey({ apiKeyId: 'key_32', successor: { apiKeyId: 'key_33', hash: hash(33), prefix: 'sk-payg-33' }, graceMs: 3600_000 });
    // The successor carries the limits and goes on with the chain's count; then both keys are over it.
    expect(await a.admit({ apiKeyId: 'key_33', tokens: 10, countAs: 'key_32' })).toMatchObject({ admitted: true, requests: { limit: 2, remaining: 0 }, tokens: { remaining: 80 } });
    expect(await a.admit({ apiKeyId: 'key_33', tokens: 10, countAs: 'key_32' })).toMatchObject({ admitted: false, refused: { limit: 'requests_per_minute', scope: 'key' } });
    expect(await a.admit({ apiKeyId: 'key_32', tokens: 10 })).toMatchObject({ admitted: false, refused: { limit: 'requests_per_minute', scope: 'key' } });
    expect((await a.rates({ apiKeyId: 'key_32' })).key).toEqual({ requests: 2, tokens: 20 });
    expect((await a.rates({ apiKeyId: 'key_33' })).key).toEqual({ requests: 0, tokens: 0 });
  });

  it('when a call\'s tokens alone are above a whole tokens_per_minute, then that limit is named (max below adds) before any other that is over', async () => {
    await awayFromMinuteEdge();
    const a = account();
    await a.addKey(key(34));
    await a.setLimits({ limits: { requests_per_minute: 1, tokens_per_minute: 10_000 } });
    await a.setLimits({ apiKeyId: 'key_34', limits: { tokens_per_minute: 1000 } });
    expect(await a.admit({ apiKeyId: 'key_34', tokens: 900 })).toMatchObject({ admitted: true });
    // The account's requests are used up and the key's tokens too, but 2,000 could never fit 1,000.
    const refused = await a.admit({ apiKeyId: 'key_34', tokens: 2000 });
    expect(refused).toMatchObject({ admitted: false, refused: { limit: 'tokens_per_minute', scope: 'key', max: 1000, adds: 2000 } });
    // A call that fits the limit, but not what is left of it now, is told which limit to wait for.
    expect(await a.admit({ apiKeyId: 'key_34', tokens: 200 })).toMatchObject({ admitted: false, refused: { limit: 'requests_per_minute', scope: 'account', max: 1, adds: 1 } });
    expect((await a.rates({ apiKeyId: 'key_34' })).key).toEqual({ requests: 1, tokens: 900 });
  });

  it('when an admitted call is given back (requests: -1), then its request and tokens leave the window it was counted in, and only that window', async () => {
    await awayFromMinuteEdge();
    const a = account();
    await a.addKey(key(35));
    await a.setLimits({ apiKeyId: 'key_35', limits: { requests_per_minute: 1 } });
    const admitted = await a.admit({ apiKeyId: 'key_35', tokens: 50 });
    expect(await a.admit({ apiKeyId: 'key_35', tokens: 50 })).toMatchObject({ admitted: false });
    await a.correctTokens({ apiKeyId: 'key_35', windowStart: admitted.windowStart, delta: -50, requests: -1 });
    expect(await a.rates({ apiKeyId: 'key_35' })).toMatchObject({ account: { requests: 0, tokens: 0 }, key: { requests: 0, tokens: 0 } });
    expect(await a.admit({ apiKeyId: 'key_35', tokens: 50 })).toMatchObject({ admitted: true, requests: { remaining: 0 } });
    // A give-back naming a window that has passed changes nothing in the current one.
    await a.correctTokens({ apiKeyId: 'key_35', windowStart: admitted.windowStart - 60_000, delta: -50, requests: -1 });
    expect(await a.rates({ apiKeyId: 'key_35' })).toMatchObject({ account: { requests: 1, tokens: 50 }, key: { requests: 1, tokens: 50 } });
  });

  it('when a limit is set to null, then it is removed; a rotated key keeps its limits', async () => {
    const a = account();
    await a.addKey(key(40));
    await a.setLimits({ apiKeyId: 'key_40', limits: { spend_total: 500, requests_per_minute: 5 } });
    expect((await a.setLimits({ apiKeyId: 'key_40', limits: { requests_per_minute: null } })).limits).toEqual({ spend_total: 500 });
    const { successor } = await a.rotateKey({ apiKeyId: 'key_40', successor: { apiKeyId: 'key_41', hash: hash(41), prefix: 'sk-payg-41' }, graceMs: 0 });
    expect(successor.limits).toEqual({ spend_total: 500 });
  });

  it('when an argument is malformed, then the host refuses it before the actor', async () => {
    await expect(account().addKey({ ...key(8), hash: 'not-a-hash' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(account().rotateKey({ apiKeyId: 'key_8', successor: { apiKeyId: 'key_9', hash: hash(9), prefix: 'p' }, graceMs: -1 })).rejects.toMatchObject({ code: 'invalid_request' });
    // A chain id is a key id; a give-back returns one request at most, never adds one.
    await expect(account().admit({ apiKeyId: 'key_8', tokens: 1, countAs: '' })).rejects.toMatchObject({ code: 'invalid_request' });
    for (const requests of [-2, 1]) await expect(account().correctTokens({ apiKeyId: null, windowStart: 0, delta: 0, requests })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

describe('Account actor: orders of the day', () => {
  it('when orders are counted, then the day admits up to the limit, a give-back of the same day frees one, and the next UTC day (of the actor clock) starts from none', async () => {
    let clock = Date.parse('2026-03-04T23:59:58.000Z');
    const timed = await startEmbeddedActors('account-orders-', { now: () => clock });
    try {
      const a = new AccountClient(timed.invoker).of('acct_orders');
      expect(await a.countOrder({ limit: 2 })).toEqual({ admitted: true, day: '2026-03-04', count: 1, limit: 2, retryAfterMs: 2000 });
      expect(await a.countOrder({ limit: 2 })).toMatchObject({ admitted: true, count: 2 });
      // Refused: nothing counted, and told when the day ends.
      expect(await a.countOrder({ limit: 2 })).toEqual({ admitted: false, day: '2026-03-04', count: 2, limit: 2, retryAfterMs: 2000 });
      await a.uncountOrder({ day: '2026-03-04' });
      expect(await a.countOrder({ limit: 2 })).toMatchObject({ admitted: true, count: 2 });
      clock += 2000; // midnight UTC
      // A give-back naming the day before changes nothing in the new one.
      await a.uncountOrder({ day: '2026-03-04' });
      expect(await a.countOrder({ limit: 2 })).toEqual({ admitted: true, day: '2026-03-05', count: 1, limit: 2, retryAfterMs: 86_400_000 });
      // A lower limit (another instance's setting) applies to what is counted.
      expect(await a.countOrder({ limit: 1 })).toMatchObject({ admitted: false, count: 1 });
      await expect(a.countOrder({ limit: 0 })).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(a.uncountOrder({ day: 'yesterday' })).rejects.toMatchObject({ code: 'invalid_request' });
      // Counted state survives a restart.
      await timed.restart();
      expect(await new AccountClient(timed.invoker).of('acct_orders').countOrder({ limit: 3 })).toMatchObject({ admitted: true, count: 2 });
    } finally {
      await timed.close();
    }
  });
});
