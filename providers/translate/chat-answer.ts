// An OpenAI chat-completions answer, given back on the Anthropic Messages wire (the request
// was translated by messagesCallToChatCall). The answer is one text block. OpenAI does not
// say which stop sequence ended an answer, so `stop_sequence` is always null and a stop is
// reported as end_turn.
//
// OpenAI streams its usage last, so a translated stream's message_start says 0 input tokens
// and the final message_delta carries both counts (with the event's `usage` set). An
// upstream that sends no usage chunk leaves message_delta with the number of text deltas as
// output_tokens, 0 input tokens, and no `usage` on the event: the gateway counts by itself.

import { asOptionalObject } from '../openai/shape';
import type { ChatCompletion, ChatStreamChunk, MessagesResult, MessagesStreamEvent, TokenUsage } from '../port';
import { anthropicUsageJson, messageDelta, messageStart, messageStop, ping, textBlockStart, textBlockStop, textDelta, textMessage } from '../anthropic/wire';
import { brokenAnswer, messageIdOf, translatedStream } from './stream';

export function completionToMessagesResult(completion: ChatCompletion, upstreamModel: string): MessagesResult {
  const usage = anthropicUsageJson(completion.usage);
  const stopReason = stopReasonOf(completion.finishReason);
  return { message: textMessage(messageIdOf(completion.id), upstreamModel, completion.content, stopReason, usage), usage: completion.usage };
}

export function chunksToMessagesEvents(chunks: AsyncIterable<ChatStreamChunk>, upstreamModel: string): AsyncIterable<MessagesStreamEvent> {
  return translatedStream(chunks, (source) => events(source, upstreamModel));
}

/** OpenAI's finish reasons in Anthropic's words; unknown ones end the turn. */
export function stopReasonOf(finishReason: string): string {
  return STOP_REASONS.get(finishReason) ?? 'end_turn';
}
const STOP_REASONS = new Map([['length', 'max_tokens'], ['content_filter', 'refusal'], ['tool_calls', 'tool_use'], ['function_call', 'tool_use']]);

async function* events(chunks: AsyncIterable<ChatStreamChunk>, model: string): AsyncGenerator<MessagesStreamEvent, void, undefined> {
  let started = false;
  let stopReason: string | undefined;
  let usage: TokenUsage | undefined;
  let deltas = 0;
  // message_delta sent: the stop reason and the provider's final count are stated, only the end is left.
  let stated = false;
  for await (const piece of chunks) {
    if (!started) {
      started = true;
      const id = piece.chunk.id;
      yield messageStart(messageIdOf(typeof id === 'string' ? id : ''), model, { input_tokens: 0, output_tokens: 0 });
      yield textBlockStart();
      yield ping();
    }
    // Past message_delta only message_stop may follow: what the upstream sends after its final
    // count (a usage repeated, a stray piece) has no place in the sequence and is passed over.
    if (stated) continue;
    const choice = Array.isArray(piece.chunk.choices) ? asOptionalObject(piece.chunk.choices[0]) : undefined;
    const delta = asOptionalObject(choice?.delta);
    if (isCall(delta?.tool_calls) || isCall(delta?.function_call)) throw brokenAnswer('upstream streamed a tool call to a request without tools');
    if (piece.outputDelta !== '') {
      deltas++;
      yield textDelta(piece.outputDelta);
    }
    if (typeof choice?.finish_reason === 'string') stopReason = stopReasonOf(choice.finish_reason);
    usage = piece.usage ?? usage;
    // Usage stated at or after the finish is the provider's final count: message_delta carries it
    // now, not at the upstream's end, so a stream cut before [DONE] is charged it (as on its own wire).
    if (!stated && stopReason !== undefined && piece.usage) {
      stated = true;
      yield textBlockStop();
      yield messageDelta(stopReason, anthropicUsageJson(piece.usage), piece.usage);
    }
  }
  if (!stated) {
    if (stopReason === undefined) throw brokenAnswer('stream ended before the answer finished');
    yield textBlockStop();
    const counts = usage ? anthropicUsageJson(usage) : { input_tokens: 0, output_tokens: deltas };
    yield messageDelta(stopReason, counts, usage);
  }
  yield messageStop();
}

/** Some upstreams send `tool_calls: []` or null on plain text deltas. */
function isCall(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 : value !== undefined && value !== null;
}
