// Exports' rows on the embedded host, read in a child process (./row-reader-process.ts) so that
// the ledger pages an export reads are not mapped into the gateway: LMDB reads through a memory
// map, and each page read stays in the resident set of the process that read it. A million-row
// export maps some 660 MB of the file; read here, that would be the gateway's. The child reports
// its resident set with each answer; past `rssBoundMb` it is ended once its answers are out, and
// the next read goes to its successor, started when it passed three quarters of the bound (so
// that the switch does not wait for a start). Idle for `idleMs`, both are ended. Only one serves
// at a time.
//
// Rows are money records: an export never depends on the child. A read it cannot give (it could
// not start, it died, its snapshot lacked rows the gateway had counted) is made in this process
// instead, and for a minute after such a failure every read is. So is every read when the build
// has no child script (tests that run the TypeScript sources).

import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Topic } from '../../lib/events';
import { metrics } from '../../lib/metrics';
import { NODE_FLAGS } from '../../lib/node-flags';
import type { LedgerRow, LedgerStore } from './entries';
import { positionsIn } from './lmdb-store';
import type { RowAnswer, RowRequest } from './row-reader-process';

const SCRIPT = join(__dirname, 'row-reader-process.js');
const DEFAULT_IDLE_MS = 30_000;
/** The share of its bound at which a reader's successor is started. */
const SPARE_AT = 0.75;
/** How long closing waits for a reader's answers before killing it. */
const CLOSE_WAIT_MS = 2000;
/** After a failed read, reads stay in this process for this long. */
const FAILED_PAUSE_MS = 60_000;

export type RowSource = Pick<LedgerStore, 'rows'>;

interface Pending {
  resolve: (rows: LedgerRow[]) => void;
  reject: (error: Error) => void;
}

interface Reader {
  child: ChildProcess;
  pending: Map<number, Pending>;
  /** Past its bound (or idle): ended once its answers are out, never given another request. */
  retiring: boolean;
}

export interface RowReaderOptions {
  /** The child's resident set (MB) past which it is ended; 0: every read in this process. */
  rssBoundMb: number;
  idleMs?: number;
  /** Told of a read made in this process instead (why). */
  onFallback?: (reason: string) => void;
}

export class ExportRowReader implements RowSource {
  private current: Reader | undefined;
  /** Started when the current one nears its bound: it takes over without a wait for its start. */
  private spare: Reader | undefined;
  private readonly readers = new Set<Reader>();
  private nextId = 0;
  private failedAt = -Infinity;
  private idle: NodeJS.Timeout | undefined;
  private closed = false;
  /** The build's child script (absent when tests run the TypeScript sources). */
  private readonly scriptThere = existsSync(SCRIPT);

  constructor(
    private readonly dataDir: string,
    private readonly local: RowSource,
    private readonly options: RowReaderOptions,
  ) {}

  async rows(topic: Topic, accountId: string, pool: string, from: number, to: number): Promise<LedgerRow[]> {
    if (this.closed || this.options.rssBoundMb === 0 || !this.scriptThere || performance.now() - this.failedAt < FAILED_PAUSE_MS) return this.readLocally(topic, accountId, pool, from, to);
    const expected = positionsIn(from, to);
    try {
      const rows = await this.ask({ id: this.nextId++, topic, accountId, pool, from, to });
      // The caller counted the rows before asking: all of them are there.
      if (rows.length !== expected) throw new Error(`the export reader read ${rows.length} of the ${expected} rows at positions ${from}–${to}`);
      metrics.exportRead('reader');
      return rows;
    } catch (error) {
      this.failedAt = performance.now();
      this.options.onFallback?.((error as Error).message);
      return this.readLocally(topic, accountId, pool, from, to);
    }
  }

  /** Ends every child (one still busy after CLOSE_WAIT_MS is killed); later reads are made in this process. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idle);
    const exits = [...this.readers].map((reader) => new Promise<void>((resolve) => {
      if (reader.child.exitCode !== null || reader.child.signalCode !== null) return resolve();
      reader.child.once('exit', () => resolve());
      this.retire(reader);
    }));
    const killer = setTimeout(() => {
      for (const reader of this.readers) this.gone(reader, new Error('the gateway is stopping'));
    }, CLOSE_WAIT_MS);
    killer.unref();
    await Promise.all(exits);
    clearTimeout(killer);
  }

  private readLocally(topic: Topic, accountId: string, pool: string, from: number, to: number): Promise<LedgerRow[]> {
    metrics.exportRead('gateway');
    return this.local.rows(topic, accountId, pool, from, to);
  }

  private ask(request: RowRequest): Promise<LedgerRow[]> {
    clearTimeout(this.idle);
    const reader = this.reader();
    return new Promise<LedgerRow[]>((resolve, reject) => {
      reader.pending.set(request.id, { resolve, reject });
      // Referenced while a read is pending (the process waits for it); idle, it keeps nothing alive.
      if (reader.pending.size === 1) reader.child.channel?.ref();
      reader.child.send(request, (error) => {
        if (error) this.gone(reader, error);
      });
    });
  }

  private reader(): Reader {
    if (this.current && !this.current.retiring) return this.current;
    this.current = this.spare ?? this.spawn();
    this.spare = undefined;
    return this.current;
  }

  private spawn(): Reader {
    const child = fork(SCRIPT, [], {
      execArgv: [...NODE_FLAGS],
      env: { ...process.env, ROW_READER_DATA_DIR: this.dataDir },
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.unref();
    child.channel?.unref();
    const reader: Reader = { child, pending: new Map(), retiring: false };
    metrics.exportReaderStarted();
    this.readers.add(reader);
    child.on('message', (answer: RowAnswer) => this.answered(reader, answer));
    child.on('error', (error) => this.gone(reader, error));
    child.on('exit', (code, signal) => {
      this.readers.delete(reader);
      this.gone(reader, new Error(`the export reader exited (${signal ?? code})`));
    });
    return reader;
  }

  private answered(reader: Reader, answer: RowAnswer): void {
    const waiting = reader.pending.get(answer.id);
    if (!waiting) return;
    reader.pending.delete(answer.id);
    if (reader.pending.size === 0) reader.child.channel?.unref();
    if (answer.rows) waiting.resolve(answer.rows as LedgerRow[]);
    else waiting.reject(new Error(`the export reader failed: ${answer.error ?? 'no rows'}`));
    const boundBytes = this.options.rssBoundMb * 1024 * 1024;
    const rss = answer.rss ?? 0;
    if (rss > boundBytes || reader.retiring) return this.retire(reader);
    // Near its bound: its successor starts now, so that the switch does not wait for a start.
    if (rss > SPARE_AT * boundBytes && this.current === reader && !this.spare) {
      try {
        this.spare = this.spawn();
      } catch {
        // None now: the next read starts one (or, failing, is made in this process).
      }
    }
    if (reader.pending.size === 0) this.armIdle(reader);
  }

  private armIdle(reader: Reader): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (reader.pending.size > 0) return;
      this.retire(reader);
      if (this.spare) this.retire(this.spare);
    }, this.options.idleMs ?? DEFAULT_IDLE_MS);
    this.idle.unref();
  }

  /** No more requests for it; it ends once its answers are out (it exits when disconnected). */
  private retire(reader: Reader): void {
    reader.retiring = true;
    if (this.current === reader) this.current = undefined;
    if (this.spare === reader) this.spare = undefined;
    if (reader.pending.size === 0 && reader.child.connected) reader.child.disconnect();
  }

  /** It died or could not be reached: its pending reads fail (each is then made in this process). */
  private gone(reader: Reader, error: Error): void {
    reader.retiring = true;
    if (this.current === reader) this.current = undefined;
    if (this.spare === reader) this.spare = undefined;
    const waiting = [...reader.pending.values()];
    reader.pending.clear();
    for (const { reject } of waiting) reject(error);
    if (reader.child.exitCode === null && reader.child.signalCode === null) reader.child.kill('SIGKILL');
  }
}
