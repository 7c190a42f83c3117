// The simulated chat provider: a real adapter behind the port, deterministic, with
// per-request directives for failure modes and latency (see ./directives.ts).
//
// Output is `tokens` words (directive, default 16, capped by max_tokens): tok0 tok1 … .
// Input tokens are ceil(UTF-8 bytes of JSON.stringify(messages) / 4).

import { randomUUID } from 'node:crypto';
import { abortableDelay, abortedCallError, untilAborted } from '../abort';
import {
  ProviderError,
  type ChatCall,
  type ChatCompletion,
  type ChatProvider,
  type ChatStreamChunk,
  type TokenUsage,
} from '../port';
import { SimulatedAdapter, type SimulatedProviderOptions } from './adapter';

export { parseSimDirectives, SimDirectiveError } from './directives';

export const SIM_DEFAULT_OUTPUT_TOKENS = 16;

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
    await this.start(call);
    const plan = planOutput(call);
    // A non-streamed answer breaks in the middle when the stream would have.
    const failAfter = call.directives?.failAfterChunks;
    if (failAfter !== undefined && failAfter < plan.tokens + 2) {
      throw new ProviderError('protocol', `simulated break after ${failAfter} chunks`);
    }
    return {
      id: plan.id,
      content: words(0, plan.tokens),
      finishReason: plan.finishReason,
      usage: plan.usage,
      created: plan.created,
    };
  }

  async stream(call: ChatCall): Promise<AsyncIterable<ChatStreamChunk>> {
    await this.start(call);
    return streamChunks(call, planOutput(call));
  }

  /** Everything that happens before any output: abort, rejection, failure, hang. */
  private async start(call: ChatCall): Promise<void> {
    const d = call.directives ?? {};
    if (call.signal.aborted) throw abortedCallError(call.signal);
    if (d.reject) throw new ProviderError('rejected', 'simulated rejection', 400);
    if (d.failBeforeOutput) throw new ProviderError('unavailable', 'simulated failure before output', 503);
    if (d.hang) await untilAborted(call.signal);
  }
}

function planOutput(call: ChatCall): Plan {
  const wanted = call.directives?.outputTokens ?? SIM_DEFAULT_OUTPUT_TOKENS;
  const tokens = Math.max(0, Math.min(wanted, call.maxTokens));
  const inputTokens = Math.ceil(Buffer.byteLength(JSON.stringify(call.messages), 'utf8') / 4);
  return {
    id: `chatcmpl-sim-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    tokens,
    finishReason: wanted > call.maxTokens ? 'length' : 'stop',
    usage: { inputTokens, outputTokens: tokens },
  };
}

/** Words from..to-1, space-joined, with a leading space unless from is 0. */
function words(from: number, to: number): string {
  let text = '';
  for (let i = from; i < to; i++) text += i === 0 ? 'tok0' : ` tok${i}`;
  return text;
}

async function* streamChunks(call: ChatCall, plan: Plan): AsyncGenerator<ChatStreamChunk> {
  const { streamDelayMs = 0, failAfterChunks } = call.directives ?? {};
  const base = { id: plan.id, object: 'chat.completion.chunk', created: plan.created, model: call.upstreamModel };
  const total = plan.tokens + 2; // token chunks, the finish chunk, the usage chunk
  for (let n = 0; n < total; n++) {
    if (failAfterChunks !== undefined && n >= failAfterChunks) {
      throw new ProviderError('protocol', `simulated break after ${failAfterChunks} chunks`);
    }
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
