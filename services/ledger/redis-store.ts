// Ledger storage of the Dapr topology, in Redis. One Lua script per event makes the dedupe mark,
// the entry and the running totals atomic, so a redelivered event is a no-op.

import { createClient, type RedisClientType } from 'redis';
import type { EventEnvelope } from '../../lib/events';
import { toEntry, type AccountLedgerView, type BillEntry, type LedgerStore } from './entries';

const APPEND = `
if redis.call('SET', KEYS[1], '1', 'NX') == false then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[1])
if ARGV[2] == 'billing' then
  redis.call('HINCRBY', KEYS[3], 'balance', ARGV[3])
  redis.call('HINCRBY', KEYS[3], 'bills', 1)
else
  redis.call('HINCRBY', KEYS[3], 'usage', 1)
end
return 1`;

export class RedisLedgerStore implements LedgerStore {
  private constructor(private readonly client: RedisClientType) {}

  static async connect(url: string): Promise<RedisLedgerStore> {
    const client: RedisClientType = createClient({ url });
    client.on('error', () => {
      /* reconnects by itself; readiness reports it */
    });
    await client.connect();
    return new RedisLedgerStore(client);
  }

  async append(event: EventEnvelope): Promise<'appended' | 'duplicate'> {
    const entry = toEntry(event);
    const account = `${entry.accountId}:${entry.pool}`;
    const delta = event.topic === 'billing' ? (entry as BillEntry).balanceDelta : 0;
    const result = await this.client.eval(APPEND, {
      keys: [`ledger:event:${event.id}`, `ledger:${event.topic}:${account}`, `ledger:totals:${account}`],
      arguments: [JSON.stringify(entry), event.topic, String(delta)],
    });
    return result === 1 ? 'appended' : 'duplicate';
  }

  async account(accountId: string, pool: string): Promise<AccountLedgerView> {
    const totals = await this.client.hGetAll(`ledger:totals:${accountId}:${pool}`);
    return { accountId, pool, balance: Number(totals.balance ?? 0), bills: Number(totals.bills ?? 0), usage: Number(totals.usage ?? 0) };
  }

  async has(eventId: string): Promise<boolean> {
    return (await this.client.exists(`ledger:event:${eventId}`)) === 1;
  }

  async ping(): Promise<boolean> {
    return (await this.client.ping()) === 'PONG';
  }

  async close(): Promise<void> {
    await this.client.quit();
  }
}
