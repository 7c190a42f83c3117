// The FundsHold lease contract (openLease, leaseBatch): the same cases against every actor host.
// A lease locks part of the available balance for one gateway instance; its carved holds are
// settled in batches with the same ledger rows as holds; it expires like a hold.

import { randomUUID } from 'node:crypto';
import type { CarvedHold, LeaseBatchOutcome, UsageLine } from '../../actors/funds-hold/FundsHoldInterface';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import { MAX_ENDED_RANGES } from '../../actors/funds-hold/funds-state';
import { eventually } from '../support/eventually';
import { startedHost, type HostUnderTest } from './funds-hold.contract';
import type { RouteRecord } from '../../lib/route-record';

const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };
const usage = (input: number, output: number): UsageLine[] => [{ unit: 'TEXT_INPUT', quantity: input, unitPrice: 1 }, { unit: 'TEXT_OUTPUT', quantity: output, unitPrice: 2 }];
const carved = (amount: number): CarvedHold => ({ holdId: randomUUID(), amount, ...meta });
const route: RouteRecord = { upstream: 'b', attempts: [{ upstream: 'a', outcome: 'rate_limited', durationMs: 15 }, { upstream: 'b', outcome: 'served', durationMs: 230 }] };

export function fundsLeaseContract(hostName: string, start: () => Promise<HostUnderTest>): void {
  describe(`FundsHold leases on the ${hostName} host`, () => {
    const t = startedHost(start);
    /** A fresh account credited 100,000 with a lease of 10,000 open on it. */
    const leasedAccount = async () => {
      const id = t.account();
      const funds = t.client.of(id);
      await funds.credit({ amount: 100_000, reference: 'c' });
      const leaseId = randomUUID();
      await funds.openLease({ leaseId, amount: 10_000, minAmount: 1, ttlMs: 60_000 });
      return { id, funds, leaseId };
    };

    it('when a lease is asked, then at most a quarter of the available balance is granted, refused below minAmount, idempotent by id', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 10_000, reference: 'c' });
      const leaseId = randomUUID();
      expect(await funds.openLease({ leaseId, amount: 4000, minAmount: 100, ttlMs: 60_000 })).toMatchObject({ state: 'open', amount: 2500, charged: 0, available: 7500 });
      // The same id again answers the same lease and grants nothing more.
      expect(await funds.openLease({ leaseId, amount: 4000, minAmount: 100, ttlMs: 60_000 })).toMatchObject({ state: 'open', amount: 2500, available: 7500 });
      // A quarter of 7,500 is 1,875: below minAmount 2,000 it is refused and nothing changes.
      expect(await funds.openLease({ leaseId: randomUUID(), amount: 4000, minAmount: 2000, ttlMs: 60_000 })).toMatchObject({ state: 'refused', amount: 0, available: 7500 });
      expect(await funds.getBalance()).toMatchObject({ balance: 10_000, held: 0, leased: 2500, available: 7500, openLeases: 1 });
      // A per-request reserve sees only what the lease left.
      await expect(funds.reserve({ holdId: randomUUID(), amount: 7501, ttlMs: 60_000, ...meta })).rejects.toMatchObject({ code: 'insufficient_funds' });
      await expect(funds.openLease({ leaseId: randomUUID(), amount: 100, minAmount: 1, ttlMs: 0 })).rejects.toMatchObject({ code: 'invalid_request' });
    });

    it('when carved holds are settled in a batch, then each is charged as a hold would be (never above its amount), with the same ledger rows, once', async () => {
      const { id, funds, leaseId } = await leasedAccount();
      const [a, b, c] = [carved(1000), carved(50), carved(500)];
      const batch = { leaseId, ttlMs: 60_000, settle: [{ ...a, lines: usage(10, 20) }, { ...b, lines: usage(100, 100) }], release: [{ ...c, reason: 'provider_failed' }] };
      const outcome = await funds.leaseBatch(batch);
      expect(outcome.settled.map((r) => r.outcome)).toEqual([
        expect.objectContaining({ holdId: a.holdId, state: 'settled', charged: 50 }),
        expect.objectContaining({ holdId: b.holdId, state: 'settled', charged: 50 }),
      ]);
      expect(outcome.released[0].outcome).toMatchObject({ holdId: c.holdId, state: 'released', charged: 0 });
      expect(outcome.lease).toMatchObject({ state: 'open', amount: 10_000, charged: 100, balance: 99_900 });
      // A retried batch answers the same and charges nothing more.
      expect((await funds.leaseBatch(batch)).settled.map((r) => r.outcome?.charged)).toEqual([50, 50]);
      expect(await funds.getBalance()).toMatchObject({ balance: 99_900, held: 0, leased: 9900, available: 90_000 });
      // Closed: the rest returns to available.
      expect((await funds.leaseBatch({ leaseId, ttlMs: 60_000, close: true })).lease).toMatchObject({ state: 'closed', charged: 100, available: 99_900 });
      expect(await funds.getBalance()).toMatchObject({ balance: 99_900, leased: 0, available: 99_900, openLeases: 0 });
      expect((await funds.leaseBatch({ leaseId, ttlMs: 60_000, close: true })).lease).toMatchObject({ state: 'closed' });
      // A carved hold that ended cannot end otherwise.
      const again = await funds.leaseBatch({ leaseId, ttlMs: 60_000, release: [{ ...a, reason: 'x' }] });
      expect(again.released[0].error).toMatchObject({ code: 'hold_state_conflict' });
      if (t.host.ledgerHas) {
        for (const event of [`${a.holdId}:charge`, `${a.holdId}:usage`, `${b.holdId}:charge`, `${c.holdId}:release`]) {
          expect(await eventually(() => t.host.ledgerHas!(event), Boolean)).toBe(true);
        }
      }
      if (t.host.ledgerBalance) expect(await eventually(() => t.host.ledgerBalance!(id), (v) => v === 99_900)).toBe(99_900);
    });

    it('when one item of a batch has usage no amount can price, then that item alone is refused (its settle invalid_request, its progress dropped) and the others land', async () => {
      const { id, funds, leaseId } = await leasedAccount();
      const [good, bad, running, wild] = [carved(500), carved(500), carved(500), carved(500)];
      const huge: UsageLine[] = [{ unit: 'TEXT_INPUT', quantity: 10_000_000_000_000, unitPrice: 1000 }];
      const negative = [{ unit: 'TEXT_OUTPUT', quantity: -5, unitPrice: 2 }] as unknown as UsageLine[];
      const answer = await funds.leaseBatch({
        leaseId, ttlMs: 60_000,
        progress: [{ ...running, lines: usage(10, 5) }, { ...wild, lines: negative }],
        settle: [{ ...bad, lines: huge }, { ...good, lines: usage(10, 20) }],
      });
      expect(answer.settled.map((r) => [r.holdId, r.outcome?.charged ?? r.error?.code])).toEqual([[bad.holdId, 'invalid_request'], [good.holdId, 50]]);
      // The actor stays sound: its next turns work, and closing the lease charges the good progress (20), not the dropped one.
      expect(await funds.getBalance()).toMatchObject({ balance: 100_000 - 50 });
      expect((await t.client.of(id).leaseBatch({ leaseId, ttlMs: 60_000, close: true })).lease).toMatchObject({ state: 'closed', charged: 50 + 20 });
      expect(await funds.getBalance()).toMatchObject({ balance: 100_000 - 70, leased: 0 });
    });

    it('when numbered carves end out of order over several batches, then each is charged once; retried batches answer the same, also after a restart (nothing in memory)', async () => {
      const { id, leaseId } = await leasedAccount();
      const funds = () => t.client.of(id);
      // Numbered as a gateway numbers them: 0, 1, 2… in the order of carving.
      const holds = Array.from({ length: 12 }, (_, carve) => ({ ...carved(500), carve }));
      const settle = (hold: (typeof holds)[number]) => ({ ...hold, lines: usage(10, 20) });
      const batches = [
        { leaseId, ttlMs: 60_000, settle: [settle(holds[3]), settle(holds[0])], release: [{ ...holds[7], reason: 'provider_failed' }] },
        { leaseId, ttlMs: 60_000, progress: [{ ...holds[5], lines: usage(10, 1) }], settle: [settle(holds[1]), settle(holds[2]), settle(holds[11])] },
        { leaseId, ttlMs: 60_000, settle: [settle(holds[4]), settle(holds[5]), settle(holds[6]), settle(holds[8])], release: [{ ...holds[9], reason: 'client_left' }] },
      ];
      const answers: LeaseBatchOutcome[] = [];
      for (const batch of batches) answers.push(await funds().leaseBatch(batch));
      const charged = 9 * 50;
      expect(answers.at(-1)!.lease).toMatchObject({ state: 'open', charged, balance: 100_000 - charged });
      const again = async () => {
        for (const [i, batch] of batches.entries()) {
          const answer = await funds().leaseBatch(batch);
          // The same endings (the balance they report is today's).
          const endings = (results: LeaseBatchOutcome['settled']) => results.map((r) => ({ holdId: r.holdId, state: r.outcome?.state, charged: r.outcome?.charged }));
          expect(endings(answer.settled)).toEqual(endings(answers[i].settled));
          expect(endings(answer.released)).toEqual(endings(answers[i].released));
        }
        expect(await funds().getBalance()).toMatchObject({ balance: 100_000 - charged, leased: 10_000 - charged });
        // An ended carve cannot end otherwise.
        expect((await funds().leaseBatch({ leaseId, ttlMs: 60_000, release: [{ ...holds[1], reason: 'x' }] })).released[0].error).toMatchObject({ code: 'hold_state_conflict' });
      };
      await again();
      expect(t.host.restart).toBeDefined();
      t.client = new FundsHoldClient(await t.host.restart!());
      await again();
      // The one never ended (10) settles once, after all that.
      expect((await funds().leaseBatch({ leaseId, ttlMs: 60_000, settle: [settle(holds[10])] })).lease).toMatchObject({ charged: charged + 50 });
    });

    it('when a lease stops counting (its carves end too far out of order), then endings recorded before and after are each found again: retried settles answer the same and charge once', async () => {
      const { id, leaseId } = await leasedAccount();
      const funds = () => t.client.of(id);
      const settleOf = (carve: number) => ({ ...carved(30), carve, lines: usage(1, 1) });
      // Every other number: each its own range, past the counted ones (MAX_ENDED_RANGES) mid-batch.
      const scattered = Array.from({ length: 2 * MAX_ENDED_RANGES + 4 }, (_, i) => settleOf(2 * i));
      const first = await funds().leaseBatch({ leaseId, ttlMs: 60_000, settle: scattered.slice(0, MAX_ENDED_RANGES + 2) });
      const second = await funds().leaseBatch({ leaseId, ttlMs: 60_000, settle: scattered.slice(MAX_ENDED_RANGES + 2) });
      const charged = scattered.length * 3;
      expect(second.lease).toMatchObject({ charged, balance: 100_000 - charged });
      for (const [batch, answer] of [[scattered.slice(0, MAX_ENDED_RANGES + 2), first], [scattered.slice(MAX_ENDED_RANGES + 2), second]] as const) {
        const again = await funds().leaseBatch({ leaseId, ttlMs: 60_000, settle: batch });
        expect(again.settled.map((r) => [r.holdId, r.outcome?.state, r.outcome?.charged])).toEqual(answer.settled.map((r) => [r.holdId, 'settled', 3]));
      }
      const late = settleOf(1);
      for (let i = 0; i < 2; i++) expect((await funds().leaseBatch({ leaseId, ttlMs: 60_000, settle: [late] })).settled[0].outcome).toMatchObject({ state: 'settled', charged: 3 });
      expect(await funds().getBalance()).toMatchObject({ balance: 100_000 - charged - 3 });
    });

    it('when a batch item is malformed, then the whole batch is refused and nothing changes; an item with bad lines is refused alone', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 10_000, reference: 'c' });
      const leaseId = randomUUID();
      await funds.openLease({ leaseId, amount: 1000, minAmount: 1, ttlMs: 60_000 });
      const good = { ...carved(100), lines: usage(1, 1) };
      const nameless = { amount: 100, ...meta, holdId: '', lines: usage(1, 1) };
      await expect(funds.leaseBatch({ leaseId, ttlMs: 60_000, settle: [good, nameless] })).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(funds.leaseBatch({ leaseId: randomUUID(), ttlMs: 60_000 })).rejects.toMatchObject({ code: 'hold_not_found' });
      expect(await funds.getBalance()).toMatchObject({ balance: 10_000, leased: 1000 });
      const bogus = { ...carved(100), lines: [{ unit: 'BOGUS', quantity: 1, unitPrice: 1 }] as never };
      const answer = await funds.leaseBatch({ leaseId, ttlMs: 60_000, settle: [good, bogus] });
      expect(answer.settled.map((r) => r.outcome?.charged ?? r.error?.code)).toEqual([3, 'invalid_request']);
      expect(await funds.getBalance()).toMatchObject({ balance: 10_000 - 3 });
    });

    it('when carved settles carry routes, then each usage row shows its own; a bad route refuses its item alone, the others settle', async () => {
      const { id, funds, leaseId } = await leasedAccount();
      const [routed, bad, plain] = [carved(1000), carved(1000), carved(1000)];
      const outcome = await funds.leaseBatch({ leaseId, ttlMs: 60_000, settle: [
        { ...routed, lines: usage(10, 20), route },
        { ...bad, lines: usage(10, 20), route: { upstream: 'b', attempts: Array.from({ length: 17 }, () => route.attempts[1]) } },
        { ...plain, lines: usage(1, 2) },
      ] });
      expect(outcome.settled).toEqual([
        { holdId: routed.holdId, outcome: expect.objectContaining({ state: 'settled', charged: 50 }) },
        { holdId: bad.holdId, error: { code: 'invalid_request', message: expect.stringContaining('route.attempts') } },
        { holdId: plain.holdId, outcome: expect.objectContaining({ state: 'settled', charged: 5 }) },
      ]);
      expect(outcome.lease).toMatchObject({ charged: 55, balance: 99_945 });
      // The refused item changed nothing: it settles later, once.
      expect((await funds.leaseBatch({ leaseId, ttlMs: 60_000, settle: [{ ...bad, lines: usage(10, 20) }] })).settled[0].outcome).toMatchObject({ state: 'settled', charged: 50 });
      // Every host under this contract shows its console: the route must be seen there.
      expect(t.host.consoleUsage).toBeDefined();
      const { page } = await eventually(() => t.host.consoleUsage!(id), (u) => u.page.total === 6);
      const routes = Object.fromEntries(page.items.map((item) => [item.id, 'route' in item ? item.route : undefined]));
      expect(routes).toEqual({
        [`${routed.holdId}:usage:TEXT_INPUT`]: route, [`${routed.holdId}:usage:TEXT_OUTPUT`]: route,
        [`${bad.holdId}:usage:TEXT_INPUT`]: undefined, [`${bad.holdId}:usage:TEXT_OUTPUT`]: undefined,
        [`${plain.holdId}:usage:TEXT_INPUT`]: undefined, [`${plain.holdId}:usage:TEXT_OUTPUT`]: undefined,
      });
    });

    it('when its gateway stops renewing a lease, then its expiry charges each carved hold for its progress (the newest record, never a settled one) and returns the rest', async () => {
      const id = t.account();
      const funds = t.client.of(id);
      await funds.credit({ amount: 100_000, reference: 'c' });
      const leaseId = randomUUID();
      await funds.openLease({ leaseId, amount: 20_000, minAmount: 1, ttlMs: 1500 });
      const [running, settled, silent] = [carved(5000), carved(5000), carved(5000)];
      await funds.leaseBatch({ leaseId, ttlMs: 1500, progress: [{ ...running, lines: usage(10, 100) }, { ...settled, lines: usage(10, 5) }] });
      await funds.leaseBatch({ leaseId, ttlMs: 1500, progress: [{ ...running, lines: usage(10, 200) }, { ...running, lines: usage(10, 150) }] });
      await funds.leaseBatch({ leaseId, ttlMs: 1500, settle: [{ ...settled, lines: usage(10, 8) }] });
      // A late record of the settled hold (a redelivered older batch) records nothing.
      await funds.leaseBatch({ leaseId, ttlMs: 1500, progress: [{ ...settled, lines: usage(10, 5) }, { ...silent, lines: [] }] });
      const after = await eventually(() => funds.getBalance(), (b) => b.openLeases === 0, 30_000);
      const charged = 26 + (10 + 400);
      expect(after).toMatchObject({ balance: 100_000 - charged, held: 0, leased: 0, available: 100_000 - charged });
      // The lease answers its ending; a settle of the running hold finds it expired: the rest is platform-borne.
      const late = await funds.leaseBatch({ leaseId, ttlMs: 1500, settle: [{ ...running, lines: usage(10, 230), route }, { ...silent, lines: usage(10, 3) }] });
      expect(late.lease).toMatchObject({ state: 'expired', charged });
      expect(late.settled.map((r) => r.outcome)).toEqual([
        expect.objectContaining({ state: 'expired', charged: 410 }),
        expect.objectContaining({ state: 'expired', charged: 0 }),
      ]);
      expect(await funds.getBalance()).toMatchObject({ balance: 100_000 - charged });
      if (t.host.ledgerHas) {
        expect(await eventually(() => t.host.ledgerHas!(`${running.holdId}:charge`), Boolean)).toBe(true);
        expect(await eventually(() => t.host.ledgerHas!(`${running.holdId}:platform-borne`), Boolean)).toBe(true);
        expect(await eventually(() => t.host.ledgerHas!(`${silent.holdId}:platform-borne`), Boolean)).toBe(true);
      }
      if (t.host.ledgerBalance) expect(await eventually(() => t.host.ledgerBalance!(id), (v) => v === 100_000 - charged)).toBe(100_000 - charged);
      // The usage recorded after expiry as platform-borne carries the late settle's route.
      const borne = `${running.holdId}:usage-borne:TEXT_OUTPUT`;
      const { page } = await eventually(() => t.host.consoleUsage!(id), (u) => u.page.items.some((item) => item.id === borne));
      expect(page.items.find((item) => item.id === borne)).toMatchObject({ quantity: 30, charged: 0, platformBorne: true, route });
      expect(page.items.find((item) => item.id === `${running.holdId}:usage:TEXT_OUTPUT`)).not.toHaveProperty('route');
    });

    it('when a key gets a spend limit while its calls carved from a lease run, then those whose progress is recorded count as the key\'s held', async () => {
      const { funds, leaseId } = await leasedAccount();
      // Carved while the key had no limit; one has recorded progress, the other not yet.
      const running = { ...carved(3000), apiKeyId: 'key_carving' };
      const young = { ...carved(2000), apiKeyId: 'key_carving' };
      const another = { ...carved(4000), apiKeyId: 'key_other' };
      await funds.leaseBatch({ leaseId, ttlMs: 60_000, progress: [{ ...running, lines: usage(10, 5) }, { ...another, lines: usage(10, 5) }] });
      expect((await funds.getSpend({ apiKeyId: 'key_carving' })).key).toMatchObject({ held: 3000, spend_total: 0 });
      // The key's new limit: 5,000 in all. 3,000 held by the running call leaves 2,000.
      const limited = { apiKeyId: 'key_carving', key: { spend_total: 5000 } };
      await expect(funds.reserve({ holdId: randomUUID(), amount: 2001, ttlMs: 60_000, ...meta, spend: limited, spendKeyId: 'key_carving' })).rejects.toMatchObject({ code: 'spend_limit_exceeded', extra: expect.objectContaining({ scope: 'key', held: 3000 }) });
      const fits = randomUUID();
      await funds.reserve({ holdId: fits, amount: 2000, ttlMs: 60_000, ...meta, spend: limited, spendKeyId: 'key_carving' });
      // Once the running call is settled, what it was charged counts instead of its hold.
      await funds.leaseBatch({ leaseId, ttlMs: 60_000, settle: [{ ...running, lines: usage(10, 20) }], release: [{ ...young, reason: 'x' }] });
      expect((await funds.getSpend({ apiKeyId: 'key_carving' })).key).toMatchObject({ held: 2000, spend_total: 50 });
    });

    it('when an idle lease locks funds under an account spend limit, then the 402 and the spend read tell apart what leases lock from what open holds hold; once the lease is returned the call fits', async () => {
      const { funds, leaseId } = await leasedAccount();
      // A call carved from the lease was charged 50; the lease, idle now, still locks 9,950.
      await funds.leaseBatch({ leaseId, ttlMs: 60_000, settle: [{ ...carved(1000), lines: usage(10, 20) }] });
      const open = randomUUID();
      await funds.reserve({ holdId: open, amount: 100, ttlMs: 60_000, ...meta });
      const limited = { apiKeyId: null, account: { spend_per_day: 1000 } };
      const refused = await funds.reserve({ holdId: randomUUID(), amount: 500, ttlMs: 60_000, ...meta, spend: limited }).then(() => undefined, (error: unknown) => error);
      expect(refused).toMatchObject({ code: 'spend_limit_exceeded', param: 'spend_per_day', extra: { scope: 'account', spent: 50, held: 10_050, leased: 9950, required: 500 } });
      expect((refused as Error).message).toContain('10050 held (100 by open holds, 9950 locked by funds leases');
      expect((await funds.getSpend({ apiKeyId: null })).account).toEqual({ spend_per_day: 50, spend_per_month: 50, spend_total: 50, held: 10_050, leased: 9950 });
      // The lease returned (as its gateway does once it is idle): only the open hold counts.
      await funds.leaseBatch({ leaseId, ttlMs: 60_000, close: true });
      expect((await funds.getSpend({ apiKeyId: null })).account).toMatchObject({ held: 100, leased: 0 });
      await funds.reserve({ holdId: randomUUID(), amount: 500, ttlMs: 60_000, ...meta, spend: limited });
    });

    it('when batches renew a lease, then it outlives its first ttl', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 10_000, reference: 'c' });
      const leaseId = randomUUID();
      await funds.openLease({ leaseId, amount: 1000, minAmount: 1, ttlMs: 1500 });
      await funds.leaseBatch({ leaseId, ttlMs: 6000 });
      await new Promise((r) => setTimeout(r, 2500));
      expect(await funds.getBalance()).toMatchObject({ leased: 1000, openLeases: 1 });
      expect(await eventually(() => funds.getBalance(), (b) => b.openLeases === 0, 30_000)).toMatchObject({ balance: 10_000, leased: 0, available: 10_000 });
    });

    it('when leases and holds race on one balance, then what is locked never exceeds it and the balance never goes negative', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 10_000, reference: 'c' });
      const outcomes = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => (i % 2
        ? funds.openLease({ leaseId: randomUUID(), amount: 3000, minAmount: 300, ttlMs: 60_000 }).then((l) => (l.state === 'open' ? l.amount : 0))
        : funds.reserve({ holdId: randomUUID(), amount: 700, ttlMs: 60_000, ...meta }).then((h) => h.amount))));
      const locked = outcomes.reduce((sum, o) => sum + (o.status === 'fulfilled' ? o.value : 0), 0);
      const view = await funds.getBalance();
      expect(view.held + view.leased).toBe(locked);
      expect(locked).toBeLessThanOrEqual(10_000);
      expect(view.available).toBe(10_000 - locked);
      expect(view.available).toBeGreaterThanOrEqual(0);
    });
  });
}
