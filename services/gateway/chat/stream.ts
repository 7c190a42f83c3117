// A chat stream: what it produced, counted by the charge rules of docs/money.md, and its frames
// as the client receives them, ending with the charge (or release) and the wire's end or error.

import type { Logger } from 'pino';
import { GatewayError } from '../../../lib/errors';
import { cancelModelCall, endModelCall } from '../../../lib/tracing';
import { ProviderError, type TokenUsage } from '../../../providers/port';
import { leftByClient, stoppedBy } from '../deadline';
import type { StreamFrame } from '../http/answer';
import { countedPrompt, type AnyWire, type PreparedChat } from './prepare';
import { CLIENT_DISCONNECTED, logProviderFailure, openProviderCall, routingOf, SETTLE_WAIT_MS, streamBroke, toGatewayProviderError, within, type CallRoute, type HoldHandle, type modelCallSpan, type RoutedHold, type Routing } from './provider-call';
import { pastPreamble } from './preamble';
import type { Upstream } from './upstream';
import type { InboundWire, StreamPiece } from './wires';

/**
 * Opens a stream on the call's route (./provider-call.ts), each attempt past its preamble
 * (./preamble.ts): a failure before anything a reader would see is one before any output, so the
 * next upstream is tried; once opened, the stream stays with its upstream.
 */
export function openRoutedStream<P extends StreamPiece>(route: CallRoute<Upstream>, hold: RoutedHold, signal: AbortSignal, wire: InboundWire<unknown, P>): Promise<{ opened: AsyncIterable<P>; span: ReturnType<typeof modelCallSpan> }> {
  return openProviderCall(route, hold, signal, async (upstream, attempt, answered) => pastPreamble(await wire.caller.stream(upstream, attempt), answered));
}

/**
 * An opened stream has ended: a provider failure (not its deadline, the drain, its reader leaving)
 * is a break after output, told to its upstream's circuit, its route (`broken`), the metrics and
 * the log; its span ends with what it produced. Returns that provider failure, as the client is told it.
 */
export function streamEnded(deps: { logger: Logger; routing?: Routing }, chat: PreparedChat, hold: Pick<HoldHandle, 'holdId' | 'route'>, signal: AbortSignal, span: ReturnType<typeof modelCallSpan>, failure: unknown, produced: TokenUsage | undefined): GatewayError | undefined {
  // A provider failure counts whether or not anyone still listens; the route says so before the charge.
  const providerFailure = failure && !signal.aborted ? toGatewayProviderError(failure) : undefined;
  const upstream = hold.route?.upstream ?? chat.route[0]?.provider;
  if (providerFailure && upstream !== undefined) streamBroke(routingOf(deps), upstream, hold.route, span);
  if (providerFailure) logProviderFailure(deps.logger, upstream, failure, { holdId: hold.holdId, broken: true });
  // Cut because the client left: the gateway cancelled the call, no failure of the provider's.
  if (failure && leftByClient(signal)) cancelModelCall(span, CLIENT_DISCONNECTED, produced);
  else endModelCall(span, produced, failure);
  return providerFailure;
}

/** What a stream produced, by the charge rules of docs/money.md; and how it ended. */
export interface StreamTally {
  /** What the stream is charged for (StreamCount.produced()). Undefined when nothing was produced. */
  produced: TokenUsage | undefined;
  /** What broke the stream, if anything did. */
  failure: unknown;
}

/**
 * Output pieces past which a stream is cut as the provider's protocol error: an upstream that
 * ignores the max_tokens it was asked for would otherwise be relayed until the deadline (its
 * output is billed up to max_tokens, docs/money.md). A piece carries at least a token, or a
 * character where an upstream splits tokens; no compliant upstream comes near this.
 */
export const outputPieceBound = (maxTokens: number) => 8 * maxTokens + 64;

/**
 * Counts what a stream produced, piece by piece, by the charge rules of docs/money.md: the
 * provider's final count when it gave one; else one output token per output delta, on the prompt
 * as the provider stated it (its cache counts included) or, when it has not, as the gateway counts
 * it (./prepare.ts, countedPrompt: counted once, when first needed).
 */
export class StreamCount<P extends StreamPiece> {
  private outputTokens = 0;
  private readonly outputBound: number;
  private final: TokenUsage | undefined;
  /** The last usage the provider stated (its prompt counts are the prompt's). */
  private stated: TokenUsage | undefined;
  private counted: Promise<TokenUsage> | undefined;

  constructor(private readonly wire: InboundWire<unknown, P>, private readonly chat: PreparedChat) {
    this.outputBound = outputPieceBound(chat.maxTokens);
  }

  /** Counts the piece; throws (the stream is then cut) once the output passes outputPieceBound. */
  add(piece: P): void {
    if (piece.statedPrompt) this.stated = piece.statedPrompt;
    if (piece.usage) {
      this.stated = piece.usage;
      if (this.wire.charge.finalUsage(piece)) this.final = piece.usage;
    }
    if (!this.wire.charge.producesOutput(piece)) return;
    // A piece past the bound is neither counted nor relayed.
    if (this.outputTokens === this.outputBound) throw new ProviderError('protocol', `the upstream sent more than ${this.outputBound} pieces of output for max_tokens ${this.chat.maxTokens}: it ignores max_tokens, and the stream was cut`);
    this.outputTokens += 1;
  }

  /** The prompt, as stated or counted (off the event loop: a promise then), with `outputTokens` of output. */
  usage(outputTokens: number): TokenUsage | Promise<TokenUsage> {
    if (this.stated) {
      const { outputTokens: _output, reasoningTokens: _reasoning, ...prompt } = this.stated;
      return { ...prompt, outputTokens };
    }
    this.counted ??= countedPrompt(this.chat).then((inputTokens) => ({ inputTokens, outputTokens: 0, promptCounted: true }));
    return this.counted.then((counted) => ({ ...counted, outputTokens }));
  }

  /** The provider's final count when it gave one, else one token per output delta; undefined when nothing was produced. */
  async produced(): Promise<TokenUsage | undefined> {
    return this.final ?? (this.outputTokens === 0 ? undefined : this.usage(this.outputTokens));
  }
}

/** The stream's charge in nano-USD, sent before its end: `: x-payg-charged <n>`. */
export function chargeComment(charged: number): string {
  return `: x-payg-charged ${charged}\n\n`;
}

/** Reads a stream to its end (or break), handing each piece to `relay`, and counts what it produced. */
export async function tallyStream<P extends StreamPiece>(count: StreamCount<P>, pieces: AsyncIterable<P>, relay: (piece: P) => void): Promise<StreamTally> {
  let failure: unknown;
  try {
    for await (const piece of pieces) {
      count.add(piece);
      relay(piece);
    }
  } catch (error) {
    failure = error;
  }
  return { produced: await count.produced(), failure };
}


/**
 * The stream's frames, as the provider produces them; then the charge for what was produced (or
 * the release when nothing was), and the wire's end, or its error frame when the stream broke.
 */
export async function* streamFrames(deps: { logger: Logger; routing?: Routing }, wire: AnyWire, chat: PreparedChat, signal: AbortSignal, hold: HoldHandle, pieces: AsyncIterable<StreamPiece>, span: ReturnType<typeof modelCallSpan>, ended: () => void): AsyncGenerator<StreamFrame> {
  try {
    const modelId = chat.resolved.model.id;
    const count = new StreamCount(wire, chat);
    // What the client was sent (frames handed to the socket), recorded on the hold as it goes.
    let sentOutput = 0;
    const usageOf = (outputTokens: number) => count.usage(outputTokens);
    const sent = () => {
      sentOutput += 1;
      hold.progress.delivered(sentOutput, usageOf);
    };
    let failure: unknown;
    try {
      for await (const piece of pieces) {
        count.add(piece);
        const text = wire.answer.frame(piece, modelId, chat.parsed);
        if (text !== undefined) yield wire.charge.producesOutput(piece) ? { text, sent } : { text };
      }
    } catch (error) {
      failure = error;
    }
    const produced = await count.produced();
    const providerFailure = streamEnded(deps, chat, hold, signal, span, failure, produced);
    // Charged for what was produced; nothing produced: released.
    if (!produced) await hold.release(failure ? 'provider_failed' : 'client_disconnected');
    else {
      // The end waits a little for the charge; a settle still pending then lands after it.
      const settling = hold.settle(produced).then(({ charged }) => charged, (error) => void deps.logger.error({ err: error, holdId: hold.holdId }, 'settle refused; the hold ended otherwise'));
      const charged = await within(settling, SETTLE_WAIT_MS);
      // The charge, as the JSON answer's x-payg-charged says it: an SSE comment line, which SSE
      // clients (the official SDKs among them) skip.
      if (charged !== undefined) yield { text: chargeComment(charged) };
    }
    if (providerFailure) yield { text: wire.answer.streamError(providerFailure) };
    // Cut by its deadline (provider_timeout) or by the drain (gateway_shutting_down).
    else if (failure) yield { text: wire.answer.streamError(stoppedBy(signal) ?? new GatewayError('provider_timeout', 'the provider did not finish in time')) };
    else yield { text: wire.answer.end };
  } finally {
    // Whatever ends the stream, no renewal outlives it (a settle or release stops them earlier).
    hold.progress.stop();
    ended();
  }
}
