// PAYG text chat, as a story: check the model and the limits (./prepare.ts), reserve the estimate
// on the account's FundsHold of the route's funding pool (./held-call.ts, shared with the other
// calls made under a hold), call the provider with the frozen
// max_tokens, recording on the hold what the client was sent as it goes (./hold-progress.ts),
// settle for the actual usage (never above the hold; retried until it lands,
// ./pending-settlements.ts) or release when nothing was produced. The same story on both
// inbound wires (./wires.ts): OpenAI chat completions and Anthropic messages, each served
// natively or, where exact, by a profile of the other wire. The answer is data (../http/answer.ts):
// a JSON body, or a stream of frames (./stream.ts) the route writes.

import type { UseCaseAnswer } from '../http/answer';
import type { TokenCounting } from '../limits/admission';
import { completeHeld, openHeldCall } from './held-call';
import { prepareChat, type AnyWire, type ChatDeps, type ChatInput, type PreparedChat } from './prepare';
import { billed, billedTokens, usageLines } from './prices';
import { chatRoute, type modelCallSpan } from './provider-call';
import { openRoutedStream, streamFrames } from './stream';
import type { InboundWire, StreamPiece } from './wires';

export async function runChat<R, P extends StreamPiece>(deps: ChatDeps, wire: InboundWire<R, P>, input: ChatInput): Promise<UseCaseAnswer> {
  const chat = prepareChat(deps, wire, input);
  return runPrepared(deps, wire as unknown as AnyWire, chat, input);
}

/** From the reservation on: the request has passed every check. */
export async function runPrepared(deps: ChatDeps, wire: AnyWire, chat: PreparedChat, input: ChatInput): Promise<UseCaseAnswer> {
  const held = await openHeldCall(deps, input, {
    estimate: chat.estimate,
    tokenBound: tokenBound(chat),
    tokenCounting: CHAT_TOKEN_COUNTING,
    rateStyle: wire.wire === 'anthropic-messages' ? 'anthropic' : 'openai',
    modelId: chat.resolved.model.id,
    profileId: chat.resolved.profile.profile_id,
    lines: (usage) => usageLines(chat.prices, usage),
    billed: (usage) => billed(chat.prices, usage),
    tokens: (usage) => billedTokens(chat.prices, usage),
  });
  const route = chatRoute(deps, chat);
  if (!chat.parsed.stream) {
    return completeHeld(deps, held, {
      route,
      call: (upstream, signal, answered) => wire.caller.complete(upstream, signal, answered),
      usage: (result) => wire.charge.usage(result),
      body: (result) => wire.answer.json(result, chat.resolved.model.id),
    });
  }
  const { hold, signal, headers, ended } = held;
  let pieces: AsyncIterable<StreamPiece>;
  let opened: ReturnType<typeof modelCallSpan>;
  try {
    // Opened past its preamble: a failure before anything the client would see is one before any output.
    ({ opened: pieces, span: opened } = await openRoutedStream(route, hold, signal, wire));
  } catch (error) {
    hold.progress.stop();
    ended();
    throw held.failed(error);
  }
  return { kind: 'stream', headers, callSignal: signal, frames: streamFrames(deps, wire, chat, signal, hold, pieces, opened, ended) };
}

/**
 * The tokens a call is counted for at admission: its text estimated at 4 bytes a token, its
 * inline images and PDFs at their bounds in the hold (./inline-media.ts: by pixels and pages,
 * not by the bytes that carry them), and its frozen max_tokens.
 */
export function tokenBound(chat: PreparedChat): number {
  return Math.ceil((chat.inputBytes - chat.media.chars) / 4) + chat.media.bound + chat.maxTokens;
}

/** How tokenBound counts, as a 413 for a chat bigger than a whole tokens_per_minute says it. */
export const CHAT_TOKEN_COUNTING: TokenCounting = {
  how: 'its text estimated at 4 bytes a token, an inline image or PDF at the most its pixels or pages may cost, plus max_tokens',
  smaller: 'ask for fewer max_tokens or send less input',
};
