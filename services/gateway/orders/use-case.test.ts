// The orders-per-day cap against replays (docs/orders.md, "Orders per day"): a replay of an order
// already made counts nothing, not even while it is being answered, so it never takes the day's
// last place from a new order; and a creation that fails gives its count back only when the order
// is known not to exist, so that an order made by a creation whose answer was lost still counts. The order and account actors are stand-ins whose timing the test
// controls: the replay's answer is held back while the new order is made.

import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { AccountClient } from '../../../actors/account/client';
import type { OrderCount } from '../../../actors/account/AccountInterface';
import type { OrderClient } from '../../../actors/order/client';
import type { CreateOrderRequest, OrderView } from '../../../actors/order/OrderInterface';
import { GatewayError } from '../../../lib/errors';
import { OrderService } from './use-case';

function standIns(limit: number, retryAfterMs = 1000) {
  const orders = new Map<string, OrderView>();
  let count = 0;
  let held: Promise<void> | undefined;
  const orderClient = {
    of: (orderId: string) => ({
      create: async (request: CreateOrderRequest) => {
        const existing = orders.get(orderId);
        if (existing) {
          await held;
          return { created: false, order: existing };
        }
        const order = { orderId, accountId: request.accountId, amount: request.amount, createdBy: request.createdBy, status: 'created' } as OrderView;
        orders.set(orderId, order);
        return { created: true, order };
      },
      view: async ({ accountId }: { accountId: string }) => {
        const order = orders.get(orderId);
        if (!order || order.accountId !== accountId) throw new GatewayError('not_found', 'no such order');
        return order;
      },
    }),
  } as unknown as OrderClient;
  const accounts = {
    of: () => ({
      countOrder: async (): Promise<OrderCount> => {
        const admitted = count < limit;
        if (admitted) count++;
        return { admitted, day: '2026-11-29', count, limit, retryAfterMs };
      },
      uncountOrder: async () => {
        count--;
      },
    }),
  } as unknown as AccountClient;
  const service = new OrderService({ orders: orderClient, checkout: { toleranceS: 300 }, logger: pino({ level: 'silent' }), daily: { accounts, perDay: limit } });
  return { service, count: () => count, holdReplays: (until: Promise<void>) => (held = until) };
}

describe('orders per day and replays', () => {
  it('when a replay of an order already made is being answered, then it holds no place of the day: a new order still gets the last one', async () => {
    const { service, count, holdReplays } = standIns(2);
    const create = (amount: number, key?: string) => service.create({ accountId: 'acct_a', createdBy: 'console', scope: 'key_a', body: { amount }, idempotencyKey: key });
    const key = randomUUID();
    const first = await create(1000, key);
    expect([first.replayed, count()]).toEqual([false, 1]);

    let release!: () => void;
    holdReplays(new Promise<void>((resolve) => (release = resolve)));
    const replay = create(1000, key);
    // The replay is under way (its answer held back) when a new order is asked for.
    await new Promise((resolve) => setImmediate(resolve));
    const another = await create(2000);
    expect([another.replayed, another.order.amount]).toEqual([false, 2000]);
    release();
    const replayed = await replay;
    expect([replayed.replayed, replayed.order.orderId]).toEqual([true, first.order.orderId]);
    expect(count()).toBe(2);
  });
});

describe('orders per day and the SDKs\' retries', () => {
  it('when the day is full for more than a minute, then the 429 says x-should-retry: false; within the last minute of the day it does not', async () => {
    const refusal = async (retryAfterMs: number) => {
      const { service } = standIns(0, retryAfterMs);
      const error = await service.create({ accountId: 'acct_a', createdBy: 'console', scope: 'key_a', body: { amount: 1000 }, idempotencyKey: undefined }).catch((e: unknown) => e);
      return [(error as GatewayError).code, (error as GatewayError).headers];
    };
    expect(await refusal(3_600_000)).toEqual(['rate_limit_exceeded', { 'retry-after': '3600', 'retry-after-ms': '3600000', 'x-should-retry': 'false' }]);
    expect(await refusal(30_000)).toEqual(['rate_limit_exceeded', { 'retry-after': '30', 'retry-after-ms': '30000' }]);
  });
});

/** An account's day of orders and an order store whose creations fail as the test says. */
function failingCreations(creation: 'fails-before' | 'fails-after' | 'fails-after-look-fails') {
  const counted = { count: 0 };
  const made = new Set<string>();
  let asked = false;
  const accounts = {
    of: () => ({
      countOrder: async ({ limit }: { limit: number }) => {
        if (counted.count >= limit) return { admitted: false, day: '2026-11-29', count: counted.count, limit, retryAfterMs: 1000 };
        counted.count++;
        return { admitted: true, day: '2026-11-29', count: counted.count, limit, retryAfterMs: 1000 };
      },
      uncountOrder: async () => void counted.count--,
    }),
  } as unknown as AccountClient;
  const orders = {
    of: (orderId: string) => ({
      create: async ({ accountId, amount }: { accountId: string; amount: number }) => {
        asked = true;
        if (creation !== 'fails-before') made.add(orderId);
        // The creation's answer never comes back (a timeout, a connection lost on its way back).
        throw new GatewayError('actor_unavailable', 'the order actor did not answer in time');
        return { created: true, order: { orderId, accountId, amount } };
      },
      view: async () => {
        if (creation === 'fails-after-look-fails' && asked) throw new GatewayError('actor_unavailable', 'no answer');
        if (!made.has(orderId)) throw new GatewayError('not_found', 'no such order');
        return { orderId };
      },
    }),
  } as unknown as OrderClient;
  const orderService = new OrderService({ orders, checkout: { toleranceS: 300 }, logger: pino({ level: 'silent' }), daily: { accounts, perDay: 5 } });
  const create = (key: string) => orderService.create({ accountId: 'acct_1', createdBy: 'customer' as never, scope: 'key_1', body: { amount: 1_000_000 }, idempotencyKey: key });
  return { counted, made, create };
}

describe('orders of a day when a creation fails', () => {
  it('when the creation failed before making the order, then the count is given back', async () => {
    const { counted, create } = failingCreations('fails-before');
    await expect(create('a1b2c3d4-e5f6-4789-8abc-def012345678')).rejects.toMatchObject({ code: 'actor_unavailable' });
    expect(counted.count).toBe(0);
  });

  it('when the creation made the order but its answer was lost, then the order still counts in its day', async () => {
    const { counted, made, create } = failingCreations('fails-after');
    await expect(create('a1b2c3d4-e5f6-4789-8abc-def012345678')).rejects.toMatchObject({ code: 'actor_unavailable' });
    expect([made.size, counted.count]).toEqual([1, 1]);
  });

  it('when neither the creation nor the look at the order answers, then the count is kept', async () => {
    const { counted, create } = failingCreations('fails-after-look-fails');
    await expect(create('a1b2c3d4-e5f6-4789-8abc-def012345678')).rejects.toMatchObject({ code: 'actor_unavailable' });
    expect(counted.count).toBe(1);
  });
});
