// The FundsHold contract: the same cases against every actor host (embedded and Dapr).

import { randomUUID } from 'node:crypto';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import type { ActorInvoker } from '../../actors/runtime/port';
import { eventually } from '../support/eventually';
import type { ConsoleUsage } from '../support/actor-hosts';
import type { RouteRecord } from '../../lib/route-record';

export interface HostUnderTest {
  invoker: ActorInvoker;
  /** Restarts the host (process or apps and sidecars); returns the invoker to use after. */
  restart?: () => Promise<ActorInvoker>;
  /** The balance the ledger holds for an account (after its events were delivered). */
  ledgerBalance?: (accountId: string) => Promise<number>;
  /** Whether the ledger has appended an event (by id). */
  ledgerHas?: (eventId: string) => Promise<boolean>;
  /** How many bill rows FundsHold's events made in the ledger for an account (undefined: not counted). */
  ledgerFundsBills?: (accountId: string) => Promise<number | undefined>;
  /** The Prometheus exposition of the process that runs the actors. */
  metrics?: () => Promise<string>;
  /** An account's usage as the console shows it (first page and both exports). */
  consoleUsage?: (accountId: string) => Promise<ConsoleUsage>;
  close(): Promise<void>;
}

export interface ContractHost {
  host: HostUnderTest;
  client: FundsHoldClient;
  /** A fresh account id: each case has its own FundsHold actor. */
  account(): string;
}

/** In a describe block: the host started once before its cases and closed after, with a FundsHold client over it. */
export function startedHost(start: () => Promise<HostUnderTest>): ContractHost {
  const t = { account: () => `acct_${randomUUID().slice(0, 8)}` } as ContractHost;
  beforeAll(async () => {
    t.host = await start();
    t.client = new FundsHoldClient(t.host.invoker);
  });
  afterAll(async () => {
    await t.host?.close();
  });
  return t;
}

const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };

/** payg_platform_borne_nano_usd_total{reason="settle_after_expiry"} in an exposition (0 when absent). */
function bornePlatform(exposition: string): number {
  const line = exposition.split('\n').find((l) => l.startsWith('payg_platform_borne_nano_usd_total{reason="settle_after_expiry"}'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

export function fundsHoldContract(hostName: string, start: () => Promise<HostUnderTest>): void {
  describe(`FundsHold contract on the ${hostName} host`, () => {
    const t = startedHost(start);

    it('when credited, then the balance grows; the same reference again changes nothing; another amount conflicts', async () => {
      const funds = t.client.of(t.account());
      expect(await funds.credit({ amount: 1000, reference: 'r1' })).toMatchObject({ applied: true, balance: 1000 });
      expect(await funds.credit({ amount: 1000, reference: 'r1' })).toMatchObject({ applied: false, balance: 1000 });
      await expect(funds.credit({ amount: 5, reference: 'r1' })).rejects.toMatchObject({ code: 'credit_reference_reused' });
      expect(await funds.getBalance()).toMatchObject({ balance: 1000, held: 0, available: 1000 });
    });

    it('when debited, then the balance falls once per reference, never below what open holds leave available, and the ledger has the debit', async () => {
      const accountId = t.account();
      const funds = t.client.of(accountId);
      await funds.credit({ amount: 1000, reference: 'c' });
      await funds.reserve({ holdId: 'h-debit', amount: 600, ttlMs: 60_000, ...meta });
      await expect(funds.debit({ amount: 401, reference: 'd1' })).rejects.toMatchObject({ code: 'insufficient_funds' });
      expect(await funds.debit({ amount: 400, reference: 'd1' })).toMatchObject({ applied: true, balance: 600 });
      expect(await funds.debit({ amount: 400, reference: 'd1' })).toMatchObject({ applied: false, balance: 600 });
      await expect(funds.debit({ amount: 1, reference: 'd1' })).rejects.toMatchObject({ code: 'debit_reference_reused' });
      expect(await funds.getBalance()).toMatchObject({ balance: 600, held: 600, available: 0 });
      await funds.release({ holdId: 'h-debit', reason: 'test' });
      if (t.host.ledgerHas) expect(await eventually(() => t.host.ledgerHas!(`debit:${accountId}:pool-3:d1`), Boolean)).toBe(true);
      if (t.host.ledgerBalance) expect(await eventually(() => t.host.ledgerBalance!(accountId), (b) => b === 600)).toBe(600);
    });

    it('when holds are reserved under spend limits, then open holds count against them, a hold past one is refused 402 naming it, and charges count per scope', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 10_000, reference: 'c' });
      const spend = { apiKeyId: 'key_a', account: { spend_per_day: 1000 }, key: { spend_total: 600 } };
      await funds.reserve({ holdId: 'h1', amount: 400, ttlMs: 60_000, ...meta, spend });
      await expect(funds.reserve({ holdId: 'h2', amount: 300, ttlMs: 60_000, ...meta, spend })).rejects.toMatchObject({
        code: 'spend_limit_exceeded', param: 'spend_total', extra: expect.objectContaining({ scope: 'key' }),
        message: "the key's spend_total of 600 nano-USD would be passed: 0 charged in all and 400 held now, 300 asked; nothing is held",
      });
      // Another key of the account: only the account's day limit applies (400 held of 1000).
      const other = { apiKeyId: 'key_b', account: { spend_per_day: 1000 } };
      await funds.reserve({ holdId: 'h3', amount: 600, ttlMs: 60_000, ...meta, spend: other });
      await expect(funds.reserve({ holdId: 'h4', amount: 1, ttlMs: 60_000, ...meta, spend: other })).rejects.toMatchObject({
        code: 'spend_limit_exceeded', param: 'spend_per_day', extra: expect.objectContaining({ scope: 'account' }),
        message: expect.stringContaining("the account's spend_per_day of 1000 nano-USD would be passed: 0 charged this UTC day and 1000 held"),
      });
      // Settled below the holds: what was not charged is free again, what was charged counts.
      await funds.settle({ holdId: 'h1', lines: [{ unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 100 }] });
      await funds.release({ holdId: 'h3', reason: 'test' });
      await funds.reserve({ holdId: 'h5', amount: 500, ttlMs: 60_000, ...meta, spend });
      await expect(funds.reserve({ holdId: 'h6', amount: 1, ttlMs: 60_000, ...meta, spend })).rejects.toMatchObject({ code: 'spend_limit_exceeded', param: 'spend_total' });
      expect(await funds.getBalance()).toMatchObject({ balance: 9_900, held: 500 });
      // What the limits count, as the console reads it: charged per period and held open, per scope.
      const figures = (spent: number, held: number) => ({ spend_per_day: spent, spend_per_month: spent, spend_total: spent, held });
      // The account's tells apart what funds leases lock of its held (none here).
      const account = { ...figures(100, 500), leased: 0 };
      expect(await funds.getSpend({ apiKeyId: 'key_a' })).toEqual({ account, key: figures(100, 500) });
      expect(await funds.getSpend({ apiKeyId: 'key_b' })).toEqual({ account, key: figures(0, 0) });
      expect(await funds.getSpend({ apiKeyId: null })).toEqual({ account, key: null });
    });

    it('when a key is charged without a spend limit (its holds, its carved holds, their expiries), then all of it counts once a limit is set, and no other key\'s does', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 100_000, reference: 'c' });
      const line = (quantity: number) => [{ unit: 'TEXT_OUTPUT' as const, quantity, unitPrice: 1 }];
      // A hold made with the key, no limit: settled for 300.
      await funds.reserve({ holdId: 'k1', amount: 500, ttlMs: 60_000, ...meta, spendKeyId: 'key_c' });
      expect(await funds.settle({ holdId: 'k1', lines: line(300) })).toMatchObject({ charged: 300 });
      // A carved hold of a lease, settled for 200; another key's for 1,000 (not key_c's).
      const leaseId = randomUUID();
      await funds.openLease({ leaseId, amount: 10_000, minAmount: 1, ttlMs: 1500 });
      const carvedOf = (apiKeyId: string, amount: number) => ({ holdId: randomUUID(), amount, ...meta, apiKeyId });
      const [mine, theirs, running] = [carvedOf('key_c', 500), carvedOf('key_d', 2000), carvedOf('key_c', 500)];
      await funds.leaseBatch({ leaseId, ttlMs: 1500, settle: [{ ...mine, lines: line(200) }, { ...theirs, lines: line(1000) }], progress: [{ ...running, lines: line(40) }] });
      // Expiries charge their progress: the lease's carved hold (40) and a hold of the key's (60).
      await funds.reserve({ holdId: 'k2', amount: 500, ttlMs: 1500, ...meta, spendKeyId: 'key_c' });
      await funds.progress({ holdId: 'k2', lines: line(60), ttlMs: 1500 });
      await eventually(() => funds.getBalance(), (b) => b.openLeases === 0 && b.openHolds === 0, 30_000);
      expect(await funds.getBalance()).toMatchObject({ balance: 100_000 - 300 - 200 - 1000 - 40 - 60 });
      // key_c has been charged 600 today: a day limit of 700 leaves room for 100, not 101.
      const limited = { apiKeyId: 'key_c', key: { spend_per_day: 700 } };
      await expect(funds.reserve({ holdId: 'k3', amount: 101, ttlMs: 60_000, ...meta, spend: limited, spendKeyId: 'key_c' })).rejects.toMatchObject({ code: 'spend_limit_exceeded', param: 'spend_per_day', extra: expect.objectContaining({ scope: 'key', spent: 600 }) });
      await funds.reserve({ holdId: 'k4', amount: 100, ttlMs: 60_000, ...meta, spend: limited, spendKeyId: 'key_c' });
      expect(await funds.getSpend({ apiKeyId: 'key_c' })).toEqual({
        account: { spend_per_day: 1600, spend_per_month: 1600, spend_total: 1600, held: 100, leased: 0 },
        key: { spend_per_day: 600, spend_per_month: 600, spend_total: 600, held: 100 },
      });
      // key_d's 1,000 counts for key_d alone.
      await expect(funds.reserve({ holdId: 'k5', amount: 1, ttlMs: 60_000, ...meta, spend: { apiKeyId: 'key_d', key: { spend_total: 1000 } }, spendKeyId: 'key_d' })).rejects.toMatchObject({ code: 'spend_limit_exceeded', param: 'spend_total' });
    });

    it('when a reserve does not fit the available balance, then 402 insufficient_funds and nothing is held', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 100, reference: 'c' });
      await funds.reserve({ holdId: randomUUID(), amount: 60, ttlMs: 60_000, ...meta });
      await expect(funds.reserve({ holdId: randomUUID(), amount: 41, ttlMs: 60_000, ...meta })).rejects.toMatchObject({ code: 'insufficient_funds' });
      expect(await funds.getBalance()).toMatchObject({ balance: 100, held: 60, available: 40, openHolds: 1 });
    });

    it('when settled, then the charge is the usage cost, never above the hold, and a retry answers the same', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 10_000, reference: 'c' });
      const small = randomUUID();
      await funds.reserve({ holdId: small, amount: 500, ttlMs: 60_000, ...meta });
      const settled = await funds.settle({ holdId: small, lines: [{ unit: 'TEXT_INPUT', quantity: 3, unitPrice: 10 }, { unit: 'TEXT_OUTPUT', quantity: 5, unitPrice: 20 }] });
      expect(settled).toMatchObject({ state: 'settled', charged: 130, balance: 9870 });
      expect(await funds.settle({ holdId: small, lines: [] })).toMatchObject({ state: 'settled', charged: 130 });
      const capped = randomUUID();
      await funds.reserve({ holdId: capped, amount: 50, ttlMs: 60_000, ...meta });
      expect(await funds.settle({ holdId: capped, lines: [{ unit: 'TEXT_OUTPUT', quantity: 1000, unitPrice: 1 }] })).toMatchObject({ charged: 50, balance: 9820 });
      expect(await funds.getBalance()).toMatchObject({ balance: 9820, held: 0 });
    });

    it('when a settle carries a route, then each usage row of the call shows it on the console page, in the CSV columns upstream and attempts and in JSON Lines; a bad route refuses the settle and changes nothing', async () => {
      const accountId = t.account();
      const funds = t.client.of(accountId);
      await funds.credit({ amount: 10_000, reference: 'c' });
      const [routed, plain] = [randomUUID(), randomUUID()];
      await funds.reserve({ holdId: routed, amount: 500, ttlMs: 60_000, ...meta });
      await funds.reserve({ holdId: plain, amount: 500, ttlMs: 60_000, ...meta });
      const lines = [{ unit: 'TEXT_INPUT' as const, quantity: 3, unitPrice: 10 }, { unit: 'TEXT_OUTPUT' as const, quantity: 5, unitPrice: 20 }];
      const route: RouteRecord = {
        upstream: 'openai-b',
        attempts: [
          { upstream: 'openai-a', outcome: 'timeout', durationMs: 30_000, platformBorne: true },
          { upstream: 'openai-c', outcome: 'unavailable', durationMs: 120 },
          { upstream: 'openai-b', outcome: 'served', durationMs: 340 },
        ],
      };
      // Refused before the turn changes anything: the hold stays open, nothing is charged.
      const bad = { ...route, attempts: [{ ...route.attempts[0], outcome: 'exploded' }, route.attempts[2]] };
      await expect(funds.settle({ holdId: routed, lines, route: bad })).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(funds.settle({ holdId: routed, lines, route: { upstream: 'openai-a', attempts: route.attempts } })).rejects.toMatchObject({ code: 'invalid_request' });
      expect(await funds.getBalance()).toMatchObject({ balance: 10_000, held: 1000, openHolds: 2 });
      expect(await funds.settle({ holdId: routed, lines, route })).toMatchObject({ state: 'settled', charged: 130, balance: 9870 });
      expect(await funds.settle({ holdId: plain, lines })).toMatchObject({ state: 'settled', charged: 130, balance: 9740 });
      // Every host under this contract shows its console: the route must be seen there.
      expect(t.host.consoleUsage).toBeDefined();
      const usage = await eventually(() => t.host.consoleUsage!(accountId), (u) => u.page.total === 4);
      const byId = new Map(usage.page.items.map((item) => [item.id, item]));
      expect(byId.get(`${routed}:usage:TEXT_INPUT`)).toMatchObject({ unit: 'TEXT_INPUT', charged: 30, route });
      expect(byId.get(`${routed}:usage:TEXT_OUTPUT`)).toMatchObject({ unit: 'TEXT_OUTPUT', charged: 100, route });
      expect(byId.get(`${plain}:usage:TEXT_INPUT`)).not.toHaveProperty('route');
      const csv = usage.csv.split('\n');
      expect(csv[0]).toBe('id,occurredAt,unit,quantity,unitPrice,cost,charged,platformBorne,holdId,requestId,taskId,model,profileId,reasoningTokens,upstream,attempts');
      const row = (id: string) => csv.find((line) => line.startsWith(`${id},`));
      expect(row(`${routed}:usage:TEXT_OUTPUT`)).toBe(`${routed}:usage:TEXT_OUTPUT,${byId.get(`${routed}:usage:TEXT_OUTPUT`)!.occurredAt},TEXT_OUTPUT,5,20,100,100,false,${routed},req,,sim-chat,p,,openai-b,openai-a:timeout:30000ms:borne;openai-c:unavailable:120ms;openai-b:served:340ms`);
      expect(row(`${plain}:usage:TEXT_INPUT`)).toBe(`${plain}:usage:TEXT_INPUT,${byId.get(`${plain}:usage:TEXT_INPUT`)!.occurredAt},TEXT_INPUT,3,10,30,30,false,${plain},req,,sim-chat,p,,,`);
      const jsonl = usage.jsonl.split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line) as { id: string; route?: RouteRecord });
      expect(jsonl.find((item) => item.id === `${routed}:usage:TEXT_INPUT`)?.route).toEqual(route);
      expect(jsonl.filter((item) => item.route !== undefined)).toHaveLength(2);
    });

    it('when a hold has ended, then no other ending is accepted (forbidden transitions)', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 1000, reference: 'c' });
      const settled = randomUUID();
      await funds.reserve({ holdId: settled, amount: 10, ttlMs: 60_000, ...meta });
      await funds.settle({ holdId: settled, lines: [] });
      await expect(funds.release({ holdId: settled, reason: 'x' })).rejects.toMatchObject({ code: 'hold_state_conflict' });
      await expect(funds.reserve({ holdId: settled, amount: 10, ttlMs: 60_000, ...meta })).rejects.toMatchObject({ code: 'hold_state_conflict' });
      const released = randomUUID();
      await funds.reserve({ holdId: released, amount: 10, ttlMs: 60_000, ...meta });
      expect(await funds.release({ holdId: released, reason: 'x' })).toMatchObject({ state: 'released', charged: 0 });
      expect(await funds.release({ holdId: released, reason: 'x' })).toMatchObject({ state: 'released' });
      await expect(funds.settle({ holdId: released, lines: [] })).rejects.toMatchObject({ code: 'hold_state_conflict' });
      await expect(funds.settle({ holdId: randomUUID(), lines: [] })).rejects.toMatchObject({ code: 'hold_not_found' });
      expect(await funds.getBalance()).toMatchObject({ balance: 1000, held: 0 });
    });

    it('when 40 reserves race on a balance that covers 5, then exactly 5 are held and the balance never goes negative', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 500, reference: 'c' });
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => funds.reserve({ holdId: randomUUID(), amount: 100, ttlMs: 60_000, ...meta })));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
      for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'insufficient_funds' });
      expect(await funds.getBalance()).toMatchObject({ balance: 500, held: 500, available: 0 });
    });

    it('when a hold outlives its ttl, then its expiry reminder releases it', async () => {
      const funds = t.client.of(t.account());
      await funds.credit({ amount: 100, reference: 'c' });
      await funds.reserve({ holdId: randomUUID(), amount: 70, ttlMs: 1500, ...meta });
      expect(await funds.getBalance()).toMatchObject({ held: 70 });
      const after = await eventually(() => funds.getBalance(), (b) => b.held === 0, 20_000);
      expect(after).toMatchObject({ balance: 100, held: 0, available: 100, openHolds: 0 });
    });

    describe('progress, renewal and expiry of a call that never settles', () => {
      const output = (quantity: number) => [{ unit: 'TEXT_INPUT' as const, quantity: 10, unitPrice: 1 }, { unit: 'TEXT_OUTPUT' as const, quantity, unitPrice: 2 }];

      it('when progress is recorded, then the hold is renewed past its first ttl and its expiry charges the newest record (quantities never go down)', async () => {
        const id = t.account();
        const funds = t.client.of(id);
        await funds.credit({ amount: 10_000, reference: 'c' });
        const holdId = randomUUID();
        await funds.reserve({ holdId, amount: 1000, ttlMs: 1500, ...meta });
        expect(await funds.progress({ holdId, lines: output(100), ttlMs: 5000 })).toMatchObject({ state: 'open', charged: 0 });
        // Repeated and reordered records: the newest wins, no quantity goes down.
        await funds.progress({ holdId, lines: output(200), ttlMs: 5000 });
        await funds.progress({ holdId, lines: output(150), ttlMs: 5000 });
        await funds.progress({ holdId, lines: output(200), ttlMs: 5000 });
        // Past the first ttl (1.5 s) the hold is still open: renewed.
        await new Promise((r) => setTimeout(r, 2500));
        expect(await funds.getBalance()).toMatchObject({ held: 1000, openHolds: 1 });
        const after = await eventually(() => funds.getBalance(), (b) => b.openHolds === 0, 30_000);
        expect(after).toMatchObject({ balance: 10_000 - (10 + 400), held: 0 });
        // Its ending is the expiry's: a release answers it, a settle records the rest as platform-borne.
        expect(await funds.release({ holdId, reason: 'late' })).toMatchObject({ state: 'expired', charged: 410 });
        if (t.host.ledgerHas) {
          expect(await eventually(() => t.host.ledgerHas!(`${holdId}:charge`), Boolean)).toBe(true);
          // On Dapr the usage event comes on its own topic: it may arrive after the charge.
          expect(await eventually(() => t.host.ledgerHas!(`${holdId}:usage`), Boolean)).toBe(true);
          expect(await t.host.ledgerHas(`${holdId}:release`)).toBe(false);
        }
        if (t.host.ledgerBalance) expect(await eventually(() => t.host.ledgerBalance!(id), (b) => b === 10_000 - 410)).toBe(10_000 - 410);
      });

      it('when a hold is released asExpiry (its process is gone), then it is charged for its progress at once, or released without one', async () => {
        const funds = t.client.of(t.account());
        await funds.credit({ amount: 10_000, reference: 'c' });
        const withProgress = randomUUID();
        await funds.reserve({ holdId: withProgress, amount: 1000, ttlMs: 600_000, ...meta });
        await funds.progress({ holdId: withProgress, lines: output(40), ttlMs: 600_000 });
        // The outcome names the record it charged for (chargedFor), a repeat included.
        expect(await funds.release({ holdId: withProgress, reason: 'run_lease_expired', asExpiry: true })).toMatchObject({ state: 'expired', charged: 90, balance: 9910, chargedFor: output(40) });
        expect(await funds.release({ holdId: withProgress, reason: 'run_lease_expired', asExpiry: true })).toMatchObject({ state: 'expired', charged: 90, balance: 9910, chargedFor: output(40) });
        const without = randomUUID();
        await funds.reserve({ holdId: without, amount: 1000, ttlMs: 600_000, ...meta });
        const released = await funds.release({ holdId: without, reason: 'run_lease_expired', asExpiry: true });
        expect(released).toMatchObject({ state: 'expired', charged: 0, balance: 9910 });
        expect(released.chargedFor).toBeUndefined();
        expect(await funds.getBalance()).toMatchObject({ balance: 9910, held: 0, openHolds: 0 });
      });

      it('when progress exceeds the hold, then expiry charges the hold and no more', async () => {
        const funds = t.client.of(t.account());
        await funds.credit({ amount: 10_000, reference: 'c' });
        const holdId = randomUUID();
        await funds.reserve({ holdId, amount: 300, ttlMs: 1500, ...meta });
        await funds.progress({ holdId, lines: output(1000), ttlMs: 1500 });
        expect(await eventually(() => funds.getBalance(), (b) => b.openHolds === 0, 30_000)).toMatchObject({ balance: 9700, held: 0 });
      });

      it('when only renewals were sent (no usage), then expiry releases the hold and charges nothing', async () => {
        const funds = t.client.of(t.account());
        await funds.credit({ amount: 1000, reference: 'c' });
        const holdId = randomUUID();
        await funds.reserve({ holdId, amount: 500, ttlMs: 1500, ...meta });
        await funds.progress({ holdId, lines: [], ttlMs: 1500 });
        expect(await eventually(() => funds.getBalance(), (b) => b.openHolds === 0, 30_000)).toMatchObject({ balance: 1000, held: 0 });
        expect(await funds.settle({ holdId, lines: [] })).toMatchObject({ state: 'expired', charged: 0 });
      });

      it('when a settle comes after its hold expired, then it answers the expiry and records the uncharged usage as platform-borne, once', async () => {
        const id = t.account();
        const funds = t.client.of(id);
        await funds.credit({ amount: 10_000, reference: 'c' });
        const holdId = randomUUID();
        await funds.reserve({ holdId, amount: 5000, ttlMs: 1500, ...meta });
        await funds.progress({ holdId, lines: output(100), ttlMs: 1500 });
        await eventually(() => funds.getBalance(), (b) => b.openHolds === 0, 30_000);
        const before = t.host.metrics ? bornePlatform(await t.host.metrics()) : 0;
        // The whole call: 10 input and 130 output tokens; the expiry charged 10 + 100.
        const settled = await funds.settle({ holdId, lines: output(130) });
        expect(settled).toMatchObject({ state: 'expired', charged: 210, balance: 10_000 - 210 });
        expect(await funds.settle({ holdId, lines: output(130) })).toMatchObject({ state: 'expired', charged: 210, balance: 10_000 - 210 });
        expect(await funds.getBalance()).toMatchObject({ balance: 10_000 - 210, held: 0 });
        if (t.host.metrics) expect(bornePlatform(await t.host.metrics()) - before).toBe(30 * 2);
        if (t.host.ledgerHas) {
          expect(await eventually(() => t.host.ledgerHas!(`${holdId}:platform-borne`), Boolean)).toBe(true);
          expect(await eventually(() => t.host.ledgerHas!(`${holdId}:usage-borne`), Boolean)).toBe(true);
        }
        if (t.host.ledgerBalance) expect(await eventually(() => t.host.ledgerBalance!(id), (b) => b === 10_000 - 210)).toBe(10_000 - 210);
      });

      it('when a hold without progress expired and its settle comes, then the whole usage is platform-borne; a released hold stays a conflict', async () => {
        const funds = t.client.of(t.account());
        await funds.credit({ amount: 10_000, reference: 'c' });
        const expired = randomUUID();
        await funds.reserve({ holdId: expired, amount: 5000, ttlMs: 1500, ...meta });
        await eventually(() => funds.getBalance(), (b) => b.openHolds === 0, 30_000);
        expect(await funds.settle({ holdId: expired, lines: output(5) })).toMatchObject({ state: 'expired', charged: 0, balance: 10_000 });
        if (t.host.ledgerHas) expect(await eventually(() => t.host.ledgerHas!(`${expired}:platform-borne`), Boolean)).toBe(true);
        const released = randomUUID();
        await funds.reserve({ holdId: released, amount: 10, ttlMs: 60_000, ...meta });
        await funds.release({ holdId: released, reason: 'x' });
        await expect(funds.settle({ holdId: released, lines: output(1) })).rejects.toMatchObject({ code: 'hold_state_conflict' });
        // An ended hold's progress answers its outcome; an unknown hold's is not found; bad input is refused.
        expect(await funds.progress({ holdId: released, lines: output(1), ttlMs: 1000 })).toMatchObject({ state: 'released' });
        await expect(funds.progress({ holdId: randomUUID(), lines: [], ttlMs: 1000 })).rejects.toMatchObject({ code: 'hold_not_found' });
        const open = randomUUID();
        await funds.reserve({ holdId: open, amount: 10, ttlMs: 60_000, ...meta });
        await expect(funds.progress({ holdId: open, lines: [], ttlMs: 0 })).rejects.toMatchObject({ code: 'invalid_request' });
        await expect(funds.progress({ holdId: open, lines: [{ unit: 'TOKENS' as never, quantity: 1, unitPrice: 1 }], ttlMs: 1000 })).rejects.toMatchObject({ code: 'invalid_request' });
        await expect(funds.progress({ holdId: open, lines: [{ unit: 'TEXT_OUTPUT', quantity: -1, unitPrice: 1 }], ttlMs: 1000 })).rejects.toBeDefined();
        expect(await funds.settle({ holdId: open, lines: [] })).toMatchObject({ state: 'settled', charged: 0 });
      });
    });

    it('when the host restarts, then balances and open holds are all still there', async () => {
      if (!t.host.restart) return;
      const id = t.account();
      const funds = t.client.of(id);
      await funds.credit({ amount: 900, reference: 'c' });
      const open = randomUUID();
      await funds.reserve({ holdId: open, amount: 300, ttlMs: 600_000, ...meta });
      const settledHold = randomUUID();
      await funds.reserve({ holdId: settledHold, amount: 100, ttlMs: 600_000, ...meta });
      await funds.settle({ holdId: settledHold, lines: [{ unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 40 }] });
      t.client = new FundsHoldClient(await t.host.restart());
      const again = t.client.of(id);
      expect(await again.getBalance()).toMatchObject({ balance: 860, held: 300, openHolds: 1 });
      expect(await again.settle({ holdId: open, lines: [{ unit: 'TEXT_OUTPUT', quantity: 2, unitPrice: 10 }] })).toMatchObject({ charged: 20, balance: 840 });
      if (t.host.ledgerBalance) expect(await eventually(() => t.host.ledgerBalance!(id), (b) => b === 840)).toBe(840);
    });

    it('when every change has been delivered, then the ledger balance equals the actor balance', async () => {
      if (!t.host.ledgerBalance) return;
      const id = t.account();
      const funds = t.client.of(id);
      await funds.credit({ amount: 5000, reference: 'a' });
      await funds.credit({ amount: 5000, reference: 'a' });
      for (let i = 0; i < 5; i++) {
        const holdId = randomUUID();
        await funds.reserve({ holdId, amount: 400, ttlMs: 60_000, ...meta });
        if (i % 2 === 0) await funds.settle({ holdId, lines: [{ unit: 'TEXT_OUTPUT', quantity: 7 + i, unitPrice: 13 }] });
        else await funds.release({ holdId, reason: 'test' });
      }
      const { balance } = await funds.getBalance();
      expect(balance).toBe(5000 - 13 * (7 + 9 + 11));
      expect(await eventually(() => t.host.ledgerBalance!(id), (b) => b === balance)).toBe(balance);
    });

    it('when changes make bills, releases and platform-borne records included, then the actor counts each it emitted and the ledger counts as many of FundsHold\'s', async () => {
      const id = t.account();
      const funds = t.client.of(id);
      expect(await funds.ledgerFigures()).toEqual({ balance: 0, bills: 0 });
      await funds.credit({ amount: 10_000, reference: 'c' });
      await funds.credit({ amount: 10_000, reference: 'c' });
      await funds.debit({ amount: 1000, reference: 'd' });
      const settled = randomUUID();
      await funds.reserve({ holdId: settled, amount: 500, ttlMs: 60_000, ...meta });
      await funds.settle({ holdId: settled, lines: [{ unit: 'TEXT_OUTPUT', quantity: 10, unitPrice: 3 }] });
      await funds.settle({ holdId: settled, lines: [{ unit: 'TEXT_OUTPUT', quantity: 10, unitPrice: 3 }] });
      const released = randomUUID();
      await funds.reserve({ holdId: released, amount: 500, ttlMs: 60_000, ...meta });
      await funds.release({ holdId: released, reason: 'client_gone' });
      await funds.release({ holdId: released, reason: 'client_gone' });
      // Expired without progress (a release row), then settled after: its usage is platform-borne (a bill that moves no balance).
      const expired = randomUUID();
      await funds.reserve({ holdId: expired, amount: 500, ttlMs: 1500, ...meta });
      await eventually(() => funds.getBalance(), (b) => b.openHolds === 0, 30_000);
      await funds.settle({ holdId: expired, lines: [{ unit: 'TEXT_OUTPUT', quantity: 5, unitPrice: 3 }] });
      await funds.settle({ holdId: expired, lines: [{ unit: 'TEXT_OUTPUT', quantity: 5, unitPrice: 3 }] });
      // A lease's carved holds: a settle and a release in one batch.
      const leaseId = randomUUID();
      await funds.openLease({ leaseId, amount: 2000, minAmount: 1, ttlMs: 60_000 });
      const carve = (amount: number) => ({ holdId: randomUUID(), amount, ...meta });
      await funds.leaseBatch({ leaseId, ttlMs: 60_000, settle: [{ ...carve(100), lines: [{ unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 7 }] }], release: [{ ...carve(100), reason: 'x' }], close: true });
      // credit, debit, charge, release, release (expiry), platform-borne, carved charge, carved release.
      expect(await funds.ledgerFigures()).toEqual({ balance: 10_000 - 1000 - 30 - 7, bills: 8 });
      if (t.host.ledgerFundsBills) expect(await eventually(() => t.host.ledgerFundsBills!(id), (n) => n === 8)).toBe(8);
    });
  });
}
