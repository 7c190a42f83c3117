// The simulated chat provider: a real adapter behind the port, deterministic, with
// per-request directives for failure modes and latency (see ./directives.ts).
//
// Output is `tokens` words (directive, default 16, capped by max_tokens): tok0 tok1 … .
// Input tokens are ceil(UTF-8 bytes of JSON.stringify(messages) / 4).

import { randomUUID } from 'node:crypto';
import { abortableDelay, abortedCallError } from '../abort';
import type { ChatCall, ChatCompletion, ChatProvider, ChatStreamChunk, TokenUsage } from '../port';
import { SimulatedAdapter, type SimulatedProviderOptions } from './adapter';
import { beforeOutput, breakLikeStream, planTokens, simInputTokens, simulatedBreak, words } from './output';

export { parseSimDirectives, SimDirectiveError } from './directives';
export { SIM_DEFAULT_OUTPUT_TOKENS } from './output';

export type SimulatedChatProviderOptions = SimulatedProviderOptions;

interface Plan {
  id: string;
  created: number;
  tokens: number;
  finishReason: 'stop' | 'length';
  usage: TokenUsage;
}

export class SimulatedChatProvider extends SimulatedAdapter implements ChatProvider {
  async complete(call: ChatCall): Promise<ChatCompletion> {
    await beforeOutput(call);
    const plan = planOutput(call);
    breakLikeStream(call, plan.tokens + 2);
    return {
      id: plan.id,
      content: words(0, plan.tokens),
      finishReason: plan.finishReason,
      usage: plan.usage,
      created: plan.created,
    };
  }

  async stream(call: ChatCall): Promise<AsyncIterable<ChatStreamChunk>> {
    await beforeOutput(call);
    return streamChunks(call, planOutput(call));
  }
}

function planOutput(call: ChatCall): Plan {
  const { tokens, cut } = planTokens(call);
  return {
    id: `chatcmpl-sim-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    tokens,
    finishReason: cut ? 'length' : 'stop',
    usage: { inputTokens: simInputTokens(call.messages), outputTokens: tokens },
  };
}

async function* streamChunks(call: ChatCall, plan: Plan): AsyncGenerator<ChatStreamChunk> {
  const { streamDelayMs = 0, failAfterChunks } = call.directives ?? {};
  const base = { id: plan.id, object: 'chat.completion.chunk', created: plan.created, model: call.upstreamModel };
  const total = plan.tokens + 2; // token chunks, the finish chunk, the usage chunk
  for (let n = 0; n < total; n++) {
    if (failAfterChunks !== undefined && n >= failAfterChunks) throw simulatedBreak(failAfterChunks);
    if (n > 0 && streamDelayMs > 0) await abortableDelay(streamDelayMs, call.signal);
    if (call.signal.aborted) throw abortedCallError(call.signal);
    if (n < plan.tokens) {
      const content = words(n, n + 1);
      const delta = n === 0 ? { role: 'assistant', content } : { content };
      yield { chunk: { ...base, choices: [{ index: 0, delta, finish_reason: null }] }, outputDelta: content };
    } else if (n === plan.tokens) {
      const delta = plan.tokens === 0 ? { role: 'assistant', content: '' } : {};
      yield { chunk: { ...base, choices: [{ index: 0, delta, finish_reason: plan.finishReason }] }, outputDelta: '' };
    } else {
      const { inputTokens, outputTokens } = plan.usage;
      const usage = { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
      yield { chunk: { ...base, choices: [], usage }, outputDelta: '', usage: plan.usage };
    }
  }
}
