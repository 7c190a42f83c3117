// Ledger storage of the embedded default, in the local database. One LMDB transaction per append
// (an event, or a delivery's events): the dedupe mark, the rows and the running totals move together.
// The embedded host appends a turn's events inside the turn's own commit instead (`writer`): no
// transaction of the ledger's own then, not even a nested one, and each account's totals are
// read and written once for the lot.
//
// Keys: `event\0<eventId>` (dedupe mark), `<topic>\0<account>\0<pool>\0<position, 12 digits>`
// (a row; positions from 1 in append order, so a reverse key range reads newest first),
// `totals\0<account>\0<pool>`, `spend\0<account>\0<pool>\0<YYYY-MM-DD>` (the day's charged sum per
// model, spending.ts) and `spendbase\0<account>\0<pool>` (the sums of rows from before those).

import { plus } from '../../lib/money';
import { FUNDS_HOLD_SOURCE, type EventEnvelope, type Topic, type UsageData } from '../../lib/events';
import type { Database } from 'lmdb';
import type { LocalDb } from '../../lib/local-db';
import { addCharged, dayOf, type DaySpending, type SpendingBase, type SpendingDays } from './spending';
import { eventParts, toRows, type AccountLedgerView, type AppendOutcome, type BillEntry, type LedgerAccount, type LedgerRow, type LedgerStore } from './entries';

interface Totals {
  balance: number;
  bills: number;
  /** Of the bills, those a FundsHold actor's events made (entries.ts); absent in totals written before it was counted. */
  fundsBills?: number;
  usage: number;
  usageRows: number;
  /** The usage rows the spending sums leave out (appended before they were kept); absent until the first append that keeps them. */
  spendFrom?: number;
}

const SEP = '\u0000';
const TOTALS_PREFIX = `totals${SEP}`;

const rowKey = (topic: Topic, accountId: string, pool: string, position: number) =>
  `${topic}${SEP}${accountId}${SEP}${pool}${SEP}${position.toString().padStart(12, '0')}`;
const totalsKey = (accountId: string, pool: string) => `${TOTALS_PREFIX}${accountId}${SEP}${pool}`;
const spendKey = (accountId: string, pool: string, day: string) => `spend${SEP}${accountId}${SEP}${pool}${SEP}${day}`;
const spendBaseKey = (accountId: string, pool: string) => `spendbase${SEP}${accountId}${SEP}${pool}`;

/** How many rows positions `from` to `to` hold when the account has at least `to` (positions are dense from 1). */
export function positionsIn(from: number, to: number): number {
  return to < from || to < 1 ? 0 : to - Math.max(1, from) + 1;
}

/** The account's rows at positions `from` to `to`, newest first (also the export reader's read, row-reader-process.ts). */
export function readRows(ledger: Database<unknown, string>, topic: Topic, accountId: string, pool: string, from: number, to: number): LedgerRow[] {
  if (positionsIn(from, to) === 0) return [];
  const start = Math.max(1, from);
  const rows: LedgerRow[] = [];
  for (const { value } of ledger.getRange({ start: rowKey(topic, accountId, pool, to), end: rowKey(topic, accountId, pool, start - 1), reverse: true })) {
    rows.push(value as LedgerRow);
  }
  return rows;
}

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
    const moved: Moved = { totals: new Map(), spend: new Map() };
    return {
      append: (event) => this.write(event, moved),
      finish: () => {
        for (const [key, value] of moved.totals) this.db.ledger.putSync(key, value);
        for (const [key, value] of moved.spend) this.db.ledger.putSync(key, value);
      },
    };
  }

  private appendAllSync(events: readonly EventEnvelope[]): AppendOutcome[] {
    return this.db.root.transactionSync(() => this.appendInTransaction(events));
  }

  async account(accountId: string, pool: string): Promise<AccountLedgerView> {
    const { balance, bills, fundsBills, usage, usageRows } = this.totals(accountId, pool);
    return { accountId, pool, balance, bills, ...(fundsBills !== undefined ? { fundsBills } : {}), usage, usageRows };
  }

  async spendingFrom(accountId: string, pool: string): Promise<number> {
    const totals = this.totals(accountId, pool);
    return totals.spendFrom ?? totals.usageRows;
  }

  async spendingDays(accountId: string, pool: string, fromDay: string, toDay: string): Promise<SpendingDays> {
    const days: SpendingDays = {};
    const prefix = spendKey(accountId, pool, '');
    for (const { key, value } of this.db.ledger.getRange({ start: spendKey(accountId, pool, fromDay), end: `${spendKey(accountId, pool, toDay)}${SEP}` })) {
      days[(key as string).slice(prefix.length)] = { ...(value as Record<string, number>) };
    }
    return days;
  }

  async spendingBase(accountId: string, pool: string): Promise<SpendingBase | undefined> {
    return this.db.ledger.get(spendBaseKey(accountId, pool)) as SpendingBase | undefined;
  }

  async saveSpendingBase(accountId: string, pool: string, base: SpendingBase): Promise<void> {
    this.db.ledger.putSync(spendBaseKey(accountId, pool), base);
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
    return readRows(this.db.ledger, topic, accountId, pool, from, to);
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
    const totals: Totals = { balance: stored?.balance ?? 0, bills: stored?.bills ?? 0, usage: stored?.usage ?? 0, usageRows: stored?.usageRows ?? 0 };
    if (stored?.spendFrom !== undefined) totals.spendFrom = stored.spendFrom;
    // No totals yet: no rows yet, so none made by FundsHold. Totals without the count: unknown, stays so.
    if (stored === undefined) totals.fundsBills = 0;
    else if (stored.fundsBills !== undefined) totals.fundsBills = stored.fundsBills;
    return totals;
  }

  /** The body of an append; runs inside a write transaction. The totals and sums it moves are in `moved` (by key), for the caller to write. */
  private write(event: EventEnvelope, moved: Moved): AppendOutcome {
    // A usage event with its bill is two parts, each appended once by its id (eventParts).
    let outcome: AppendOutcome = 'duplicate';
    for (const part of eventParts(event)) if (this.writePart(part, moved) === 'appended') outcome = 'appended';
    return outcome;
  }

  private writePart(event: EventEnvelope, moved: Moved): AppendOutcome {
    const ledger = this.db.ledger;
    if (ledger.get(`event${SEP}${event.id}`) !== undefined) return 'duplicate';
    const { accountId, pool } = event.data;
    const key = totalsKey(accountId, pool);
    let account = moved.totals.get(key);
    if (!account) moved.totals.set(key, (account = this.totals(accountId, pool)));
    const rows = toRows(event);
    if (event.topic === 'billing') {
      account.balance = plus(account.balance, (rows[0] as BillEntry).balanceDelta);
      if (event.source === FUNDS_HOLD_SOURCE && account.fundsBills !== undefined) account.fundsBills += 1;
      ledger.putSync(rowKey('billing', accountId, pool, ++account.bills), rows[0]);
    } else {
      account.usage += 1;
      account.spendFrom ??= account.usageRows;
      for (const row of rows) ledger.putSync(rowKey('usage', accountId, pool, ++account.usageRows), row);
      const { model, charged } = event.data as UsageData;
      const day = spendKey(accountId, pool, dayOf(event.occurredAt));
      let models = moved.spend.get(day);
      if (!models) moved.spend.set(day, (models = { ...((ledger.get(day) as DaySpending | undefined) ?? {}) }));
      addCharged(models, model, charged);
    }
    ledger.putSync(`event${SEP}${event.id}`, 1);
    return 'appended';
  }
}

/** What a writer's appends moved, written by its finish: totals and day sums by key. */
interface Moved {
  totals: Map<string, Totals>;
  spend: Map<string, DaySpending>;
}

/** Appends inside a write transaction the caller holds open (LmdbLedgerStore.writer). */
export interface LedgerWriter {
  append(event: EventEnvelope): AppendOutcome;
  /** Writes the running totals the appends moved; before the transaction commits. */
  finish(): void;
}
