// Ledger storage of the embedded default, in the local database. One LMDB transaction per event:
// the dedupe mark, the entry and the running balance move together.

import type { EventEnvelope } from '../../lib/events';
import type { LocalDb } from '../../lib/local-db';
import { toEntry, type AccountLedgerView, type BillEntry, type LedgerStore } from './entries';

interface Totals {
  balance: number;
  bills: number;
  usage: number;
}

export class LmdbLedgerStore implements LedgerStore {
  constructor(private readonly db: LocalDb) {}

  async append(event: EventEnvelope): Promise<'appended' | 'duplicate'> {
    return this.appendSync(event);
  }

  appendSync(event: EventEnvelope): 'appended' | 'duplicate' {
    const ledger = this.db.ledger;
    const entry = toEntry(event);
    const { accountId, pool } = entry;
    return this.db.root.transactionSync(() => {
      if (ledger.get(`event\u0000${event.id}`) !== undefined) return 'duplicate' as const;
      const totalsKey = `totals\u0000${accountId}\u0000${pool}`;
      const totals = (ledger.get(totalsKey) as Totals | undefined) ?? { balance: 0, bills: 0, usage: 0 };
      const seq = event.topic === 'billing' ? ++totals.bills : ++totals.usage;
      if (event.topic === 'billing') totals.balance += (entry as BillEntry).balanceDelta;
      ledger.putSync(`event\u0000${event.id}`, 1);
      ledger.putSync(`${event.topic}\u0000${accountId}\u0000${pool}\u0000${seq.toString().padStart(12, '0')}`, entry);
      ledger.putSync(totalsKey, totals);
      return 'appended' as const;
    });
  }

  async account(accountId: string, pool: string): Promise<AccountLedgerView> {
    const totals = (this.db.ledger.get(`totals\u0000${accountId}\u0000${pool}`) as Totals | undefined) ?? { balance: 0, bills: 0, usage: 0 };
    return { accountId, pool, ...totals };
  }

  async has(eventId: string): Promise<boolean> {
    return this.db.ledger.get(`event\u0000${eventId}`) !== undefined;
  }

  async close(): Promise<void> {}
}
