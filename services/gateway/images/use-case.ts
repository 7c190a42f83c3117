// Single-image generation under UNKNOWN_IMAGE_V1, as a story: refuse what is invalid before
// anything is held; let the ImageTask of this Idempotency-Key decide whether this request is its
// owner (reserve the hold, call the provider once) or a retry (wait for, or report, the owner's
// outcome); record what the provider said, then move the funds. A provider that does not answer
// in time leaves the task unresolved (503 with its taskId) while the call runs on in the
// background: its artifact, if one comes, is still recorded, even after UNKNOWN.

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ImageTaskClient } from '../../../actors/image-task/client';
import { imageKeyReused, type ImageTaskApi, type ImageTaskView, type Outcome, type Owner } from '../../../actors/image-task/ImageTaskInterface';
import { requireEligible, type Catalog } from '../../../catalog/catalog';
import type { UpstreamHealth } from '../routing/health';
import { GatewayError } from '../../../lib/errors';
import { metrics } from '../../../lib/metrics';
import { endModelCall, startModelCall, withinModelCall } from '../../../lib/tracing';
import { isCanonicalUuid } from '../../../lib/uuid';
import { isCredentialFailure, PLATFORM_CREDENTIALS_REFUSED, PROVIDER_RATE_LIMITED, ProviderError, type ImageProvider, type SimDirectives } from '../../../providers/port';
import { deadline, shuttingDown } from '../deadline';
import type { Drain } from '../drain';
import { checkBodySize } from '../chat/limits';
import { logProviderFailure } from '../chat/provider-call';
import { reply, type ImageReply } from './answer';
import { spendOf, withRateHeaders, type RateAdmission } from '../limits/admission';
import { countCall, type AccountShare } from '../limits/account-share';
import type { Caller } from '../middleware/auth';
import { imageTaskId, parseIdempotencyKey, parseImageBody, requestFingerprint } from './request';

export interface ImageSettings {
  /** The UNKNOWN_IMAGE_V1 window frozen into each task. */
  deadlineMs: number;
  /** The hold's own expiry, beyond the deadline. */
  holdTtlMs: number;
  /** How long a provider call runs on after its client was answered 503. */
  artifactWaitMs: number;
}

export interface ImageDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, ImageProvider>;
  tasks: ImageTaskClient;
  /** Whether the ledger has appended an event (its acknowledgment). */
  ledgerHas(eventId: string): Promise<boolean>;
  maxBodyBytes: number;
  providerTimeoutMs: number;
  images: ImageSettings;
  logger: Logger;
  /** The graceful shutdown: a request still waiting at its timeout is answered 503 with its taskId. */
  drain?: Drain;
  /** Rate limits (../limits/admission.ts): an image request counts one request and no tokens. */
  limits?: RateAdmission;
  /** The upstreams' circuits (../routing/health.ts): which of a profile's upstreams a new task goes to. */
  health?: UpstreamHealth;
  /** Model calls running, per account (GATEWAY_ACCOUNT_CALLS), shared with the chat routes; absent: not counted. */
  callsRunning?: AccountShare;
}

export interface GenerateInput {
  modelId: string;
  body: unknown;
  bodyBytes: number;
  caller: Owner;
  /** The credential's caller, for its limits (a request under a rate limit is admitted first; a spend limit goes to the hold). */
  limited?: Caller;
  requestId: string;
  idempotencyKey: string | string[] | undefined;
  directives?: SimDirectives;
}

export interface RecoverInput {
  modelId: string;
  taskId: string;
  caller: Owner;
}

const POLL_MS = 50;
/** How long a request waits for the ledger to acknowledge a late artifact's events. */
const LEDGER_ACK_WAIT_MS = 2000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

export class ImageService {
  /** Provider calls this process owns, by task: a concurrent retry here waits on the same call. */
  private readonly inflight = new Map<string, Promise<ImageTaskView | undefined>>();
  private readonly calls = new Set<AbortController>();

  constructor(private readonly deps: ImageDeps) {}

  async generate(input: GenerateInput): Promise<ImageReply> {
    const { deps } = this;
    // Everything that can refuse the request comes before the hold.
    const idempotencyKey = parseIdempotencyKey(input.idempotencyKey);
    const task = deps.tasks.of(imageTaskId(input.caller.accountId, input.caller.apiKeyId, idempotencyKey));
    const fingerprint = requestFingerprint(input.modelId, input.body, input.directives);
    // A replay (this key's task, made for this same payload) does no new work: under a rate limit
    // it is answered from its task before anything is counted, so it uses none of the caller's
    // requests_per_minute (a caller without one is not asked the extra read). The key's task made
    // for another payload is refused there too (409): no retry of this request can succeed, so
    // it is not told to wait for the window (429) first.
    if (input.limited && deps.limits?.applies(input.limited)) {
      const stored = await this.stored(task, input.caller);
      if (stored?.fingerprint === fingerprint) return reply(await this.awaitOwner(task, stored, input.caller), true);
      if (stored) throw imageKeyReused();
    }
    let resolved: ReturnType<Catalog['resolve']>;
    try {
      resolved = deps.catalog.resolve(input.modelId, 'openai-images');
    } catch (error) {
      // The model withdrawn (or changed) since this key's task was made: its retry is still a replay.
      return this.replayOrRefuse(task, fingerprint, input, error);
    }
    // One upstream per task, the healthiest by weight; never another for it (an unknown outcome is not retried elsewhere).
    const served = resolved.profile.upstreams.filter((u) => deps.providers.has(u.provider));
    if (served.length === 0) return this.replayOrRefuse(task, fingerprint, input, new GatewayError('model_not_eligible', `model ${resolved.model.id} has no configured provider`));
    const chosen = deps.health ? deps.health.order(resolved.profile.profile_id, served)[0] : served[0];
    const provider = deps.providers.get(chosen.provider)!;
    checkBodySize(input.bodyBytes, [deps.maxBodyBytes, provider.maxBodyBytes, resolved.model.limits.max_body_bytes ?? Infinity]);
    const request = parseImageBody(input.body);
    let price: number;
    try {
      price = requireEligible(resolved.model, 'IMAGE');
    } catch (error) {
      // The IMAGE price no longer eligible: a task made while it was is answered all the same.
      return this.replayOrRefuse(task, fingerprint, input, error);
    }

    // The provider call of a new task is a model call of the account while it runs: past its share,
    // refused before anything is counted or held. A retry of the key's task makes no call: given
    // back below, and at the share it is answered from its task as ever (the 503 of a call that
    // runs on says to retry, while that very call is counted).
    let stopRunning: () => void;
    try {
      stopRunning = countCall(deps.callsRunning, input.caller.accountId);
    } catch (refusal) {
      const stored = await this.stored(task, input.caller);
      if (stored?.fingerprint !== fingerprint) throw refusal;
      return reply(await this.awaitOwner(task, stored, input.caller), true);
    }
    const spend = input.limited ? spendOf(input.limited) : undefined;
    let admitted;
    let started;
    try {
      admitted = input.limited ? await deps.limits?.admit(input.limited, 0, 'openai') : null;
      started = await task.start({
        ...(spend ? { spend } : {}),
        ...(input.limited?.spendKeyId !== undefined ? { spendKeyId: input.limited.spendKeyId } : {}),
        owner: input.caller,
        fingerprint,
        requestId: input.requestId,
        // The request id may come from the client (X-Request-Id): this one is this request's own.
        startId: randomUUID(),
        model: resolved.model.id,
        profileId: resolved.profile.profile_id,
        price,
        deadlineMs: deps.images.deadlineMs,
        holdTtlMs: deps.images.holdTtlMs,
        call: { provider: chosen.provider, upstreamModel: chosen.upstream_model, prompt: request.prompt, responseFormat: request.responseFormat, passthrough: request.passthrough, ...(input.directives ? { directives: input.directives } : {}) },
      });
    } catch (error) {
      stopRunning();
      // Refused (429 by a rate, or 402, 409, 503 at the start): nothing held; a start refused
      // after its admission counts against no rate either.
      throw admitted ? await admitted.refused(error) : error;
    }
    // A task started before (a retry of its key) keeps the upstream it was sent to.
    // A call this instance already runs for the task is never made twice.
    const calling = started.role === 'owner' && !this.inflight.has(started.task.taskId);
    if (!calling) stopRunning();
    const view = await (calling
      ? this.callProvider(task, started.task, deps.providers.get(started.task.provider) ?? provider, stopRunning)
      : this.awaitOwner(task, started.task, input.caller)
    ).catch((error: unknown) => {
      // Every answer of a call under a rate limit carries its headers, an error's too.
      throw admitted ? withRateHeaders(error, admitted.headers) : error;
    });
    // A replay found only once counted (two first requests of one key at once) did no new work:
    // its request goes back. A task that failed or is not resolved yet is answered by an error
    // (400, 502, 503): it was counted like a success, and tells the window like one.
    const replayed = started.role === 'existing';
    const rateHeaders = admitted ? (replayed ? await admitted.givenBack() : admitted.headers) : {};
    let answer: ImageReply;
    try {
      answer = reply(view, replayed);
    } catch (error) {
      throw admitted ? withRateHeaders(error, rateHeaders) : error;
    }
    return { ...answer, headers: { ...rateHeaders, ...answer.headers } };
  }

  /**
   * A request the catalog now refuses (its model withdrawn, its IMAGE price or its provider gone)
   * whose Idempotency-Key already made a task for this same payload: a retry of a request the
   * catalog took, answered from its task like any replay (the client that lost the first answer
   * has only the key). Anything else gets the catalog's refusal, and nothing is held.
   */
  private async replayOrRefuse(task: ImageTaskApi, fingerprint: string, input: GenerateInput, refusal: unknown): Promise<ImageReply> {
    if (!(refusal instanceof GatewayError)) throw refusal;
    const view = await this.stored(task, input.caller);
    if (view?.fingerprint !== fingerprint) throw refusal;
    // A replay does no new work: it holds nothing, and counts against no rate.
    return reply(await this.awaitOwner(task, view, input.caller), true);
  }

  /** This key's task as it is stored, or undefined when the key has made none. */
  private async stored(task: ImageTaskApi, caller: Owner): Promise<ImageTaskView | undefined> {
    try {
      return await task.view(caller);
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'not_found') return undefined;
      throw error;
    }
  }

  /** GET …/images/tasks/{taskId}: the owner's view, advanced as far as can be determined now. */
  async recover(input: RecoverInput): Promise<ImageReply> {
    if (!isCanonicalUuid(input.taskId)) throw new GatewayError('not_found', 'no such image task');
    const task = this.deps.tasks.of(input.taskId);
    const view = await task.view(input.caller);
    // The model need not be in the catalog any more: the task carries what it needs.
    if (input.modelId !== view.model && input.modelId !== view.profileId) throw new GatewayError('not_found', 'no such image task');
    return reply(await this.advance(task, view));
  }

  /** Stops waiting for background provider calls (shutdown): their tasks stay unresolved. */
  async close(): Promise<void> {
    for (const controller of this.calls) controller.abort(shuttingDown());
    await Promise.race([Promise.allSettled([...this.inflight.values()]), sleep(2000)]);
  }

  /** The owner's one provider call: answered within the provider timeout, or 503 while it runs on; `ended` once it is over. */
  private async callProvider(task: ImageTaskApi, view: ImageTaskView, provider: ImageProvider, ended: () => void): Promise<ImageTaskView> {
    const { deps } = this;
    const controller = new AbortController();
    // The call runs on after its client's 503, up to the artifact wait (or until close()).
    const { signal, clear } = deadline(controller, deps.images.artifactWaitMs);
    const { provider: name, ...sent } = view.call;
    this.calls.add(controller);
    const span = startModelCall('generate_content', 'openai', sent.upstreamModel, name, { 'gen_ai.output.type': 'image', 'payg.image_task_id': view.taskId });
    const attempt = withinModelCall(span, () => provider.generate({ ...sent, taskId: view.taskId, signal })).then(
      (artifact) => {
        endModelCall(span, undefined);
        deps.health?.succeeded(name);
        return this.conclude(task, { kind: 'succeeded', artifact, via: 'response' });
      },
      (error: unknown) => {
        endModelCall(span, undefined, error);
        if (!controller.signal.aborted) logProviderFailure(deps.logger, name, error, { taskId: view.taskId });
        // The upstream's circuit hears of its failures (which upstream new tasks go to); a rejection is the request's.
        if (!(error instanceof ProviderError && error.kind === 'rejected') && !controller.signal.aborted) deps.health?.failed(name, error instanceof ProviderError ? error.retryAfterMs : undefined);
        return this.conclude(task, classify(error));
      },
    ).finally(() => {
      clear();
      this.calls.delete(controller);
      this.inflight.delete(view.taskId);
      ended();
    });
    this.inflight.set(view.taskId, attempt);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), deps.providerTimeoutMs);
    });
    const drained = this.drainWait();
    const first = await Promise.race([attempt, timedOut, drained.cut]);
    clearTimeout(timer);
    drained.end();
    if (first === 'cut') return task.record({ kind: 'unresolved', what: 'no answer before the gateway shut down; the task stays unresolved and recoverable' }).catch(() => view);
    if (first !== 'timeout') return first ?? view;
    return task.record({ kind: 'unresolved', what: `no answer within the provider timeout of ${deps.providerTimeoutMs} ms; the call runs on` }).catch(() => view);
  }

  /** This request's part in the graceful drain: `cut` when the drain times out. */
  private drainWait(): { cut: Promise<'cut'>; end: () => void } {
    return this.deps.drain?.wait() ?? { cut: new Promise<never>(() => {}), end: () => {} };
  }

  /** A retry of a task another request owns: wait (bounded) for that request's outcome. */
  private async awaitOwner(task: ImageTaskApi, view: ImageTaskView, caller: Owner): Promise<ImageTaskView> {
    const until = view.call.sentAt + this.deps.providerTimeoutMs;
    const local = this.inflight.get(view.taskId);
    let current = view;
    // Part of the graceful drain: at its timeout the retry answers with what the task says now.
    const drained = this.drainWait();
    let cut = false;
    void drained.cut.then(() => (cut = true));
    try {
      if (local) {
        await Promise.race([local, sleep(until - Date.now()), drained.cut]);
        current = await task.view(caller);
      } else {
        // Owned by another gateway instance (or by one that died): poll the task.
        while (current.phase === 'running' && Date.now() < until && !cut) {
          await sleep(POLL_MS);
          current = await task.view(caller);
        }
      }
    } finally {
      drained.end();
    }
    return this.advance(task, current, { lookup: false });
  }

  /** Moves a task on as far as can be determined now: deadline, provider lookup, funds, late artifact. */
  private async advance(task: ImageTaskApi, view: ImageTaskView, options: { lookup?: boolean } = {}): Promise<ImageTaskView> {
    let current = view;
    try {
      if (current.phase === 'running') {
        if (Date.now() >= current.deadlineAt) current = await task.expire({});
        else if (options.lookup !== false) current = await this.lookup(task, current);
      }
      if (current.phase === 'settling') current = countBilled(await task.finish({}));
      if (current.lateArtifact?.state === 'awaiting_ledger') current = await this.releaseLate(task, current);
    } catch (error) {
      // Settlement unresolved for now (an actor or the ledger unreachable): the task says so.
      this.deps.logger.warn({ err: error, taskId: current.taskId }, 'image task could not be advanced');
    }
    return current;
  }

  /** Asks the provider about the original call, where the provider can tell (never after UNKNOWN). */
  private async lookup(task: ImageTaskApi, view: ImageTaskView): Promise<ImageTaskView> {
    const provider = this.deps.providers.get(view.provider);
    if (!provider?.lookup) return view;
    const { provider: _name, ...sent } = view.call;
    let found;
    // Bounded by the provider timeout, and cut by the drain like any provider call.
    const controller = new AbortController();
    const untrack = this.deps.drain?.track(controller);
    const { signal, clear } = deadline(controller, this.deps.providerTimeoutMs);
    try {
      found = await provider.lookup({ ...sent, taskId: view.taskId }, signal);
    } catch (error) {
      return task.record({ kind: 'unresolved', what: `lookup failed: ${(error as Error).message}` });
    } finally {
      clear();
      untrack?.();
    }
    if (found.status === 'pending') return task.record({ kind: 'unresolved', what: 'lookup: the provider cannot tell yet' });
    const outcome: Outcome = found.status === 'succeeded'
      ? { kind: 'succeeded', artifact: found.artifact, via: 'lookup' }
      : { kind: 'failed', reason: found.reason, via: 'lookup' };
    return (await this.conclude(task, outcome)) ?? view;
  }

  /** Records a provider outcome and moves the funds; undefined when the actors could not be reached. */
  private async conclude(task: ImageTaskApi, outcome: Outcome): Promise<ImageTaskView | undefined> {
    try {
      let view = await task.record(outcome);
      if (view.phase === 'settling') view = countBilled(await task.finish({}));
      if (view.lateArtifact?.state === 'awaiting_ledger') view = await this.releaseLate(task, view, LEDGER_ACK_WAIT_MS);
      return view;
    } catch (error) {
      this.deps.logger.error({ err: error, outcome: outcome.kind }, 'image outcome not recorded; the task stays unresolved');
      return undefined;
    }
  }

  /** A late artifact is released only once the ledger holds its zero-charge IMAGE events. */
  private async releaseLate(task: ImageTaskApi, view: ImageTaskView, waitMs = 0): Promise<ImageTaskView> {
    const eventIds = view.lateArtifact?.eventIds ?? [];
    const until = Date.now() + waitMs;
    for (;;) {
      const acknowledged = await Promise.all(eventIds.map((id) => this.deps.ledgerHas(id)));
      if (acknowledged.every(Boolean)) return task.releaseLate({ eventIds });
      if (Date.now() >= until) return view;
      await sleep(POLL_MS);
    }
  }
}

/**
 * Counted where this process moved a task from settling to a charged success: a retry or a
 * recovery that reads a task settled earlier (or by the actor's own reminder) counts nothing.
 */
function countBilled(view: ImageTaskView): ImageTaskView {
  if (view.phase === 'succeeded' && view.charged > 0) metrics.imageBilled();
  return view;
}

function classify(error: unknown): Outcome {
  metrics.providerError(error instanceof ProviderError ? error.kind : 'other');
  // The platform's credentials refused: nothing was produced, and the customer is told only that (answer.ts).
  if (isCredentialFailure(error)) return { kind: 'failed', reason: PLATFORM_CREDENTIALS_REFUSED, via: 'response' };
  // A 429: the provider refused to run it, so nothing was produced (docs/images.md).
  if (error instanceof ProviderError && error.kind === 'rate_limited') return { kind: 'failed', reason: PROVIDER_RATE_LIMITED, via: 'response' };
  if (error instanceof ProviderError && error.kind === 'rejected') {
    // The customer reads the reason (answer.ts): the upstream's detail only, never the error's message.
    return { kind: 'failed', reason: `${error.detail || 'no reason given'}${error.upstreamStatus ? ` (${error.upstreamStatus})` : ''}`, via: 'response' };
  }
  if (error instanceof ProviderError) return { kind: 'unresolved', what: `provider ${error.kind}: ${error.message}` };
  return { kind: 'unresolved', what: `provider call failed: ${(error as Error)?.message ?? String(error)}` };
}
