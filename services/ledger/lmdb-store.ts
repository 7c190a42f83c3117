// Ledger storage of the embedded default, in the local database. One LMDB transaction per append
// (an event, or a delivery's events): the dedupe mark, the rows and the running totals move together.
//
// Keys: `event\0<eventId>` (dedupe mark), `<topic>\0<account>\0<pool>\0<position, 12 digits>`
// (a row; positions from 1 in append order, so a reverse key range reads newest first) and
// `totals\0<account>\0<pool>`.

import { plus } from '../../lib/money';
import type { EventEnvelope, Topic } from '../../lib/events';
import type { LocalDb } from '../../lib/local-db';
import { toRows, type AccountLedgerView, type AppendOutcome, type BillEntry, type LedgerAccount, type LedgerRow, type LedgerStore } from './entries';

interface Totals {
  balance: number;
  bills: number;
  usage: number;
  usageRows: number;
}

const SEP = '\u0000';
const TOTALS_PREFIX = `totals${SEP}`;

const rowKey = (topic: Topic, accountId: string, pool: string, position: number) =>
  `${topic}${SEP}${accountId}${SEP}${pool}${SEP}${position.toString().padStart(12, '0')}`;
const totalsKey = (accountId: string, pool: string) => `${TOTALS_PREFIX}${accountId}${SEP}${pool}`;

export class LmdbLedgerStore implements LedgerStore {
  constructor(private readonly db: LocalDb) {}

  async append(event: EventEnvelope): Promise<AppendOutcome> {
    return this.appendSync(event);
  }

  /** One transaction for the lot: all of them or none. */
  async appendAll(events: readonly EventEnvelope[]): Promise<AppendOutcome[]> {
    return this.appendAllSync(events);
  }

  appendSync(event: EventEnvelope): AppendOutcome {
    return this.db.root.transactionSync(() => this.write(event));
  }

  /** Appends many events in one transaction (bulk loads: benchmarks, imports); each still once by id. */
  appendBatch(events: EventEnvelope[]): number {
    return this.appendAllSync(events).filter((outcome) => outcome === 'appended').length;
  }

  private appendAllSync(events: readonly EventEnvelope[]): AppendOutcome[] {
    return this.db.root.transactionSync(() => events.map((event) => this.write(event)));
  }

  async account(accountId: string, pool: string): Promise<AccountLedgerView> {
    return { accountId, pool, ...this.totals(accountId, pool) };
  }

  async has(eventId: string): Promise<boolean> {
    return this.db.ledger.get(`event${SEP}${eventId}`) !== undefined;
  }

  async stored(ids: readonly string[]): Promise<string[]> {
    return ids.filter((id) => this.db.ledger.get(`event${SEP}${id}`) !== undefined);
  }

  async register(accountId: string, pool: string): Promise<void> {
    // The totals record is the index the listing reads: created with zeros, never reset.
    this.db.root.transactionSync(() => {
      if (this.db.ledger.get(totalsKey(accountId, pool)) === undefined) this.db.ledger.putSync(totalsKey(accountId, pool), this.totals(accountId, pool));
    });
  }

  async count(topic: Topic, accountId: string, pool: string): Promise<number> {
    const totals = this.totals(accountId, pool);
    return topic === 'billing' ? totals.bills : totals.usageRows;
  }

  async rows(topic: Topic, accountId: string, pool: string, from: number, to: number): Promise<LedgerRow[]> {
    if (to < from || to < 1) return [];
    const start = Math.max(1, from);
    const rows: LedgerRow[] = [];
    for (const { value } of this.db.ledger.getRange({ start: rowKey(topic, accountId, pool, to), end: rowKey(topic, accountId, pool, start - 1), reverse: true })) {
      rows.push(value as LedgerRow);
    }
    return rows;
  }

  async *accounts(): AsyncIterable<LedgerAccount> {
    for (const key of this.db.ledger.getKeys({ start: TOTALS_PREFIX, end: `totals\u0001` })) {
      const [accountId, pool] = (key as string).slice(TOTALS_PREFIX.length).split(SEP);
      yield { accountId, pool };
    }
  }

  async close(): Promise<void> {}

  private totals(accountId: string, pool: string): Totals {
    const stored = this.db.ledger.get(totalsKey(accountId, pool)) as Partial<Totals> | undefined;
    return { balance: stored?.balance ?? 0, bills: stored?.bills ?? 0, usage: stored?.usage ?? 0, usageRows: stored?.usageRows ?? 0 };
  }

  /** The body of an append; runs inside a write transaction. */
  private write(event: EventEnvelope): AppendOutcome {
    const ledger = this.db.ledger;
    if (ledger.get(`event${SEP}${event.id}`) !== undefined) return 'duplicate';
    const { accountId, pool } = event.data;
    const totals = this.totals(accountId, pool);
    const rows = toRows(event);
    if (event.topic === 'billing') {
      totals.balance = plus(totals.balance, (rows[0] as BillEntry).balanceDelta);
      ledger.putSync(rowKey('billing', accountId, pool, ++totals.bills), rows[0]);
    } else {
      totals.usage += 1;
      for (const row of rows) ledger.putSync(rowKey('usage', accountId, pool, ++totals.usageRows), row);
    }
    ledger.putSync(`event${SEP}${event.id}`, 1);
    ledger.putSync(totalsKey(accountId, pool), totals);
    return 'appended';
  }
}
