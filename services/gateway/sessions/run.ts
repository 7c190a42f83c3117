// A session run, carried by the gateway process that accepted it (docs/sessions.md). The provider
// call streams in the background, routed as a streaming chat of its profile is (an upstream that
// fails before any output gives way to the next, never after) and billed by the chat route's
// rules (tallyStream), its route on its usage rows; its output is
// appended to the Session actor in batches (every FLUSH_MS, or at MAX_BATCH_CHARS), never one
// actor call per token; a heartbeat pushes the lease out while the provider is silent; the end is
// reported once, and the actor settles or releases the hold in that same turn (retried until it
// lands, among the pending settlements a shutdown waits for). As its output is appended, what was
// delivered is recorded on the run's hold (HoldProgress), so a lease that runs out after a crash
// charges it. A run is part of the graceful drain: aborted at the drain timeout, it reports what
// it produced like any other end.

import type { Logger } from 'pino';
import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import type { FinishRunRequest, RunFailure, SessionApi } from '../../../actors/session/SessionInterface';
import { GatewayError } from '../../../lib/errors';
import { linearBackoff, retry } from '../../../lib/retry';
import type { ChatStreamChunk } from '../../../providers/port';
import type { ChatDeps, PreparedChat } from '../chat/prepare';
import { billed, billedTokens, billedUsage, usageLines } from '../chat/prices';
import { chatRoute, toGatewayProviderError, type modelCallSpan, type RoutedHold } from '../chat/provider-call';
import { openRoutedStream, StreamCount, streamEnded, tallyStream, type StreamTally } from '../chat/stream';
import { DEFAULT_PROGRESS, HoldProgress } from '../chat/hold-progress';
import { retryable } from '../chat/pending-settlements';
import { openAiWire } from '../chat/wires';
import { deadline, stoppedBy } from '../deadline';
import type { SessionWakeups } from './wakeups';
import type { Admitted } from '../limits/admission';

export const FLUSH_MS = 50;
export const MAX_BATCH_CHARS = 4096;
const RETRY_MS = 200;
const FINISH_ATTEMPTS = 5;

export interface RunDeps {
  chat: ChatDeps;
  leaseMs: number;
  wakeups: SessionWakeups;
}

export interface RunTicket {
  sessionId: string;
  runId: string;
  session: SessionApi;
  chat: PreparedChat;
  /** The run's hold: `holdId` on the account's pool-3 FundsHold. */
  accountId: string;
  holdId: string;
  /** Admitted under a rate limit: its token count is corrected once the run has ended. */
  admitted?: Admitted;
}

const codeOf = (error: unknown) => (error instanceof GatewayError ? error.code : undefined);

/** Carries the run to its end; never throws (it runs after its request has been answered). */
export async function carryRun(deps: RunDeps, ticket: RunTicket): Promise<void> {
  const logger = deps.chat.logger.child({ sessionId: ticket.sessionId, runId: ticket.runId });
  const abort = new AbortController();
  const untrack = deps.chat.drain?.track(abort);
  const { signal, clear: clearDeadline } = deadline(abort, deps.chat.providerTimeoutMs);
  const progress = new HoldProgress(deps.chat.funds.of(ticket.accountId, DEFAULT_POOL), ticket.holdId, (usage) => usageLines(ticket.chat.prices, usage), deps.chat.holdTtlMs, deps.chat.holdProgress ?? DEFAULT_PROGRESS, logger);
  const count = new StreamCount(openAiWire, ticket.chat);
  const usageOf = (outputTokens: number) => count.usage(outputTokens);
  // Output appended to the session is what its readers can get: that is what progress records.
  const output = new RunOutput(ticket, logger, (tokens) => {
    progress.delivered(tokens, usageOf);
    deps.wakeups.wake(ticket.sessionId);
  }, () => abort.abort(new Error('the run is no longer active')));
  const heartbeat = setInterval(() => output.heartbeat(), Math.max(100, Math.floor(deps.leaseMs / 3)));
  let finishReason: string | undefined;
  let tally: StreamTally;
  // Routed as a streaming chat of its profile is: an upstream that fails before any output gives
  // way to the next (every attempt failing ends the call with the last one's error; its hold is
  // released by the run's end, in the actor's turn that appends run.failed, so nothing here).
  const routed: RoutedHold = { release: async () => undefined };
  const routeDeps = { routing: deps.chat.routing, logger };
  let served: { span: ReturnType<typeof modelCallSpan> } | undefined;
  try {
    // Each attempt's span is under the request that started the run (which has been answered).
    const opened = await openRoutedStream(chatRoute(routeDeps, ticket.chat), routed, signal, openAiWire);
    served = opened;
    tally = await tallyStream(count, opened.opened, (piece) => {
      output.push(piece.outputDelta, openAiWire.charge.producesOutput(piece) ? 1 : 0);
      finishReason = finishReasonOf(piece) ?? finishReason;
    });
  } catch (error) {
    tally = { produced: undefined, failure: error };
  } finally {
    clearInterval(heartbeat);
    clearDeadline();
  }
  // Opened, then broken: no fallback after output; the route's served attempt is recorded broken.
  const broken = served ? streamEnded(routeDeps, ticket.chat, { holdId: ticket.holdId, route: routed.route }, signal, served.span, tally.failure, tally.produced) : undefined;
  await output.close();
  progress.stop();
  untrack?.();
  const failure = tally.failure === undefined ? undefined : runFailure(broken ?? tally.failure, signal);
  // Charged with its route (the upstream that served and every attempt), on its usage rows as a chat's.
  const route = tally.produced && routed.route ? { route: routed.route } : {};
  const request: FinishRunRequest = { runId: ticket.runId, finishReason, ...(failure ? { failure } : {}), ...(tally.produced ? { usage: { ...billedUsage(ticket.chat.prices, tally.produced), lines: usageLines(ticket.chat.prices, tally.produced), ...route } } : {}) };
  // A pending end keeps the run (lease: an empty append) and its hold (progress) alive.
  const renew = () => Promise.all([output.renew(), progress.renew()]);
  await deps.chat.settlements.run(ticket.holdId, () => finish(ticket, request, logger), renew).catch(() => undefined);
  ticket.admitted?.correct(tally.produced ? billedTokens(ticket.chat.prices, tally.produced) : 0);
  deps.wakeups.wake(ticket.sessionId);
}

/**
 * Reports the end once (the actor settles or releases the hold in that turn). A failure to reach
 * the actor is thrown, for the pending settlements to retry; a refusal is final and logged.
 */
async function finish(ticket: RunTicket, request: FinishRunRequest, logger: Logger): Promise<void> {
  try {
    const outcome = await ticket.session.finishRun(request);
    if (request.usage && outcome.charged > 0) billed(ticket.chat.prices, request.usage);
  } catch (error) {
    if (retryable(error)) throw error;
    logger.error({ err: error }, 'the end of the run was refused; its lease fails it and ends its hold');
  }
}

/** Cut by its deadline (provider_timeout), by the drain (gateway_shutting_down), or because the run was lost. */
function runFailure(failure: unknown, signal: AbortSignal): RunFailure {
  const stopped = stoppedBy(signal);
  if (stopped) return { code: stopped.code, message: stopped.message };
  if (signal.aborted) return { code: 'run_interrupted', message: `the run was cut: ${(signal.reason as Error | undefined)?.message ?? 'aborted'}` };
  const error = toGatewayProviderError(failure);
  return { code: error.code, message: error.message };
}

function finishReasonOf(piece: ChatStreamChunk): string | undefined {
  const choices = piece.chunk.choices;
  const reason = Array.isArray(choices) ? (choices[0] as { finish_reason?: unknown } | undefined)?.finish_reason : undefined;
  return typeof reason === 'string' ? reason : undefined;
}

/** The run's output on its way to the actor: batched, in order (one append in flight at a time). */
class RunOutput {
  private pending = '';
  private pendingTokens = 0;
  private appendedTokens = 0;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private lost = false;
  private seq = 0;

  constructor(
    private readonly ticket: RunTicket,
    private readonly logger: Logger,
    /** A batch was appended: the output tokens appended so far. */
    private readonly appended: (tokens: number) => void,
    /** The actor no longer has this run (its lease ran out): the call is stopped. */
    private readonly onLost: () => void,
  ) {}

  push(delta: string, tokens: number): void {
    if (this.lost) return;
    this.pendingTokens += tokens;
    if (delta === '') return;
    this.pending += delta;
    if (this.pending.length >= MAX_BATCH_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Pushes the lease out while nothing is produced; a pending batch does that itself. */
  heartbeat(): void {
    if (this.timer === undefined) this.flush(true);
  }

  /** An empty append (the lease pushed out), waited for: a pending end keeps its run alive with it. */
  renew(): Promise<void> {
    this.flush(true);
    return this.chain;
  }

  /** Sends what is pending and waits until every batch is in (or given up). */
  async close(): Promise<void> {
    this.flush();
    await this.chain;
    clearTimeout(this.timer);
  }

  private flush(heartbeat = false): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const delta = this.pending;
    if (delta === '' && !heartbeat) return;
    const tokens = this.pendingTokens;
    this.pending = '';
    this.pendingTokens = 0;
    const seq = ++this.seq;
    this.chain = this.chain.then(() => this.send(delta, seq, tokens));
  }

  /**
   * One batch, retried as itself (same number) until taken: a retry whose first attempt was
   * appended is recognised by the actor and not appended twice; later batches wait their turn.
   */
  private async send(delta: string, seq: number, tokens: number): Promise<void> {
    let taken: boolean;
    try {
      const append = async (): Promise<boolean> => {
        if (this.lost) return false; // lost before or between attempts: nothing more to send
        await this.ticket.session.append({ runId: this.ticket.runId, delta, seq });
        return true;
      };
      taken = await retry(append, { attempts: FINISH_ATTEMPTS, delayMs: linearBackoff(RETRY_MS), retryable: (error) => codeOf(error) !== 'run_not_active' });
    } catch (error) {
      if (codeOf(error) === 'run_not_active') {
        this.lost = true;
        this.onLost();
      } else if (delta !== '') this.logger.warn({ chars: delta.length }, 'run output not appended; the usage is still settled');
      return;
    }
    if (!taken) return;
    this.appendedTokens += tokens;
    if (delta !== '') this.appended(this.appendedTokens);
  }
}
