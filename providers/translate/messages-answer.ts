// An Anthropic Messages answer, given back on the OpenAI chat wire (the request was
// translated by chatCallToMessagesCall). Only text can come back: requests with tools or
// thinking were refused, so any other content is the upstream breaking the contract.

import { streamError } from '../anthropic/wire';
import { openAiUsageJson } from '../openai/chat';
import { asOptionalObject, type Json } from '../openai/shape';
import type { ChatCompletion, ChatStreamChunk, MessagesResult, MessagesStreamEvent, TokenUsage } from '../port';
import { brokenAnswer, chatIdOf, nowSeconds, translatedStream } from './stream';

export function messagesResultToCompletion(result: MessagesResult): ChatCompletion {
  const message = result.message;
  if (!Array.isArray(message.content)) throw brokenAnswer('upstream answer has no content list');
  let text = '';
  for (const block of message.content) text += textOf(asOptionalObject(block));
  return {
    id: chatIdOf(typeof message.id === 'string' ? message.id : ''),
    content: text,
    finishReason: finishReasonOf(message.stop_reason),
    usage: result.usage,
    created: nowSeconds(),
  };
}

export function messagesEventsToChunks(events: AsyncIterable<MessagesStreamEvent>, upstreamModel: string): AsyncIterable<ChatStreamChunk> {
  return translatedStream(events, (source) => chunks(source, upstreamModel));
}

/** Anthropic's stop reasons in OpenAI's words; pause_turn and unknown ones end the answer. */
export function finishReasonOf(stopReason: unknown): string {
  return (typeof stopReason === 'string' ? FINISH_REASONS.get(stopReason) : undefined) ?? 'stop';
}
const FINISH_REASONS = new Map([['max_tokens', 'length'], ['tool_use', 'tool_calls'], ['refusal', 'content_filter']]);

function textOf(block: Json | undefined): string {
  if (block?.type === 'text' && typeof block.text === 'string') return block.text;
  throw brokenAnswer(`upstream answered a ${String(block?.type)} content block to a text-only request`);
}

async function* chunks(events: AsyncIterable<MessagesStreamEvent>, model: string): AsyncGenerator<ChatStreamChunk, void, undefined> {
  const created = nowSeconds();
  let base: Json | undefined;
  let finished = false;
  let usage: TokenUsage | undefined;
  const chunk = (choices: unknown[], extra: Json = {}): Json => {
    if (!base) throw brokenAnswer('stream did not begin with message_start');
    return { ...base, choices, ...extra };
  };
  const usageChunk = (): ChatStreamChunk => {
    if (!usage) throw brokenAnswer('stream finished without usage');
    return { chunk: chunk([], { usage: openAiUsageJson(usage) }), outputDelta: '', usage };
  };
  for await (const event of events) {
    const data = event.data;
    switch (event.event) {
      case 'message_start': {
        const id = asOptionalObject(data.message)?.id;
        base = { id: chatIdOf(typeof id === 'string' ? id : ''), object: 'chat.completion.chunk', created, model };
        // The prompt Anthropic states here is what a stream cut before its end is charged for.
        yield { chunk: chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]), outputDelta: '', ...(event.usage ? { statedPrompt: event.usage } : {}) };
        break;
      }
      case 'content_block_start': {
        const type = asOptionalObject(data.content_block)?.type;
        if (type !== 'text') throw brokenAnswer(`upstream streamed a ${String(type)} content block to a text-only request`);
        break;
      }
      case 'content_block_delta': {
        const delta = asOptionalObject(data.delta);
        if (delta?.type !== 'text_delta' || typeof delta.text !== 'string') throw brokenAnswer(`upstream streamed a ${String(delta?.type)} to a text-only request`);
        yield { chunk: chunk([{ index: 0, delta: { content: delta.text }, finish_reason: null }]), outputDelta: delta.text };
        break;
      }
      case 'message_delta': {
        usage = event.usage ?? usage;
        const stopReason = asOptionalObject(data.delta)?.stop_reason;
        if (!finished && typeof stopReason === 'string') {
          finished = true;
          // The provider's final count rides the finish chunk for the gateway (not in the chunk's
          // JSON: OpenAI sends its usage last), so a stream cut before message_stop is charged it.
          yield { chunk: chunk([{ index: 0, delta: {}, finish_reason: finishReasonOf(stopReason) }]), outputDelta: '', ...(event.usage ? { usage: event.usage } : {}) };
        }
        break;
      }
      case 'message_stop':
        if (!finished) throw brokenAnswer('message_stop came before the stop reason');
        yield usageChunk();
        return;
      case 'error':
        throw streamError(data);
      default:
      // ping, content_block_stop and events Anthropic may add: nothing to say on the OpenAI wire.
    }
  }
  // The source may end right after the stop reason (the adapter accepts that as complete).
  if (!finished) throw brokenAnswer('stream ended before the answer finished');
  yield usageChunk();
}
