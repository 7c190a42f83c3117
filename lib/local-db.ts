// The embedded default's local file database: LMDB (memory-mapped, transactional).
// Every write is a committed LMDB transaction before it is acknowledged, so a killed process
// loses nothing acknowledged; with GATEWAY_FSYNC=always each commit is also flushed to disk
// (survives a machine crash), otherwise the OS flushes it (see docs/durability.md).
// No write map (`useWritemap`), though it makes a commit cheaper: LMDB then sets the file's
// length to each process's map size, and a second process opening the environment (the tests,
// an operator's tool) cuts the file under the gateway, which dies with SIGBUS
// (docs/benchmarks.md, 2026-11-27).

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

export function openLocalDb(dataDir: string, options: { fsync?: boolean } = {}): LocalDb {
  mkdirSync(dataDir, { recursive: true });
  const root = open({ path: join(dataDir, FILE), noSync: !options.fsync, encoding: 'msgpack', maxDbs: MAX_DBS });
  return {
    root,
    actorState: sub(root, 'actor-state'),
    reminders: sub(root, 'reminders'),
    outbox: sub(root, 'outbox'),
    ledger: sub(root, 'ledger'),
    accounts: sub(root, 'accounts'),
    close: () => root.close(),
  };
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
