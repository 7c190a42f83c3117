// The FundsHold contract: the same cases against every actor host (embedded and Dapr).

import { randomUUID } from 'node:crypto';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import type { ActorInvoker } from '../../actors/runtime/port';
import { eventually } from '../support/eventually';

export interface HostUnderTest {
  invoker: ActorInvoker;
  /** Restarts the host (process or apps and sidecars); returns the invoker to use after. */
  restart?: () => Promise<ActorInvoker>;
  /** The balance the ledger holds for an account (after its events were delivered). */
  ledgerBalance?: (accountId: string) => Promise<number>;
  close(): Promise<void>;
}

const meta = { requestId: 'req', model: 'sim-chat', profileId: 'p' };

export function fundsHoldContract(hostName: string, start: () => Promise<HostUnderTest>): void {
  describe(`FundsHold contract on the ${hostName} host`, () => {
    let host: HostUnderTest;
    let client: FundsHoldClient;
    const account = () => `acct_${randomUUID().slice(0, 8)}`;

    beforeAll(async () => {
      host = await start();
      client = new FundsHoldClient(host.invoker);
    });
    afterAll(async () => {
      await host?.close();
    });

    it('when credited, then the balance grows; the same reference again changes nothing; another amount conflicts', async () => {
      const funds = client.of(account());
      expect(await funds.credit({ amount: 1000, reference: 'r1' })).toMatchObject({ applied: true, balance: 1000 });
      expect(await funds.credit({ amount: 1000, reference: 'r1' })).toMatchObject({ applied: false, balance: 1000 });
      await expect(funds.credit({ amount: 5, reference: 'r1' })).rejects.toMatchObject({ code: 'credit_reference_reused' });
      expect(await funds.getBalance()).toMatchObject({ balance: 1000, held: 0, available: 1000 });
    });

    it('when a reserve does not fit the available balance, then 402 insufficient_funds and nothing is held', async () => {
      const funds = client.of(account());
      await funds.credit({ amount: 100, reference: 'c' });
      await funds.reserve({ holdId: randomUUID(), amount: 60, ttlMs: 60_000, ...meta });
      await expect(funds.reserve({ holdId: randomUUID(), amount: 41, ttlMs: 60_000, ...meta })).rejects.toMatchObject({ code: 'insufficient_funds' });
      expect(await funds.getBalance()).toMatchObject({ balance: 100, held: 60, available: 40, openHolds: 1 });
    });

    it('when settled, then the charge is the usage cost, never above the hold, and a retry answers the same', async () => {
      const funds = client.of(account());
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

    it('when a hold has ended, then no other ending is accepted (forbidden transitions)', async () => {
      const funds = client.of(account());
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
      const funds = client.of(account());
      await funds.credit({ amount: 500, reference: 'c' });
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => funds.reserve({ holdId: randomUUID(), amount: 100, ttlMs: 60_000, ...meta })));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
      for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'insufficient_funds' });
      expect(await funds.getBalance()).toMatchObject({ balance: 500, held: 500, available: 0 });
    });

    it('when a hold outlives its ttl, then its expiry reminder releases it', async () => {
      const funds = client.of(account());
      await funds.credit({ amount: 100, reference: 'c' });
      await funds.reserve({ holdId: randomUUID(), amount: 70, ttlMs: 1500, ...meta });
      expect(await funds.getBalance()).toMatchObject({ held: 70 });
      const after = await eventually(() => funds.getBalance(), (b) => b.held === 0, 20_000);
      expect(after).toMatchObject({ balance: 100, held: 0, available: 100, openHolds: 0 });
    });

    it('when the host restarts, then balances and open holds are all still there', async () => {
      if (!host.restart) return;
      const id = account();
      const funds = client.of(id);
      await funds.credit({ amount: 900, reference: 'c' });
      const open = randomUUID();
      await funds.reserve({ holdId: open, amount: 300, ttlMs: 600_000, ...meta });
      const settledHold = randomUUID();
      await funds.reserve({ holdId: settledHold, amount: 100, ttlMs: 600_000, ...meta });
      await funds.settle({ holdId: settledHold, lines: [{ unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 40 }] });
      client = new FundsHoldClient(await host.restart());
      const again = client.of(id);
      expect(await again.getBalance()).toMatchObject({ balance: 860, held: 300, openHolds: 1 });
      expect(await again.settle({ holdId: open, lines: [{ unit: 'TEXT_OUTPUT', quantity: 2, unitPrice: 10 }] })).toMatchObject({ charged: 20, balance: 840 });
      if (host.ledgerBalance) expect(await eventually(() => host.ledgerBalance!(id), (b) => b === 840)).toBe(840);
    });

    it('when every change has been delivered, then the ledger balance equals the actor balance', async () => {
      if (!host.ledgerBalance) return;
      const id = account();
      const funds = client.of(id);
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
      expect(await eventually(() => host.ledgerBalance!(id), (b) => b === balance)).toBe(balance);
    });
  });
}
