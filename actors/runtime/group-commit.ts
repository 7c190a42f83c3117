// The embedded host's group commit: the turns handed over together are written in one LMDB
// transaction. The group is committed at the end of this pass of the event loop (setImmediate,
// never a timer), so every turn that ends in the same pass joins it: under load the answers of
// many provider calls arrive in one pass, and their settles share one commit. (Committing a turn
// at once when no other was queued or running grouped almost nothing: a turn runs to its end in
// one go, so at commit time none was ever "running"; each chat paid two LMDB commits.) A lone
// turn waits only for the rest of its pass. Each turn's promise resolves only after the
// transaction holding it has committed. Should the group's transaction fail, each of its turns is tried again alone, so
// one bad turn fails only itself (and the later turns of its own actor, which read its writes).

import type { RootDatabase } from 'lmdb';
import { TurnFailedEarlier, type Activation, type CommitRequest, type TurnBuffer } from './kernel';

interface Entry {
  activation: Activation;
  request: CommitRequest;
  /** Set once the transaction holding it has committed. */
  committed: boolean;
  /** Set when it could not be committed. */
  error?: unknown;
  /** The promise the turn awaits. */
  resolve?: () => void;
  reject?: (error: unknown) => void;
}

/** A turn not written: the data directory was taken by another process (this one stops). */
export class DataDirLost extends Error {
  constructor() {
    super('the data directory was taken by another process: nothing more is written here');
  }
}

export class GroupCommitter {
  private queue: Entry[] = [];
  private scheduled = false;
  private transactions = 0;
  private turns = 0;
  /** When a transaction last failed in the database itself (not in a turn's writes), until one commits. */
  private storageFailedAt: number | undefined;

  /**
   * `write` puts one turn's changes; it runs inside the group's transaction. `held`, when given,
   * is asked before each transaction: false (the data directory is another process's now) fails
   * the whole group, nothing written.
   */
  constructor(
    private readonly root: RootDatabase,
    private readonly write: (activation: Activation, turn: TurnBuffer) => void,
    private readonly held?: () => boolean,
  ) {}

  /** Commits the turn with its group at the end of this pass of the event loop: settles once committed (or not). */
  commit(activation: Activation, request: CommitRequest): Promise<void> {
    const entry: Entry = { activation, request, committed: false };
    this.queue.push(entry);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    return new Promise<void>((resolve, reject) => {
      entry.resolve = resolve;
      entry.reject = reject;
    });
  }

  stats(): { transactions: number; turns: number } {
    return { transactions: this.transactions, turns: this.turns };
  }

  /**
   * Whether the database failed a commit of its own (a full disk, an I/O error) within the last
   * `withinMs`, with no transaction committed since. A turn whose own writes throw (a value that
   * cannot be encoded) is that turn's failure, not the database's. For readiness: a write that
   * only rewrites a key can still succeed on a full disk (the database reuses its freed pages)
   * while the turns that need new pages fail.
   */
  storageFailing(withinMs: number, now = Date.now()): boolean {
    return this.storageFailedAt !== undefined && now - this.storageFailedAt < withinMs;
  }

  private readonly flush = (): void => {
    const group = this.queue;
    this.queue = [];
    this.scheduled = false;
    if (group.length === 0) return;
    if (this.held && !this.held()) {
      const error = new DataDirLost();
      for (const entry of group) {
        entry.request.abort();
        entry.reject?.(error);
      }
      return;
    }
    try {
      this.transaction(() => {
        for (const entry of group) if (entry.request.live()) this.write(entry.activation, entry.request.turn);
      });
      let turns = 0;
      for (const entry of group) {
        if (!entry.request.live()) continue;
        entry.committed = true;
        turns++;
      }
      this.count(turns);
    } catch {
      // Nothing of the group was committed: each turn alone, in order.
      for (const entry of group) {
        if (!entry.request.live()) continue;
        try {
          this.transaction(() => this.write(entry.activation, entry.request.turn));
          this.count(1);
          entry.committed = true;
        } catch (error) {
          // At once, before the next entry: the actor's later turns read this one's writes.
          entry.request.abort();
          entry.error = error;
        }
      }
    }
    for (const entry of group) {
      if (entry.committed) entry.resolve?.();
      else entry.reject?.(entry.error ?? new TurnFailedEarlier());
    }
  };

  /** One LMDB transaction, telling a failure of the writes (rethrown as is) from one of the database. */
  private transaction(writes: () => void): void {
    let writesFailed = false;
    try {
      this.root.transactionSync(() => {
        try {
          writes();
        } catch (error) {
          writesFailed = true;
          throw error;
        }
      });
      this.storageFailedAt = undefined;
    } catch (error) {
      if (!writesFailed) this.storageFailedAt = Date.now();
      throw error;
    }
  }

  private count(turns: number): void {
    if (turns === 0) return;
    this.transactions++;
    this.turns += turns;
  }
}
