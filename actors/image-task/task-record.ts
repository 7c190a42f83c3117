// An image task's record as the ImageTask actor stores it (one key, read by every turn; the
// artifact lives under its own key), and the view an answer shows of it.

import type { ImageArtifact } from '../../providers/port';
import type { ImageTaskPhase, ImageTaskView, LateArtifactView, Observation, Owner, SentImageCall, UnknownEvidence } from './ImageTaskInterface';

export interface TaskRecord {
  phase: ImageTaskPhase;
  owner: Owner;
  fingerprint: string;
  requestId: string;
  /** The start that created it (absent in records stored before: then no start repeats it). */
  startId?: string;
  model: string;
  profileId: string;
  price: string;
  holdId: string;
  reservedAt: number;
  deadlineAt: number;
  call: SentImageCall & { sentAt: number };
  seen: Observation[];
  /** `artifact` inline only in records stored before it had its own key (ARTIFACT_KEY). */
  /** A failure's `via`: how it was learnt (absent in records stored before: the response). */
  outcome?: { kind: 'succeeded'; artifact?: ImageArtifact } | { kind: 'failed'; reason: string; via?: 'response' | 'lookup' };
  charged: string;
  unknown?: UnknownEvidence;
  late?: LateArtifactView & { artifact?: ImageArtifact };
}

export async function taskView(taskId: string, task: TaskRecord, loadArtifact: () => Promise<ImageArtifact | undefined>): Promise<ImageTaskView> {
  const shown = task.phase === 'succeeded' && task.outcome?.kind === 'succeeded'
    ? task.outcome
    : task.late?.state === 'released' ? task.late : undefined;
  const artifact = shown && (shown.artifact ?? await loadArtifact());
  return {
    taskId,
    status: task.phase === 'running' || task.phase === 'settling' ? 'unresolved' : task.phase,
    phase: task.phase,
    model: task.model,
    profileId: task.profileId,
    provider: task.call.provider,
    reservedAt: task.reservedAt,
    deadlineAt: task.deadlineAt,
    call: task.call,
    fingerprint: task.fingerprint,
    charged: Number(task.charged),
    ...(artifact ? { artifact } : {}),
    ...(task.phase === 'failed' && task.outcome?.kind === 'failed' ? { failure: task.outcome.reason, failedVia: task.outcome.via ?? 'response' } : {}),
    ...(task.unknown ? { unknown: task.unknown } : {}),
    ...(task.late ? { lateArtifact: { state: task.late.state, arrivedAt: task.late.arrivedAt, eventIds: task.late.eventIds } } : {}),
  };
}

export function sameOwner(a: Owner, b: Owner): boolean {
  return a.accountId === b.accountId && a.apiKeyId === b.apiKeyId;
}
