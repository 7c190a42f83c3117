// An actor's lifecycle as one explicit table: for each state (and `new`, before the first) the
// state each move leads to; a move the table does not list is refused with the actor's own
// conflict. Every change of an image task's phase, an order's status and a run's phase is one
// call of `LifecycleRecord.move`: the table is consulted, the change is made and the record is
// written, in that order and in one step, so a refused move changes nothing and an allowed one
// cannot be left unwritten. FundsHold's holds have their own table of verdicts
// (funds-hold/transitions.ts), as an ended hold answers a repeated move instead of refusing it.

import type { GatewayError } from '../../lib/errors';
import type { ActorState } from './port';
import { StateRecord } from './state-record';

export type LifecycleTable<S extends string, M extends string> = Readonly<Record<S | 'new', Readonly<Partial<Record<M, S>>>>>;

export class Lifecycle<S extends string, M extends string> {
  constructor(readonly table: LifecycleTable<S, M>, private readonly refuse: (from: S | 'new', move: M) => GatewayError) {}

  /** The state `move` leads to from `from`, or undefined when the table forbids it. */
  next(from: S | 'new', move: M): S | undefined {
    return this.table[from][move];
  }

  /** The state `move` leads to from `from`; a move the table forbids is refused. */
  move(from: S | 'new', move: M): S {
    const to = this.next(from, move);
    if (to === undefined) throw this.refuse(from, move);
    return to;
  }
}

/** Where a record keeps its state: read it (`new` when it has none yet), set it. */
export interface StateField<T, S extends string> {
  of(record: T): S | 'new';
  set(record: T, to: S): void;
}

/** An actor's main record whose state changes only through its lifecycle table. */
export class LifecycleRecord<T, S extends string, M extends string> extends StateRecord<T> {
  constructor(
    state: ActorState,
    key: string,
    missing: string,
    private readonly lifecycle: Lifecycle<S, M>,
    private readonly field: StateField<T, S>,
    upgrade?: (stored: T) => T,
  ) {
    super(state, key, missing, upgrade);
  }

  /** The record made by `move` out of `new` (refused unless the table allows it), written. */
  create(move: M, build: (state: S) => T): T {
    const record = build(this.lifecycle.move('new', move));
    this.save(record);
    return record;
  }

  /**
   * The one step of every state change: `move` is tested against the table from the record's
   * state (refused: nothing happens, `change` does not run); then `change` runs (its awaits, such
   * as a funds call, happen inside the actor's turn), the new state is set and the record is
   * written. Returns the new state.
   */
  async move(record: T, move: M, change?: (record: T, to: S) => void | Promise<void>): Promise<S> {
    const to = this.lifecycle.move(this.field.of(record), move);
    await change?.(record, to);
    this.field.set(record, to);
    this.save(record);
    return to;
  }

  /** Whether the table allows `move` from the record's state. */
  allows(record: T, move: M): boolean {
    return this.lifecycle.next(this.field.of(record), move) !== undefined;
  }
}
