// A task's answer to its client: the image (200), or a GatewayError that names the task beside
// the error (provider_rejected 400, provider_error 502 when the platform's credentials were refused or its rate used up, image_unknown or image_unresolved 503 with Retry-After) for
// the error responder to say. Every answer carries what was charged.

import { IMAGE_UNKNOWN_RESOLVED, imageFailureKind, type ImageTaskView } from '../../../actors/image-task/ImageTaskInterface';
import { GatewayError, NO_RETRY } from '../../../lib/errors';

/** A task's image; every other outcome is thrown. */
export interface ImageReply {
  headers: Record<string, string>;
  body: unknown;
}

/** Seconds a client should wait before asking again about an unresolved or unknown task. */
const RETRY_AFTER_UNRESOLVED_S = 5;
const RETRY_AFTER_UNKNOWN_S = 60;

function imageData(view: ImageTaskView) {
  const artifact = view.artifact!;
  return {
    created: artifact.created,
    data: [{ ...(artifact.url !== undefined ? { url: artifact.url } : { b64_json: artifact.b64Json }), ...(artifact.revisedPrompt ? { revised_prompt: artifact.revisedPrompt } : {}) }],
  };
}

/**
 * `replayed`: the answer of a request whose Idempotency-Key named a task that already existed
 * (`x-payg-replayed: true`): it charges nothing new, x-payg-charged is the task's one charge.
 */
export function reply(view: ImageTaskView, replayed = false): ImageReply {
  const headers: Record<string, string> = { 'x-payg-charged': String(view.charged), ...(replayed ? { 'x-payg-replayed': 'true' } : {}) };
  const common = { taskId: view.taskId, status: view.status, model: view.model };
  if (view.artifact) {
    const late = view.status === 'unknown' ? { resolution: IMAGE_UNKNOWN_RESOLVED, late_artifact: true } : {};
    return { headers, body: { ...common, ...late, charged: view.charged, ...imageData(view) } };
  }
  if (view.status === 'failed') {
    // Not the request's fault: the platform's own credentials were refused, or its rate with the
    // provider is used up (502, like a chat's).
    // A failed task stays failed: the same request (its Idempotency-Key) is answered the same, so
    // the SDKs are told not to retry this 502 (a new key is a new task).
    const kind = imageFailureKind(view.failure, view.failedVia);
    if (kind !== 'rejected') {
      // Else learnt by asking the provider after the answer was lost: it says the generation
      // failed, not that the request was at fault.
      const what = kind === 'platform' ? view.failure : `the provider reports the image failed: ${view.failure ?? 'no reason given'}`;
      throw new GatewayError('provider_error', `${what}; nothing was produced and the hold was released`, { headers: { ...headers, ...NO_RETRY }, bodyFields: common });
    }
    throw new GatewayError('provider_rejected', `the provider rejected the request: ${view.failure ?? 'no reason given'}; the hold was released`, { headers, bodyFields: common });
  }
  if (view.status === 'unknown') {
    throw new GatewayError('image_unknown', 'the result of this image task could not be determined within its 24-hour deadline (UNKNOWN_IMAGE_V1): the hold was released and nothing was charged', {
      headers: { ...headers, 'retry-after': String(RETRY_AFTER_UNKNOWN_S) },
      bodyFields: { ...common, resolution: IMAGE_UNKNOWN_RESOLVED },
    });
  }
  throw new GatewayError('image_unresolved', 'the result of this image task cannot be determined yet; ask again with GET /api/open/v1/models/{id}/images/tasks/{taskId} using the same API key (never retry with another key)', {
    headers: { ...headers, 'retry-after': String(RETRY_AFTER_UNRESOLVED_S) },
    bodyFields: { ...common, deadline: new Date(view.deadlineAt).toISOString() },
  });
}
