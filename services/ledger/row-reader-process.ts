// The export reader of the embedded host: a child process of the gateway (./row-reader.ts) that
// reads ledger rows for exports from the gateway's own data directory, read-only. LMDB reads
// through a memory map of the file: the pages a million-row export reads would stay mapped, and
// counted in the resident set, of the process that read them. Here they count in this process,
// which the gateway ends once its resident set passes a bound, and starts again for what is left.
//
// Protocol (IPC, one request at a time or several): { id, topic, accountId, pool, from, to } →
// { id, rows, rss } (rss: this process's resident set after the read, bytes) or { id, error }.
// It ends when the gateway disconnects (also when the gateway dies: the channel closes).

import '../../lib/node-version'; // first: stops on Node older than 24 with the way out
import { faultPoint } from '../../lib/fault-points';
import { openLedgerReadOnly } from '../../lib/local-db';
import type { Topic } from '../../lib/events';
import { readRows } from './lmdb-store';

export interface RowRequest {
  id: number;
  topic: Topic;
  accountId: string;
  pool: string;
  from: number;
  to: number;
}

export interface RowAnswer {
  id: number;
  rows?: unknown[];
  rss?: number;
  error?: string;
}

function serve(dataDir: string): void {
  const { root, ledger } = openLedgerReadOnly(dataDir);
  process.on('message', (request: RowRequest) => {
    faultPoint('export-reader-read');
    let answer: RowAnswer;
    try {
      // A fresh snapshot: the rows the gateway counted before asking are all committed.
      root.resetReadTxn();
      answer = { id: request.id, rows: readRows(ledger, request.topic, request.accountId, request.pool, request.from, request.to), rss: process.memoryUsage.rss() };
    } catch (error) {
      answer = { id: request.id, error: error instanceof Error ? error.message : String(error) };
    }
    process.send?.(answer);
  });
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module) {
  const dataDir = process.env.ROW_READER_DATA_DIR;
  if (!dataDir || !process.send) {
    console.error('row-reader-process: started by the gateway only (an IPC channel and ROW_READER_DATA_DIR)');
    process.exit(2);
  }
  serve(dataDir);
}
