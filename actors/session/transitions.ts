// A run's lifecycle as one explicit table: for each phase, the moves it accepts and the phase
// each leads to. A move not in the table is refused. A session has at most one running run.
//
//   (new) ──start──> running ↺ output
//                      ├──complete──> completed
//                      ├──fail──────> failed       (the provider failed, or the run was cut)
//                      └──expire────> failed       (its lease ran out: the carrying process vanished)

import { GatewayError } from '../../lib/errors';
import { Lifecycle } from '../runtime/lifecycle';

export type RunPhase = 'running' | 'completed' | 'failed';

export type RunMove =
  /** The hold is reserved and run.started appended: the provider may be called. */
  | 'start'
  /** Output (or a heartbeat) from the process carrying the run: the lease is pushed out. */
  | 'output'
  /** The provider finished: usage settled, run.completed appended. */
  | 'complete'
  /** The call failed or was cut: what was produced settled (else released), run.failed appended. */
  | 'fail'
  /** The lease reminder found the run silent: hold released, run.failed appended. */
  | 'expire';

export type From = RunPhase | 'new';

export const RUN_TRANSITIONS: Readonly<Record<From, Readonly<Partial<Record<RunMove, RunPhase>>>>> = {
  new: { start: 'running' },
  running: { output: 'running', complete: 'completed', fail: 'failed', expire: 'failed' },
  completed: {},
  failed: {},
};

export const RUN_LIFECYCLE = new Lifecycle(RUN_TRANSITIONS, (from, move) => new GatewayError('run_not_active', `a run cannot ${move} from ${from}`));

/** The phase `move` leads to from `from`, or undefined when the table forbids it. */
export const nextRunPhase = (from: From, move: RunMove): RunPhase | undefined => RUN_LIFECYCLE.next(from, move);
