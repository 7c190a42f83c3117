// The public API of the ImageTask actor: one actor per image task, the task id is the actor id.
// It carries one single-image generation under the UNKNOWN_IMAGE_V1 contract (docs/images.md): the
// hold on the owner's FundsHold, what was sent and seen, the outcome, the 24-hour deadline.
// Callers depend on this file only; the actor type name "ImageTask" is frozen.

import { z } from 'zod';
import { GatewayError } from '../../lib/errors';
import { IMAGE_UNKNOWN_DEADLINE_MS } from '../../lib/config';
import { PLATFORM_CREDENTIALS_REFUSED, PROVIDER_RATE_LIMITED, type ImageArtifact, type SimDirectives } from '../../providers/port';
import { keyIdArg, spendScopesArg, type SpendScopes } from '../funds-hold/FundsHoldInterface';

export const IMAGE_TASK_ACTOR_TYPE = 'ImageTask';
export const UNKNOWN_IMAGE_PROFILE = 'UNKNOWN_IMAGE_V1';
/** The resolution that moves an undetermined task to UNKNOWN at its deadline. */
export const IMAGE_UNKNOWN_RESOLVED = 'image_unknown_resolved';

/** Internal phases (the transition table in transitions.ts). */
export type ImageTaskPhase = 'running' | 'settling' | 'succeeded' | 'failed' | 'unknown';
/** What clients see: running and settling are both "unresolved" (result cannot yet be determined). */
export type ImageTaskStatus = 'unresolved' | 'succeeded' | 'failed' | 'unknown';

/** The provider call as it was sent: evidence, and what a provider lookup is asked about. */
export interface SentImageCall {
  provider: string;
  upstreamModel: string;
  prompt: string;
  responseFormat: 'url' | 'b64_json';
  passthrough: Record<string, unknown>;
  directives?: SimDirectives;
}

export interface Owner {
  accountId: string;
  apiKeyId: string;
}

export interface StartRequest {
  owner: Owner;
  /** SHA-256 of the request (model, body, directives): the same key with another payload conflicts. */
  fingerprint: string;
  requestId: string;
  /**
   * Unique per start request, made by the gateway (its retries by daprd repeat it; requestId may
   * come from the client and repeat across the client's retries): a repeat of the start that
   * created the task is still its owner, any other start a retry (ImageTask.start). Also names
   * the request's own hold when the task's first hold ended before the task was committed
   * (ImageTask.takeHold).
   */
  startId: string;
  model: string;
  profileId: string;
  /** IMAGE unit price at reservation, minor units: the hold and the charge of the one image. */
  price: number;
  /** The UNKNOWN_IMAGE_V1 window, frozen into the task at reservation. */
  deadlineMs: number;
  /** The hold's own expiry (a backstop): longer than the deadline. */
  holdTtlMs: number;
  call: SentImageCall;
  /** The spend limits the image's hold must fit (FundsHold's reserve checks them). */
  spend?: SpendScopes;
  /** The spend key whose count the image's charge joins (ReserveRequest.spendKeyId). */
  spendKeyId?: string;
}

export interface Observation {
  at: number;
  what: string;
}

export type Outcome =
  | { kind: 'succeeded'; artifact: ImageArtifact; via: 'response' | 'lookup' }
  | { kind: 'failed'; reason: string; via: 'response' | 'lookup' }
  | { kind: 'unresolved'; what: string };

export interface LateArtifactView {
  /** Awaiting the ledger's acknowledgment of the zero-charge IMAGE event, or released to the owner. */
  state: 'awaiting_ledger' | 'released';
  arrivedAt: number;
  /** The usage and billing events the ledger must hold before the artifact is released. */
  eventIds: string[];
}

export interface UnknownEvidence {
  profile: typeof UNKNOWN_IMAGE_PROFILE;
  resolution: typeof IMAGE_UNKNOWN_RESOLVED;
  resolvedAt: number;
  reservedAt: number;
  deadlineAt: number;
  sent: SentImageCall & { sentAt: number };
  seen: Observation[];
}

/** 409: the task of this Idempotency-Key was made for another request (its payload, or another owner). */
export function imageKeyReused(): GatewayError {
  return new GatewayError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request', { param: 'Idempotency-Key' });
}

/**
 * What a failed task's failure was: the provider rejecting the request (`rejected`: answered 400
 * provider_rejected, its hold released for `provider_rejected`), or the provider failing (502
 * provider_error, released for `provider_failed`): the platform's credentials refused or its rate
 * with the provider used up (`platform`), or a generation the provider reports failed when asked
 * later (`failed_later`).
 */
export function imageFailureKind(failure: string | undefined, via: 'response' | 'lookup' | undefined): 'rejected' | 'platform' | 'failed_later' {
  if (failure === PLATFORM_CREDENTIALS_REFUSED || failure === PROVIDER_RATE_LIMITED) return 'platform';
  return via === 'lookup' ? 'failed_later' : 'rejected';
}

export interface ImageTaskView {
  taskId: string;
  status: ImageTaskStatus;
  phase: ImageTaskPhase;
  model: string;
  profileId: string;
  provider: string;
  reservedAt: number;
  deadlineAt: number;
  /** The call as sent (for provider lookups); the owner only ever sees it through evidence. */
  call: SentImageCall & { sentAt: number };
  /** What "the same payload" is for this task's Idempotency-Key (the gateway's requestFingerprint); never shown. */
  fingerprint: string;
  /** Charged to the customer, minor units (0 until settled; 0 for failed and unknown). */
  charged: number;
  /** Present when the image may be shown: succeeded, or a late artifact released after UNKNOWN. */
  artifact?: ImageArtifact;
  failure?: string;
  /** How the failure was learnt: the call's own answer, or a later lookup (the provider reporting the generation failed). */
  failedVia?: 'response' | 'lookup';
  unknown?: UnknownEvidence;
  lateArtifact?: LateArtifactView;
}

export interface StartOutcome {
  /** owner: this call created the task and must call the provider; existing: a retry of it. */
  role: 'owner' | 'existing';
  task: ImageTaskView;
}

export interface ImageTaskApi {
  /** Creates the task and reserves its hold (one turn), or returns the existing task of this key. */
  start(request: StartRequest): Promise<StartOutcome>;
  /** Records what the provider said (or that nothing could be determined). */
  record(outcome: Outcome): Promise<ImageTaskView>;
  /** Settles or releases the hold of a recorded outcome; retried by reminder until it has. */
  finish(request: Record<string, never>): Promise<ImageTaskView>;
  /** Applies image_unknown_resolved when the deadline has passed and the task is undetermined. */
  expire(request: Record<string, never>): Promise<ImageTaskView>;
  /** Releases a late artifact once the gateway has seen the ledger acknowledge its events. */
  releaseLate(request: { eventIds: string[] }): Promise<ImageTaskView>;
  /** The task, for its owner only: anyone else gets not_found. */
  view(owner: Owner): Promise<ImageTaskView>;
}

export const IMAGE_TASK_METHODS = ['start', 'record', 'finish', 'expire', 'releaseLate', 'view'] as const satisfies readonly (keyof ImageTaskApi)[];

/** Each method's argument, checked by the host before the actor sees it (actors/runtime/args.ts). */
const ownerArg = z.looseObject({ accountId: z.string().min(1), apiKeyId: z.string() });
export const IMAGE_TASK_ARGS = {
  start: z.looseObject({
    owner: ownerArg, fingerprint: z.string(), requestId: z.string(), startId: z.string().min(1), model: z.string(), profileId: z.string(),
    price: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), deadlineMs: z.number().int().min(1).max(IMAGE_UNKNOWN_DEADLINE_MS), holdTtlMs: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    call: z.looseObject({ provider: z.string(), upstreamModel: z.string(), prompt: z.string(), responseFormat: z.enum(['url', 'b64_json']), passthrough: z.record(z.string(), z.unknown()) }),
    spend: spendScopesArg.optional(),
    spendKeyId: keyIdArg.optional(),
  }),
  record: z.looseObject({ kind: z.enum(['succeeded', 'failed', 'unresolved']) }),
  finish: z.looseObject({}),
  expire: z.looseObject({}),
  releaseLate: z.looseObject({ eventIds: z.array(z.string()) }),
  view: ownerArg,
} satisfies Record<(typeof IMAGE_TASK_METHODS)[number], z.ZodType>;
