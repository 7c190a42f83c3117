// The embedded default's local file database: LMDB (memory-mapped, transactional).
// Every write is a committed LMDB transaction before it is acknowledged, so a killed process
// loses nothing acknowledged; with GATEWAY_FSYNC=always each commit is also flushed to disk
// (survives a machine crash), otherwise the OS flushes it (see docs/durability.md).
// No write map (`useWritemap`), though it makes a commit cheaper: LMDB then sets the file's
// length to each process's map size, and a second process opening the environment (the tests,
// an operator's tool) cuts the file under the gateway, which dies with SIGBUS
// (docs/benchmarks.md, 2026-11-27).
//
// A write the database itself fails (a full disk, a file size limit, an I/O error) is not one to
// run on from: lmdb-js corrupts the process's heap on that path (measured with 3.5.6: a later
// allocation aborts the process, "corrupted size vs. prev_size", seconds after the failed commit,
// its callers hung meanwhile). `onWriteFailure` is told of each such failure as it is thrown, so
// the gateway can stop at once (docs/durability.md, "A write the disk refuses").

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';

export interface LocalDb {
  readonly root: RootDatabase;
  readonly actorState: Database<unknown, string>;
  readonly reminders: Database<unknown, string>;
  readonly outbox: Database<unknown, string>;
  readonly ledger: Database<unknown, string>;
  readonly accounts: Database<unknown, string>;
  close(): Promise<void>;
}

const FILE = 'gateway.lmdb';
const MAX_DBS = 16;
const sub = (root: RootDatabase, name: string) => root.openDB<unknown, string>({ name, encoding: 'msgpack' });

export interface LocalDbOptions {
  /** Flush every commit to disk (GATEWAY_FSYNC=always). */
  fsync?: boolean;
  /** Told of every write the database itself failed (not a value that could not be encoded), as it is thrown. */
  onWriteFailure?: (error: Error) => void;
}

/**
 * Whether an error is the database's own: lmdb-js throws those with its errno or LMDB status as
 * a numeric `code` (27 file too large, 28 no space, 5 I/O error, LMDB's negative codes). What a
 * write's own callback throws (a value that cannot be encoded, a turn's own refusal) has no
 * numeric code.
 */
export function isDatabaseFailure(error: unknown): error is Error {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'number';
}

/**
 * A database's `transactionSync`, telling `report` of a failure of the database's own before it
 * throws on. Every write of the gateway runs in one, once: a `putSync` or `removeSync` outside a
 * transaction opens its own through the database's `transactionSync`, and one inside a
 * transaction fails it. (Watching those two as well would tell the same failure twice.)
 * lmdb-js's asynchronous writes commit elsewhere; the gateway does not use them.
 */
function reportWriteFailures(db: Database<unknown, string> | RootDatabase, report: (error: Error) => void): void {
  const transactionSync = db.transactionSync.bind(db) as (...args: unknown[]) => unknown;
  (db as unknown as { transactionSync: (...args: unknown[]) => unknown }).transactionSync = (...args) => {
    try {
      return transactionSync(...args);
    } catch (error) {
      if (isDatabaseFailure(error)) report(error);
      throw error;
    }
  };
}

export function openLocalDb(dataDir: string, options: LocalDbOptions = {}): LocalDb {
  mkdirSync(dataDir, { recursive: true });
  const root = open({ path: join(dataDir, FILE), noSync: !options.fsync, encoding: 'msgpack', maxDbs: MAX_DBS });
  const db = {
    root,
    actorState: sub(root, 'actor-state'),
    reminders: sub(root, 'reminders'),
    outbox: sub(root, 'outbox'),
    ledger: sub(root, 'ledger'),
    accounts: sub(root, 'accounts'),
    close: () => root.close(),
  };
  const report = options.onWriteFailure;
  if (report) for (const each of [db.root, db.actorState, db.reminders, db.outbox, db.ledger, db.accounts]) reportWriteFailures(each, report);
  return db;
}

/**
 * The ledger of a data directory that a gateway has opened, read-only, for another process (the
 * export reader, services/ledger/row-reader.ts). LMDB lets processes share an environment: this
 * one only reads, and writes nothing, not even the file's length.
 */
export function openLedgerReadOnly(dataDir: string): { root: RootDatabase; ledger: Database<unknown, string> } {
  const root = open({ path: join(dataDir, FILE), readOnly: true, encoding: 'msgpack', maxDbs: MAX_DBS });
  return { root, ledger: sub(root, 'ledger') };
}
