// Ledger storage of the embedded default, in the local database. One LMDB transaction per append
// (an event, or a delivery's events): the dedupe mark, the rows and the running totals move together.
// The embedded host appends a turn's events inside the turn's own commit instead (`writer`): no
// transaction of the ledger's own then, not even a nested one, and each account's totals are
// read and written once for the lot.
//
// Keys: `event\0<eventId>` (dedupe mark), `<topic>\0<account>\0<pool>\0<position, 12 digits>`
// (a row; positions from 1 in append order, so a reverse key range reads newest first) and
// `totals\0<account>\0<pool>`.

import { plus } from '../../lib/money';
import type { EventEnvelope, Topic } from '../../lib/events';
import type { LocalDb } from '../../lib/local-db';
import { eventParts, toRows, type AccountLedgerView, type AppendOutcome, type BillEntry, type LedgerAccount, type LedgerRow, type LedgerStore } from './entries';

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
    return this.appendAllSync([event])[0];
  }

  /** Appends many events in one transaction (bulk loads: benchmarks, imports); each still once by id. */
  appendBatch(events: EventEnvelope[]): number {
    return this.appendAllSync(events).filter((outcome) => outcome === 'appended').length;
  }

  /** Appends the events inside the caller's write transaction (which must be open): one outcome each. */
  appendInTransaction(events: readonly EventEnvelope[]): AppendOutcome[] {
    const writer = this.writer();
    const outcomes = events.map((event) => writer.append(event));
    writer.finish();
    return outcomes;
  }

  /**
   * Appends inside the caller's write transaction, which must be open (no transaction of the
   * ledger's own, not even a nested one: LMDB's cost per commit is paid once, by the caller).
   * Each account's running totals are read once and written by `finish`, which must be called
   * before that transaction commits.
   */
  writer(): LedgerWriter {
    const totals = new Map<string, Totals>();
    return {
      append: (event) => this.write(event, totals),
      finish: () => {
        for (const [key, value] of totals) this.db.ledger.putSync(key, value);
      },
    };
  }

  private appendAllSync(events: readonly EventEnvelope[]): AppendOutcome[] {
    return this.db.root.transactionSync(() => this.appendInTransaction(events));
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

  /** The body of an append; runs inside a write transaction. The totals it moves are in `totals` (by key), for the caller to write. */
  private write(event: EventEnvelope, totals: Map<string, Totals>): AppendOutcome {
    // A usage event with its bill is two parts, each appended once by its id (eventParts).
    let outcome: AppendOutcome = 'duplicate';
    for (const part of eventParts(event)) if (this.writePart(part, totals) === 'appended') outcome = 'appended';
    return outcome;
  }

  private writePart(event: EventEnvelope, totals: Map<string, Totals>): AppendOutcome {
    const ledger = this.db.ledger;
    if (ledger.get(`event${SEP}${event.id}`) !== undefined) return 'duplicate';
    const { accountId, pool } = event.data;
    const key = totalsKey(accountId, pool);
    let account = totals.get(key);
    if (!account) totals.set(key, (account = this.totals(accountId, pool)));
    const rows = toRows(event);
    if (event.topic === 'billing') {
      account.balance = plus(account.balance, (rows[0] as BillEntry).balanceDelta);
      ledger.putSync(rowKey('billing', accountId, pool, ++account.bills), rows[0]);
    } else {
      account.usage += 1;
      for (const row of rows) ledger.putSync(rowKey('usage', accountId, pool, ++account.usageRows), row);
    }
    ledger.putSync(`event${SEP}${event.id}`, 1);
    return 'appended';
  }
}

/** Appends inside a write transaction the caller holds open (LmdbLedgerStore.writer). */
export interface LedgerWriter {
  append(event: EventEnvelope): AppendOutcome;
  /** Writes the running totals the appends moved; before the transaction commits. */
  finish(): void;
}
