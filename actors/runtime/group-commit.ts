// The embedded host's group commit: the turns handed over during one pass of the event loop are
// written in one LMDB transaction, committed once the pass is done (setImmediate: no timer, so a
// lone turn waits for nothing). Each turn's promise resolves only after the transaction holding it
// has committed. Should the group's transaction fail, each of its turns is tried again alone, so
// one bad turn fails only itself (and the later turns of its own actor, which read its writes).

import type { RootDatabase } from 'lmdb';
import { TurnFailedEarlier, type Activation, type CommitRequest, type TurnBuffer } from './kernel';

interface Entry {
  activation: Activation;
  request: CommitRequest;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class GroupCommitter {
  private queue: Entry[] = [];
  private scheduled = false;
  private transactions = 0;
  private turns = 0;

  /** `write` puts one turn's changes; it runs inside the group's transaction. */
  constructor(private readonly root: RootDatabase, private readonly write: (activation: Activation, turn: TurnBuffer) => void) {}

  commit(activation: Activation, request: CommitRequest): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ activation, request, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  stats(): { transactions: number; turns: number } {
    return { transactions: this.transactions, turns: this.turns };
  }

  private readonly flush = (): void => {
    const group = this.queue;
    this.queue = [];
    this.scheduled = false;
    let committed: Entry[] = [];
    try {
      this.root.transactionSync(() => {
        committed = [];
        for (const entry of group) {
          if (!entry.request.live()) continue;
          this.write(entry.activation, entry.request.turn);
          committed.push(entry);
        }
      });
      this.count(committed.length);
    } catch {
      // Nothing of the group was committed: each turn alone, in order.
      committed = [];
      for (const entry of group) {
        if (!entry.request.live()) continue;
        try {
          this.root.transactionSync(() => this.write(entry.activation, entry.request.turn));
          this.count(1);
          committed.push(entry);
        } catch (error) {
          // At once, before the next entry: the actor's later turns read this one's writes.
          entry.request.abort();
          entry.reject(error);
        }
      }
    }
    const done = new Set(committed);
    for (const entry of group) {
      if (done.has(entry)) entry.resolve();
      else if (!entry.request.live()) entry.reject(new TurnFailedEarlier());
    }
  };

  private count(turns: number): void {
    if (turns === 0) return;
    this.transactions++;
    this.turns += turns;
  }
}
