// Ledger storage of the Dapr topology, in Redis. One Lua script per event makes the dedupe mark,
// the rows and the running totals atomic, so a redelivered event is a no-op.
//
// Keys: `ledger:event:<eventId>` (dedupe mark), list `ledger:<topic>:<account>:<pool>` (rows as
// JSON, appended with RPUSH: list index = position − 1, so LRANGE reads any page) and hash
// `ledger:totals:<account>:<pool>` (balance, bills, usage events, usageRows).

import { createClient, type RedisClientType } from 'redis';
import type { EventEnvelope, Topic } from '../../lib/events';
import { toRows, type AccountLedgerView, type BillEntry, type LedgerAccount, type LedgerRow, type LedgerStore } from './entries';

const APPEND = `
if redis.call('SET', KEYS[1], '1', 'NX') == false then return 0 end
if #ARGV > 2 then redis.call('RPUSH', KEYS[2], unpack(ARGV, 3)) end
if ARGV[1] == 'billing' then
  redis.call('HINCRBY', KEYS[3], 'balance', ARGV[2])
  redis.call('HINCRBY', KEYS[3], 'bills', 1)
else
  redis.call('HINCRBY', KEYS[3], 'usage', 1)
  redis.call('HINCRBY', KEYS[3], 'usageRows', #ARGV - 2)
end
return 1`;

const TOTALS_PREFIX = 'ledger:totals:';
const rowsKey = (topic: Topic, accountId: string, pool: string) => `ledger:${topic}:${accountId}:${pool}`;

export class RedisLedgerStore implements LedgerStore {
  private appendSha?: string;

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
    const { accountId, pool } = event.data;
    const rows = toRows(event);
    const delta = event.topic === 'billing' ? (rows[0] as BillEntry).balanceDelta : 0;
    const script = {
      keys: [`ledger:event:${event.id}`, rowsKey(event.topic, accountId, pool), `${TOTALS_PREFIX}${accountId}:${pool}`],
      arguments: [event.topic, String(delta), ...rows.map((row) => JSON.stringify(row))],
    };
    return (await this.runAppend(script)) === 1 ? 'appended' : 'duplicate';
  }

  async account(accountId: string, pool: string): Promise<AccountLedgerView> {
    const totals = await this.client.hGetAll(`${TOTALS_PREFIX}${accountId}:${pool}`);
    return {
      accountId,
      pool,
      balance: Number(totals.balance ?? 0),
      bills: Number(totals.bills ?? 0),
      usage: Number(totals.usage ?? 0),
      usageRows: Number(totals.usageRows ?? 0),
    };
  }

  async has(eventId: string): Promise<boolean> {
    return (await this.client.exists(`ledger:event:${eventId}`)) === 1;
  }

  async stored(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const marks = await this.client.mGet(ids.map((id) => `ledger:event:${id}`));
    return ids.filter((_, i) => marks[i] !== null);
  }

  async register(accountId: string, pool: string): Promise<void> {
    // The totals hash is the index the listing scans: created with a zero balance, never reset.
    await this.client.hSetNX(`${TOTALS_PREFIX}${accountId}:${pool}`, 'balance', '0');
  }

  count(topic: Topic, accountId: string, pool: string): Promise<number> {
    return this.client.lLen(rowsKey(topic, accountId, pool));
  }

  async rows(topic: Topic, accountId: string, pool: string, from: number, to: number): Promise<LedgerRow[]> {
    if (to < from || to < 1) return [];
    const values = await this.client.lRange(rowsKey(topic, accountId, pool), Math.max(1, from) - 1, to - 1);
    const rows: LedgerRow[] = new Array(values.length);
    for (let i = 0; i < values.length; i++) rows[values.length - 1 - i] = JSON.parse(values[i]) as LedgerRow;
    return rows;
  }

  async *accounts(): AsyncIterable<LedgerAccount> {
    for await (const keys of this.client.scanIterator({ MATCH: `${TOTALS_PREFIX}*`, COUNT: 1000 })) {
      for (const key of keys) {
        const account = key.slice(TOTALS_PREFIX.length);
        const separator = account.lastIndexOf(':');
        yield { accountId: account.slice(0, separator), pool: account.slice(separator + 1) };
      }
    }
  }

  async ping(): Promise<boolean> {
    return (await this.client.ping()) === 'PONG';
  }

  async close(): Promise<void> {
    await this.client.quit();
  }

  /** EVALSHA of the append script, loading it when Redis does not know it (first call, restart, flush). */
  private async runAppend(script: { keys: string[]; arguments: string[] }): Promise<unknown> {
    this.appendSha ??= await this.client.scriptLoad(APPEND);
    try {
      return await this.client.evalSha(this.appendSha, script);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      this.appendSha = await this.client.scriptLoad(APPEND);
      return this.client.evalSha(this.appendSha, script);
    }
  }
}
