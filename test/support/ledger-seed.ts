// Events appended straight to a running embedded gateway's ledger, as its own commits would
// append them: LMDB is multi-process, so a test opens the gateway's data directory beside it.
// For tests that need ledger rows no actor made (a forged bill for reconciliation to find) or
// many rows fast.

import type { EventEnvelope } from '../../lib/events';
import { openLocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';

/** The seed of the embedded gateway whose data directory is `dataDir`. */
export function embeddedLedgerSeed(dataDir: string): (events: EventEnvelope[]) => Promise<void> {
  return async (events) => {
    const db = openLocalDb(dataDir);
    try {
      new LmdbLedgerStore(db).appendBatch(events);
    } finally {
      await db.close();
    }
  };
}
