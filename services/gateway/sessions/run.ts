// A session run, carried by the gateway process that accepted it (docs/sessions.md). The provider
// call streams in the background, billed by the chat route's rules (tallyStream); its output is
// appended to the Session actor in batches (every FLUSH_MS, or at MAX_BATCH_CHARS), never one
// actor call per token; a heartbeat pushes the lease out while the provider is silent; the end is
// reported once, and the actor settles or releases the hold in that same turn. A run is part of
// the graceful drain: aborted at the drain timeout, it reports what it produced like any other end.

import type { Logger } from 'pino';
import type { FinishRunRequest, RunFailure, SessionApi } from '../../../actors/session/SessionInterface';
import { GatewayError } from '../../../lib/errors';
import { endModelCall } from '../../../lib/tracing';
import type { ChatStreamChunk } from '../../../providers/port';
import { billed, modelCallSpan, tallyStream, toGatewayProviderError, usageLines, type ChatDeps, type PreparedChat, type StreamTally } from '../chat/use-case';
import { openAiWire } from '../chat/wires';
import { deadline, stoppedBy } from '../deadline';
import type { SessionWakeups } from './wakeups';

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
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const codeOf = (error: unknown) => (error instanceof GatewayError ? error.code : undefined);

/** Carries the run to its end; never throws (it runs after its request has been answered). */
export async function carryRun(deps: RunDeps, ticket: RunTicket): Promise<void> {
  const logger = deps.chat.logger.child({ sessionId: ticket.sessionId, runId: ticket.runId });
  const abort = new AbortController();
  const untrack = deps.chat.drain?.track(abort);
  const { signal, clear: clearDeadline } = deadline(abort, deps.chat.providerTimeoutMs);
  const output = new RunOutput(ticket, logger, () => deps.wakeups.wake(ticket.sessionId), () => abort.abort(new Error('the run is no longer active')));
  const heartbeat = setInterval(() => output.heartbeat(), Math.max(100, Math.floor(deps.leaseMs / 3)));
  let finishReason: string | undefined;
  let tally: StreamTally;
  // The provider call's span, under the request that started the run (which has been answered).
  const span = modelCallSpan(ticket.chat);
  try {
    const pieces = await openAiWire.stream(ticket.chat.upstream, signal);
    tally = await tallyStream(openAiWire, ticket.chat, pieces, (piece) => {
      output.push(piece.outputDelta);
      finishReason = finishReasonOf(piece) ?? finishReason;
    });
  } catch (error) {
    tally = { produced: undefined, failure: error };
  } finally {
    clearInterval(heartbeat);
    clearDeadline();
  }
  endModelCall(span, tally.produced, tally.failure);
  await output.close();
  const failure = tally.failure === undefined ? undefined : runFailure(tally.failure, signal);
  await finish(ticket, { runId: ticket.runId, finishReason, ...(failure ? { failure } : {}), ...(tally.produced ? { usage: { ...tally.produced, lines: usageLines(ticket.chat.prices, tally.produced) } } : {}) }, logger);
  untrack?.();
  deps.wakeups.wake(ticket.sessionId);
}

/** Reports the end; retried, since the hold is settled in that call. Given up, the lease releases the hold. */
async function finish(ticket: RunTicket, request: FinishRunRequest, logger: Logger): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const outcome = await ticket.session.finishRun(request);
      if (request.usage && outcome.charged > 0) billed(request.usage);
      return;
    } catch (error) {
      if (codeOf(error) === 'run_not_active' || attempt === FINISH_ATTEMPTS) {
        logger.error({ err: error }, 'the end of the run was not recorded; its lease fails it and releases its hold');
        return;
      }
      await delay(RETRY_MS * attempt);
    }
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
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private lost = false;
  private seq = 0;

  constructor(
    private readonly ticket: RunTicket,
    private readonly logger: Logger,
    private readonly appended: () => void,
    /** The actor no longer has this run (its lease ran out): the call is stopped. */
    private readonly onLost: () => void,
  ) {}

  push(delta: string): void {
    if (delta === '' || this.lost) return;
    this.pending += delta;
    if (this.pending.length >= MAX_BATCH_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Pushes the lease out while nothing is produced; a pending batch does that itself. */
  heartbeat(): void {
    if (this.timer === undefined) this.flush(true);
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
    this.pending = '';
    if (delta === '' && !heartbeat) return;
    const seq = ++this.seq;
    this.chain = this.chain.then(() => this.send(delta, seq));
  }

  /**
   * One batch, retried as itself (same number) until taken: a retry whose first attempt was
   * appended is recognised by the actor and not appended twice; later batches wait their turn.
   */
  private async send(delta: string, seq: number): Promise<void> {
    for (let attempt = 1; !this.lost; attempt++) {
      try {
        await this.ticket.session.append({ runId: this.ticket.runId, delta, seq });
        if (delta !== '') this.appended();
        return;
      } catch (error) {
        if (codeOf(error) === 'run_not_active') {
          this.lost = true;
          this.onLost();
          return;
        }
        if (attempt === FINISH_ATTEMPTS) {
          if (delta !== '') this.logger.warn({ chars: delta.length }, 'run output not appended; the usage is still settled');
          return;
        }
        await delay(RETRY_MS * attempt);
      }
    }
  }
}
