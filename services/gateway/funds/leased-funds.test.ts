// The gateway's funds-lease layer against the real FundsHold actor on the embedded host (a real
// local database and ledger): holds carved locally, settles batched, small balances on
// per-request holds, idle leases returned, a dead instance's leases expiring with its progress
// charged, and no overdraw across two instances leasing on one account. Actor calls are counted
// at the invoker, where a Dapr call would cross two sidecars.

import { randomUUID } from 'node:crypto';
import { FundsHoldClient } from '../../../actors/funds-hold/client';
import type { UsageLine } from '../../../actors/funds-hold/FundsHoldInterface';
import type { ActorInvoker } from '../../../actors/runtime/port';
import { GatewayError } from '../../../lib/errors';
import { startEmbeddedActors, type ActorHostUnderTest } from '../../../test/support/actor-hosts';
import { eventually } from '../../../test/support/eventually';
import { PendingSettlements } from '../chat/pending-settlements';
import { openHeldCall } from '../chat/held-call';
import { CHAT_TOKEN_COUNTING } from '../chat/use-case';
import type { ChatDeps, ChatInput } from '../chat/prepare';
import type { Caller } from '../middleware/auth';
import type { TokenUsage } from '../../../providers/port';
import { LeasedFunds } from './leased-funds';
import pino from 'pino';

jest.setTimeout(60_000);

const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };
const usage = (input: number, output: number): UsageLine[] => [{ unit: 'TEXT_INPUT', quantity: input, unitPrice: 1 }, { unit: 'TEXT_OUTPUT', quantity: output, unitPrice: 2 }];
const ESTIMATE = 1000;
const COST = 10 + 2 * 100;

/** Counts actor calls by method; `fail` makes the next calls of a method fail as an unreachable sidecar would. */
class CountingInvoker implements ActorInvoker {
  readonly calls = new Map<string, number>();
  readonly fail = new Map<string, number>();
  /** The next calls of a method reach the actor (and commit) but their answers are lost. */
  readonly loseAnswer = new Map<string, number>();
  constructor(private readonly inner: () => ActorInvoker) {}
  invoke<R>(actorType: string, actorId: string, method: string, arg: unknown): Promise<R> {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    const failing = this.fail.get(method) ?? 0;
    if (failing > 0) {
      this.fail.set(method, failing - 1);
      return Promise.reject(new GatewayError('actor_unavailable', 'the sidecar did not answer'));
    }
    const losing = this.loseAnswer.get(method) ?? 0;
    if (losing > 0) {
      this.loseAnswer.set(method, losing - 1);
      return this.inner().invoke<R>(actorType, actorId, method, arg).then(() => Promise.reject(new GatewayError('actor_unavailable', 'the answer was lost')));
    }
    return this.inner().invoke<R>(actorType, actorId, method, arg);
  }
  count(method: string): number {
    return this.calls.get(method) ?? 0;
  }
}

describe('funds leases in the gateway', () => {
  let host: ActorHostUnderTest;
  const instances: LeasedFunds[] = [];
  const account = () => `acct_${randomUUID().slice(0, 8)}`;
  const start = (settings: { ttlMs?: number; idleMs?: number; maxAmount?: number } = {}) => {
    const invoker = new CountingInvoker(() => host.invoker);
    const leases = new LeasedFunds(new FundsHoldClient(invoker), { ttlMs: 60_000, idleMs: 60_000, maxAmount: 1_000_000, ...settings });
    instances.push(leases);
    return { invoker, leases, direct: new FundsHoldClient(host.invoker) };
  };

  beforeAll(async () => {
    host = await startEmbeddedActors('leased-funds-');
  });
  afterAll(async () => {
    await Promise.all(instances.map((l) => l.close(100)));
    await host?.close();
  });

  it('when many calls reserve and settle on a funded account, then holds are carved with one lease call and settles go in fewer batches than calls, charged exactly', async () => {
    const id = account();
    const { invoker, leases, direct } = start();
    await direct.of(id).credit({ amount: 10_000_000, reference: 'c' });
    const funds = leases.of(id);
    const holds = Array.from({ length: 40 }, () => randomUUID());
    await Promise.all(holds.map((holdId) => funds.reserve({ holdId, amount: ESTIMATE, ttlMs: 60_000, ...meta })));
    expect(invoker.count('reserve')).toBe(0);
    expect(invoker.count('openLease')).toBe(1);
    expect(await direct.of(id).getBalance()).toMatchObject({ balance: 10_000_000, held: 0, openLeases: 1 });
    const outcomes = await Promise.all(holds.map((holdId) => funds.settle({ holdId, lines: usage(10, 100) })));
    expect(outcomes.every((o) => o.state === 'settled' && o.charged === COST)).toBe(true);
    expect(invoker.count('leaseBatch')).toBeLessThan(40);
    expect(invoker.count('settle')).toBe(0);
    expect(await direct.of(id).getBalance()).toMatchObject({ balance: 10_000_000 - 40 * COST, held: 0 });
    // The same rows per call as a hold's settle: its charge and its usage.
    expect(await host.ledgerHas(`${holds[7]}:charge`)).toBe(true);
    expect(await host.ledgerHas(`${holds[7]}:usage`)).toBe(true);
    expect((await host.ledger(id)).balance).toBe(10_000_000 - 40 * COST);
  });

  it('when a lease is nearly used up, then the next one is asked for ahead: the call that finds the first full carves from it, and the first is returned', async () => {
    const id = account();
    const { invoker, leases, direct } = start();
    await direct.of(id).credit({ amount: 10_000_000, reference: 'c' });
    const funds = leases.of(id);
    const call = async () => {
      const holdId = randomUUID();
      await funds.reserve({ holdId, amount: ESTIMATE, ttlMs: 60_000, ...meta });
      expect(await funds.settle({ holdId, lines: usage(10, 100) })).toMatchObject({ state: 'settled', charged: COST });
    };
    // The first lease is 8 holds' worth (8,000) and each call leaves 210 charged: the 25th carve
    // (4,830 + 210 charged, 1,000 carved) leaves less than a quarter of it; at the 34th no hold fits.
    for (let i = 0; i < 24; i++) await call();
    expect(invoker.count('openLease')).toBe(1);
    await call();
    expect(invoker.count('openLease')).toBe(2);
    expect(await eventually(() => direct.of(id).getBalance(), (b) => b.openLeases === 2, 2000)).toMatchObject({ openLeases: 2 });
    for (let i = 0; i < 15; i++) await call();
    // The 34th call and the ones after carved from the lease asked ahead: no third ask.
    expect(invoker.count('openLease')).toBe(2);
    expect(invoker.count('reserve')).toBe(0);
    // The first lease, drained, has been returned: its rest is available again.
    expect(await eventually(() => direct.of(id).getBalance(), (b) => b.openLeases === 1, 2000)).toMatchObject({ balance: 10_000_000 - 40 * COST, held: 0, openLeases: 1 });
  });

  it('when a carved hold is settled with a route, then the route goes in its batch to the usage rows; a bad route is refused to its caller before any batch', async () => {
    const id = account();
    const { invoker, leases, direct } = start();
    await direct.of(id).credit({ amount: 1_000_000, reference: 'c' });
    const funds = leases.of(id);
    const [routed, refused] = [randomUUID(), randomUUID()];
    for (const holdId of [routed, refused]) await funds.reserve({ holdId, amount: ESTIMATE, ttlMs: 60_000, ...meta });
    const route = { upstream: 'b', attempts: [{ upstream: 'a', outcome: 'refused', durationMs: 3 }, { upstream: 'b', outcome: 'served', durationMs: 250 }] };
    await expect(funds.settle({ holdId: refused, lines: usage(10, 100), route: { ...route, upstream: 'a' } })).rejects.toMatchObject({ code: 'invalid_request', param: 'route.attempts.1.upstream' });
    expect(invoker.count('leaseBatch')).toBe(0);
    expect(await funds.settle({ holdId: routed, lines: usage(10, 100), route })).toMatchObject({ state: 'settled', charged: COST });
    expect([invoker.count('reserve'), invoker.count('settle'), invoker.count('leaseBatch')]).toEqual([0, 0, 1]);
    const { page } = await host.consoleUsage(id);
    expect(page.items.map((item) => [item.id, 'route' in item ? item.route : undefined])).toEqual([[`${routed}:usage:TEXT_OUTPUT`, route], [`${routed}:usage:TEXT_INPUT`, route]]);
  });

  it('when the balance is small, then the lease is refused and each call takes a hold of its own (nothing locked from other instances)', async () => {
    const id = account();
    const { invoker, leases, direct } = start();
    await direct.of(id).credit({ amount: 7 * ESTIMATE, reference: 'c' });
    const funds = leases.of(id);
    const holdId = randomUUID();
    await funds.reserve({ holdId, amount: ESTIMATE, ttlMs: 60_000, ...meta });
    expect(invoker.count('openLease')).toBe(1);
    expect(invoker.count('reserve')).toBe(1);
    expect(await direct.of(id).getBalance()).toMatchObject({ held: ESTIMATE, leased: 0, openHolds: 1, openLeases: 0 });
    // Within the pause after a refusal, no lease is asked for again.
    const second = randomUUID();
    await funds.reserve({ holdId: second, amount: ESTIMATE, ttlMs: 60_000, ...meta });
    expect(invoker.count('openLease')).toBe(1);
    expect(await funds.settle({ holdId, lines: usage(10, 100) })).toMatchObject({ state: 'settled', charged: COST });
    expect(await funds.release({ holdId: second, reason: 'provider_failed' })).toMatchObject({ state: 'released' });
    expect(invoker.count('settle')).toBe(1);
    expect(await direct.of(id).getBalance()).toMatchObject({ balance: 7 * ESTIMATE - COST, held: 0 });
  });

  it('when a lease is refused with less available than the call needs, then the call is refused 402 on that answer, without a reserve of its own', async () => {
    const id = account();
    const { invoker, leases, direct } = start();
    await direct.of(id).credit({ amount: ESTIMATE - 1, reference: 'c' });
    await expect(leases.of(id).reserve({ holdId: randomUUID(), amount: ESTIMATE, ttlMs: 60_000, ...meta })).rejects.toMatchObject({ code: 'insufficient_funds', extra: { required: ESTIMATE, available: ESTIMATE - 1 } });
    expect(invoker.count('openLease')).toBe(1);
    expect(invoker.count('reserve')).toBe(0);
    expect(await direct.of(id).getBalance()).toMatchObject({ balance: ESTIMATE - 1, held: 0, leased: 0 });
  });

  it('when a call\'s hold is too large for the largest lease, then it takes a hold of its own without asking, and smaller calls still lease', async () => {
    const id = account();
    const { invoker, leases, direct } = start({ maxAmount: 4 * ESTIMATE });
    await direct.of(id).credit({ amount: 1_000_000, reference: 'c' });
    const funds = leases.of(id);
    const big = randomUUID();
    await funds.reserve({ holdId: big, amount: 3 * ESTIMATE, ttlMs: 60_000, ...meta });
    expect(invoker.count('openLease')).toBe(0);
    expect(invoker.count('reserve')).toBe(1);
    await funds.reserve({ holdId: randomUUID(), amount: ESTIMATE, ttlMs: 60_000, ...meta });
    expect(invoker.count('openLease')).toBe(1);
    expect(invoker.count('reserve')).toBe(1);
    expect(await direct.of(id).getBalance()).toMatchObject({ held: 3 * ESTIMATE, leased: 4 * ESTIMATE, openLeases: 1 });
  });

  it('when the actor cannot be reached for a lease, then the calls waiting for it fail as a reserve would, without a second wait', async () => {
    const id = account();
    const { invoker, leases, direct } = start();
    await direct.of(id).credit({ amount: 1_000_000, reference: 'c' });
    invoker.fail.set('openLease', 1);
    const calls = [0, 1].map(() => leases.of(id).reserve({ holdId: randomUUID(), amount: ESTIMATE, ttlMs: 60_000, ...meta }));
    for (const call of calls) await expect(call).rejects.toMatchObject({ code: 'actor_unavailable' });
    expect(invoker.count('openLease')).toBe(1);
    expect(invoker.count('reserve')).toBe(0);
    // Reachable again: the next call leases.
    await leases.of(id).reserve({ holdId: randomUUID(), amount: ESTIMATE, ttlMs: 60_000, ...meta });
    expect(await direct.of(id).getBalance()).toMatchObject({ held: 0, openLeases: 1 });
  });

  it('when a lease has had no calls for its idle time, then it is returned: its rest is available again', async () => {
    const id = account();
    const { leases, direct } = start({ idleMs: 300 });
    await direct.of(id).credit({ amount: 1_000_000, reference: 'c' });
    const funds = leases.of(id);
    const holdId = randomUUID();
    await funds.reserve({ holdId, amount: ESTIMATE, ttlMs: 60_000, ...meta });
    expect((await direct.of(id).getBalance()).leased).toBeGreaterThan(0);
    await funds.settle({ holdId, lines: usage(10, 100) });
    const after = await eventually(() => direct.of(id).getBalance(), (b) => b.openLeases === 0, 10_000);
    expect(after).toMatchObject({ balance: 1_000_000 - COST, held: 0, leased: 0, available: 1_000_000 - COST });
    // The instance forgets the lease once the actor's answer to its return has come back: just after the actor committed it.
    expect(await eventually(async () => leases.openLeases, (n) => n === 0, 2000)).toBe(0);
  });

  it('when an account\'s funds are asked for again, even after its lease was returned and forgotten, then the same source serves it and carves again', async () => {
    const id = account();
    const { invoker, leases, direct } = start({ idleMs: 300 });
    await direct.of(id).credit({ amount: 1_000_000, reference: 'c' });
    const funds = leases.of(id);
    expect(leases.of(id)).toBe(funds);
    expect(leases.of(account())).not.toBe(funds);
    const first = randomUUID();
    await funds.reserve({ holdId: first, amount: ESTIMATE, ttlMs: 60_000, ...meta });
    await funds.settle({ holdId: first, lines: usage(10, 100) });
    await eventually(async () => leases.openLeases, (n) => n === 0, 10_000);
    expect(leases.of(id)).toBe(funds);
    const second = randomUUID();
    await funds.reserve({ holdId: second, amount: ESTIMATE, ttlMs: 60_000, ...meta });
    expect(invoker.count('openLease')).toBe(2);
    expect(await funds.settle({ holdId: second, lines: usage(10, 100) })).toMatchObject({ state: 'settled', charged: COST });
    expect((await direct.of(id).getBalance()).balance).toBe(1_000_000 - 2 * COST);
  });

  it('when a batch does not reach the actor or its answer is lost, then its settle is retried and charged once', async () => {
    const id = account();
    const { invoker, leases, direct } = start();
    await direct.of(id).credit({ amount: 1_000_000, reference: 'c' });
    const funds = leases.of(id);
    const holdId = randomUUID();
    await funds.reserve({ holdId, amount: ESTIMATE, ttlMs: 60_000, ...meta });
    invoker.fail.set('leaseBatch', 1);
    invoker.loseAnswer.set('leaseBatch', 1);
    const settlements = new PendingSettlements(pino({ level: 'silent' }), { firstDelayMs: 20, maxDelayMs: 50 });
    const settled = await settlements.run(holdId, () => funds.settle({ holdId, lines: usage(10, 100) }), () => funds.progress({ holdId, lines: [], ttlMs: 60_000 }));
    expect(settled).toMatchObject({ state: 'settled', charged: COST });
    // Not reached, committed with its answer lost, answered: charged once.
    expect(invoker.count('leaseBatch')).toBe(3);
    // While its last batch failed, a lease serves no new call: the call asks the actor (here a new lease).
    invoker.fail.set('leaseBatch', 1);
    const cut = randomUUID();
    await funds.reserve({ holdId: cut, amount: ESTIMATE, ttlMs: 60_000, ...meta });
    await expect(funds.release({ holdId: cut, reason: 'x' })).rejects.toMatchObject({ code: 'actor_unavailable' });
    const opened = invoker.count('openLease');
    await funds.reserve({ holdId: randomUUID(), amount: ESTIMATE, ttlMs: 60_000, ...meta });
    expect(invoker.count('openLease')).toBe(opened + 1);
    expect(await funds.release({ holdId: cut, reason: 'x' })).toMatchObject({ state: 'released' });
    expect(await direct.of(id).getBalance()).toMatchObject({ balance: 1_000_000 - COST });
  });

  it('when a call ends by a release whose batch does not reach the actor, then the release is retried until it lands and the idle lease is returned', async () => {
    const id = account();
    const { invoker, leases, direct } = start({ ttlMs: 4000, idleMs: 300 });
    await direct.of(id).credit({ amount: 1_000_000, reference: 'c' });
    const logger = pino({ level: 'silent' });
    const settlements = new PendingSettlements(logger, { firstDelayMs: 50, maxDelayMs: 100 });
    const deps = { funds: new FundsHoldClient(host.invoker), leases, settlements, logger, holdTtlMs: 4000, providerTimeoutMs: 60_000 } as unknown as ChatDeps;
    const caller = { accountId: id, family: 'api_key', apiKeyId: 'key_1', scopes: [] } as unknown as Caller;
    const input = { modelId: 'sim-chat', body: {}, bodyBytes: 2, caller, requestId: 'req-release', pool: 'pool-3', capabilities: [] } as ChatInput;
    const lines = (u: TokenUsage): UsageLine[] => usage(u.inputTokens, u.outputTokens);
    const held = await openHeldCall(deps, input, { estimate: ESTIMATE, tokenBound: 100, tokenCounting: CHAT_TOKEN_COUNTING, rateStyle: 'openai', modelId: 'sim-chat', profileId: 'p', lines, billed: () => {}, tokens: (u) => u.inputTokens + u.outputTokens });
    expect((await direct.of(id).getBalance()).openLeases).toBe(1);
    // The provider failed; the actor cannot be reached for the release's first two batches.
    invoker.fail.set('leaseBatch', 2);
    const batches = invoker.count('leaseBatch');
    await held.hold.release('provider_failed');
    held.ended();
    // Answered at once (the call's error need not wait), retried meanwhile: the carve ends, the lease goes back idle.
    const after = await eventually(() => direct.of(id).getBalance(), (b) => b.openLeases === 0, 10_000);
    expect(after).toMatchObject({ balance: 1_000_000, held: 0, leased: 0, available: 1_000_000 });
    expect(invoker.count('leaseBatch')).toBeGreaterThanOrEqual(batches + 3);
    expect(settlements.size).toBe(0);
    expect(leases.openLeases).toBe(0);
  });

  it('when an instance dies with carved holds, then its lease expires: each hold is charged for its recorded progress and the rest returns', async () => {
    const id = account();
    const { leases, direct } = start({ ttlMs: 1500 });
    await direct.of(id).credit({ amount: 1_000_000, reference: 'c' });
    const funds = leases.of(id);
    const [streaming, silent] = [randomUUID(), randomUUID()];
    await funds.reserve({ holdId: streaming, amount: ESTIMATE, ttlMs: 1500, ...meta });
    await funds.reserve({ holdId: silent, amount: ESTIMATE, ttlMs: 1500, ...meta });
    await funds.progress({ holdId: streaming, lines: usage(10, 60), ttlMs: 1500 });
    await funds.progress({ holdId: silent, lines: [], ttlMs: 1500 });
    // The instance is gone: no more renewals, no settles.
    await leases.close(0);
    const after = await eventually(() => direct.of(id).getBalance(), (b) => b.openLeases === 0, 20_000);
    expect(after).toMatchObject({ balance: 1_000_000 - 130, held: 0, leased: 0, available: 1_000_000 - 130 });
    expect(await eventually(() => host.ledgerHas(`${streaming}:charge`), Boolean)).toBe(true);
    expect((await host.ledger(id)).balance).toBe(1_000_000 - 130);
  });

  it('when two instances lease on one account and 400 calls race, then nothing is overdrawn and spent = admitted × cost', async () => {
    const id = account();
    const a = start();
    const b = start();
    const funds = [a.leases.of(id), b.leases.of(id)];
    await a.direct.of(id).credit({ amount: 100 * ESTIMATE, reference: 'c' });
    const results = await Promise.all(Array.from({ length: 400 }, async (_, i) => {
      const holdId = randomUUID();
      const f = funds[i % 2];
      try {
        await f.reserve({ holdId, amount: ESTIMATE, ttlMs: 60_000, ...meta });
      } catch (error) {
        expect(error).toMatchObject({ code: 'insufficient_funds' });
        return 0;
      }
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      const settled = await f.settle({ holdId, lines: usage(10, 100) });
      expect(settled.charged).toBe(COST);
      return 1;
    }));
    const admitted = results.reduce<number>((s, x) => s + x, 0);
    expect(admitted).toBeGreaterThan(50);
    const view = await a.direct.of(id).getBalance();
    expect(view.balance).toBe(100 * ESTIMATE - admitted * COST);
    expect(view.balance).toBeGreaterThanOrEqual(0);
    expect(view.held).toBe(0);
    expect((await host.ledger(id)).balance).toBe(view.balance);
  });
});
