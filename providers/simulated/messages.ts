// The simulated Messages provider: the Anthropic-wire twin of ./chat.ts, with the same
// directives and the same deterministic output (tok0 tok1 …, default 16 words, capped by
// max_tokens; stop_reason "max_tokens" when capped, else "end_turn").
//
// Input tokens are ceil(UTF-8 bytes of JSON.stringify({ system, messages }) / 4), system
// omitted when the call has none: the chat provider's rule, with the system prompt that this
// wire keeps apart from the messages.
//
// A stream is Anthropic's full event sequence: message_start, content_block_start, ping, one
// content_block_delta per word, content_block_stop, message_delta, message_stop. Every event
// counts as a chunk for fail-after-chunks and stream-delay.

import { randomUUID } from 'node:crypto';
import { abortableDelay, abortedCallError } from '../abort';
import type { CountTokensCall, MessagesCall, MessagesProvider, MessagesResult, MessagesStreamEvent, TokenUsage } from '../port';
import { messageDelta, messageStart, messageStop, ping, textBlockStart, textBlockStop, textDelta, textMessage } from '../anthropic/wire';
import { SimulatedAdapter, type SimulatedProviderOptions } from './adapter';
import { beforeOutput, breakLikeStream, planTokens, simInputTokens, simulatedBreak, words } from './output';

export type SimulatedMessagesProviderOptions = SimulatedProviderOptions;

/** The events around the words: start, block start, ping, block stop, delta, stop. */
const FRAMING_EVENTS = 6;

/** message_start's output count, as Anthropic's own streams state it. */
const START_OUTPUT_TOKENS = 1;

interface Plan {
  id: string;
  tokens: number;
  stopReason: 'end_turn' | 'max_tokens';
  usage: TokenUsage;
}

export class SimulatedMessagesProvider extends SimulatedAdapter implements MessagesProvider {
  async create(call: MessagesCall): Promise<MessagesResult> {
    await beforeOutput(call);
    const plan = planOutput(call);
    breakLikeStream(call, plan.tokens + FRAMING_EVENTS);
    const usage = { input_tokens: plan.usage.inputTokens, output_tokens: plan.tokens };
    return { message: textMessage(plan.id, call.upstreamModel, words(0, plan.tokens), plan.stopReason, usage), usage: plan.usage };
  }

  async stream(call: MessagesCall): Promise<AsyncIterable<MessagesStreamEvent>> {
    await beforeOutput(call);
    return streamEvents(call, planOutput(call));
  }

  /** The input count its answers would state (the directives before output apply alike). */
  async countTokens(call: CountTokensCall): Promise<number> {
    await beforeOutput(call);
    return simInputTokens({ system: call.body.system, messages: call.body.messages });
  }
}

function planOutput(call: MessagesCall): Plan {
  const { tokens, cut } = planTokens(call);
  const input = simInputTokens({ system: call.body.system, messages: call.body.messages });
  return {
    id: `msg_sim_${randomUUID().replaceAll('-', '')}`,
    tokens,
    stopReason: cut ? 'max_tokens' : 'end_turn',
    usage: { inputTokens: input, outputTokens: tokens },
  };
}

/** The n-th event of the plan's stream. */
function event(call: MessagesCall, plan: Plan, n: number): MessagesStreamEvent {
  const { inputTokens, outputTokens } = plan.usage;
  if (n === 0) {
    return messageStart(plan.id, call.upstreamModel, { input_tokens: inputTokens, output_tokens: START_OUTPUT_TOKENS }, { inputTokens, outputTokens: START_OUTPUT_TOKENS });
  }
  if (n === 1) return textBlockStart();
  if (n === 2) return ping();
  const word = n - 3;
  if (word < plan.tokens) return textDelta(words(word, word + 1));
  if (word === plan.tokens) return textBlockStop();
  if (word === plan.tokens + 1) return messageDelta(plan.stopReason, { output_tokens: outputTokens }, plan.usage);
  return messageStop();
}

async function* streamEvents(call: MessagesCall, plan: Plan): AsyncGenerator<MessagesStreamEvent> {
  const { streamDelayMs = 0, failAfterChunks } = call.directives ?? {};
  const total = plan.tokens + FRAMING_EVENTS;
  for (let n = 0; n < total; n++) {
    if (failAfterChunks !== undefined && n >= failAfterChunks) throw simulatedBreak(failAfterChunks);
    if (n > 0 && streamDelayMs > 0) await abortableDelay(streamDelayMs, call.signal);
    if (call.signal.aborted) throw abortedCallError(call.signal);
    yield event(call, plan, n);
  }
}
