// Ledger storage of the Dapr topology, in Redis. One Lua script call appends a whole delivery's
// events in their order: for each, the dedupe mark, the rows and the running totals move
// together, so a redelivered event is a no-op.
//
// Keys: `ledger:event:<eventId>` (dedupe mark), list `ledger:<topic>:<account>:<pool>` (rows as
// JSON, appended with RPUSH: list index = position − 1, so LRANGE reads any page), hash
// `ledger:totals:<account>:<pool>` (balance, bills, usage events, usageRows, spendFrom), hash
// `ledger:spend:<account>:<pool>:<YYYY-MM-DD>` (the day's charged sum per model, spending.ts) and
// `ledger:spendbase:<account>:<pool>` (JSON: the sums of rows from before those were kept).

import { createClient, type RedisClientType } from 'redis';
import { FUNDS_HOLD_SOURCE, type EventEnvelope, type Topic, type UsageData } from '../../lib/events';
import { eventParts, toRows, type AccountLedgerView, type AppendOutcome, type BillEntry, type LedgerAccount, type LedgerRow, type LedgerStore } from './entries';
import { dayOf, type SpendingBase, type SpendingDays } from './spending';

// KEYS: four per event (its dedupe mark, rows list, totals hash and its day's spending hash; a
// usage event with its bill is two events here, entries.ts eventParts). ARGV: per event its topic,
// balance delta, row count, model, charged and whether a FundsHold actor made it ('1' or '0'),
// then its rows. Answers 1 (appended) or 0 (duplicate) per event. A usage event fixes spendFrom
// (the rows before it) if nothing did yet. A totals hash made here counts fundsBills from 0; one
// made before it was counted has none and gets none (unknown, entries.ts).
const APPEND = `
local outcomes = {}
local a = 1
for k = 1, #KEYS, 4 do
  local n = tonumber(ARGV[a + 2])
  if redis.call('SET', KEYS[k], '1', 'NX') then
    if redis.call('EXISTS', KEYS[k + 2]) == 0 then redis.call('HSET', KEYS[k + 2], 'fundsBills', 0) end
    if n > 0 then redis.call('RPUSH', KEYS[k + 1], unpack(ARGV, a + 6, a + 5 + n)) end
    if ARGV[a] == 'billing' then
      redis.call('HINCRBY', KEYS[k + 2], 'balance', ARGV[a + 1])
      redis.call('HINCRBY', KEYS[k + 2], 'bills', 1)
      if ARGV[a + 5] == '1' and redis.call('HEXISTS', KEYS[k + 2], 'fundsBills') == 1 then redis.call('HINCRBY', KEYS[k + 2], 'fundsBills', 1) end
    else
      if redis.call('HEXISTS', KEYS[k + 2], 'spendFrom') == 0 then
        redis.call('HSET', KEYS[k + 2], 'spendFrom', redis.call('HGET', KEYS[k + 2], 'usageRows') or '0')
      end
      redis.call('HINCRBY', KEYS[k + 2], 'usage', 1)
      redis.call('HINCRBY', KEYS[k + 2], 'usageRows', n)
      redis.call('HINCRBY', KEYS[k + 3], ARGV[a + 3], ARGV[a + 4])
    end
    outcomes[#outcomes + 1] = 1
  else
    outcomes[#outcomes + 1] = 0
  end
  a = a + 6 + n
end
return outcomes`;

// Registers an account: its totals hash, made with a zero balance and fundsBills counted from 0
// when it does not exist yet; an existing one is left as it is.
const REGISTER = `
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HSET', KEYS[1], 'balance', '0', 'fundsBills', '0') end
return 1`;

const TOTALS_PREFIX = 'ledger:totals:';
const rowsKey = (topic: Topic, accountId: string, pool: string) => `ledger:${topic}:${accountId}:${pool}`;
const spendKey = (accountId: string, pool: string, day: string) => `ledger:spend:${accountId}:${pool}:${day}`;
const spendBaseKey = (accountId: string, pool: string) => `ledger:spendbase:${accountId}:${pool}`;

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

  async append(event: EventEnvelope): Promise<AppendOutcome> {
    return (await this.appendAll([event]))[0];
  }

  async appendAll(events: readonly EventEnvelope[]): Promise<AppendOutcome[]> {
    if (events.length === 0) return [];
    const keys: string[] = [];
    const args: string[] = [];
    // A usage event with its bill is two parts, each appended once by its id (eventParts).
    const partsOf: number[] = [];
    for (const event of events) {
      const parts = eventParts(event);
      partsOf.push(parts.length);
      for (const part of parts) {
        const { accountId, pool } = part.data;
        const rows = toRows(part);
        const usage = part.topic === 'usage' ? (part.data as UsageData) : undefined;
        keys.push(`ledger:event:${part.id}`, rowsKey(part.topic, accountId, pool), `${TOTALS_PREFIX}${accountId}:${pool}`, spendKey(accountId, pool, dayOf(part.occurredAt)));
        args.push(part.topic, usage ? '0' : String((rows[0] as BillEntry).balanceDelta), String(rows.length), usage?.model ?? '', String(usage?.charged ?? 0), part.source === FUNDS_HOLD_SOURCE ? '1' : '0');
        for (const row of rows) args.push(JSON.stringify(row));
      }
    }
    const marks = (await this.runAppend({ keys, arguments: args })) as number[];
    let next = 0;
    return partsOf.map((count) => {
      const appended = marks.slice(next, (next += count)).includes(1);
      return appended ? 'appended' : 'duplicate';
    });
  }

  async account(accountId: string, pool: string): Promise<AccountLedgerView> {
    const totals = await this.client.hGetAll(`${TOTALS_PREFIX}${accountId}:${pool}`);
    return {
      accountId,
      pool,
      balance: Number(totals.balance ?? 0),
      bills: Number(totals.bills ?? 0),
      // No hash: no rows, none made by FundsHold. A hash without the count: unknown.
      ...(totals.fundsBills !== undefined || Object.keys(totals).length === 0 ? { fundsBills: Number(totals.fundsBills ?? 0) } : {}),
      usage: Number(totals.usage ?? 0),
      usageRows: Number(totals.usageRows ?? 0),
    };
  }

  async spendingFrom(accountId: string, pool: string): Promise<number> {
    const [spendFrom, usageRows] = await this.client.hmGet(`${TOTALS_PREFIX}${accountId}:${pool}`, ['spendFrom', 'usageRows']);
    return Number(spendFrom ?? usageRows ?? 0);
  }

  async spendingDays(accountId: string, pool: string, fromDay: string, toDay: string): Promise<SpendingDays> {
    const days: string[] = [];
    for (let day = new Date(`${fromDay}T00:00:00Z`); day.toISOString().slice(0, 10) <= toDay; day.setUTCDate(day.getUTCDate() + 1)) {
      days.push(day.toISOString().slice(0, 10));
    }
    // One command per day, sent together (the client pipelines commands issued in the same tick).
    const sums = await Promise.all(days.map((day) => this.client.hGetAll(spendKey(accountId, pool, day))));
    const spending: SpendingDays = {};
    days.forEach((day, i) => {
      const models = Object.entries(sums[i]);
      if (models.length > 0) spending[day] = Object.fromEntries(models.map(([model, charged]) => [model, Number(charged)]));
    });
    return spending;
  }

  async spendingBase(accountId: string, pool: string): Promise<SpendingBase | undefined> {
    const kept = await this.client.get(spendBaseKey(accountId, pool));
    return kept === null ? undefined : (JSON.parse(kept) as SpendingBase);
  }

  async saveSpendingBase(accountId: string, pool: string, base: SpendingBase): Promise<void> {
    await this.client.set(spendBaseKey(accountId, pool), JSON.stringify(base));
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
    await this.client.eval(REGISTER, { keys: [`${TOTALS_PREFIX}${accountId}:${pool}`] });
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

  /** EVALSHA of the append script (one command, one AbortSignal of the client's timeout, for the lot), loading it when Redis does not know it (first call, restart, flush). */
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
