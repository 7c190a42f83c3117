// The image task lifecycle (UNKNOWN_IMAGE_V1) as one explicit table: for each phase, the moves
// it accepts and the phase each move leads to. A move not in the table is refused.
//
//   (new) ──start──> running ──outcome──> settling ──settle──> succeeded
//                      │                      └──────release──> failed
//                      └──deadline (image_unknown_resolved)──> unknown ↺ late_artifact, late_released
//
// What is seen without determining the result (a timeout, a lost connection, a pending lookup)
// is kept as evidence on the record and is not a move.

import { GatewayError } from '../../lib/errors';
import { Lifecycle } from '../runtime/lifecycle';
import type { ImageTaskPhase } from './ImageTaskInterface';

export type ImageTaskMove =
  /** The hold is reserved and the task exists: the provider may be called. */
  | 'start'
  /** The provider's answer is known (an artifact, or a confirmed rejection); funds not yet moved. */
  | 'outcome'
  /** The hold is settled for the one image. */
  | 'settle'
  /** The hold is released after a confirmed rejection. */
  | 'release'
  /** The deadline passed with the result undetermined: the hold is released, evidence kept. */
  | 'deadline'
  /** A genuine artifact arrived after UNKNOWN: zero-charge IMAGE event emitted. */
  | 'late_artifact'
  /** The ledger acknowledged that event: the artifact is released to the owner. */
  | 'late_released';

export type From = ImageTaskPhase | 'new';

export const IMAGE_TASK_TRANSITIONS: Readonly<Record<From, Readonly<Partial<Record<ImageTaskMove, ImageTaskPhase>>>>> = {
  new: { start: 'running' },
  running: { outcome: 'settling', deadline: 'unknown' },
  settling: { settle: 'succeeded', release: 'failed' },
  succeeded: {},
  failed: {},
  unknown: { late_artifact: 'unknown', late_released: 'unknown' },
};

export const IMAGE_TASK_LIFECYCLE = new Lifecycle(IMAGE_TASK_TRANSITIONS, (from, move) => new GatewayError('task_state_conflict', `an image task cannot ${move} from ${from}`));

/** The phase `move` leads to from `from`, or undefined when the table forbids it. */
export const nextPhase = (from: From, move: ImageTaskMove): ImageTaskPhase | undefined => IMAGE_TASK_LIFECYCLE.next(from, move);
