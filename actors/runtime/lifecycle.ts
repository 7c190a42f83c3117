// An actor's lifecycle as one explicit table: for each state (and `new`, before the first) the
// state each move leads to; a move the table does not list is refused with the actor's own
// conflict. Every change of an image task's phase, an order's status and a run's phase passes
// `move`; FundsHold's holds have their own table of verdicts (funds-hold/transitions.ts), as an
// ended hold answers a repeated move instead of refusing it.

import type { GatewayError } from '../../lib/errors';

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
