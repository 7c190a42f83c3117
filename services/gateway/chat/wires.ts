// The two inbound chat wires, each by role: how a request is read (request), how the upstream is
// called in whichever wire the serving profile speaks (caller), what its answers say about the
// charge (charge), and how the client hears it (answer). The use case is the same story for both;
// only these translations differ.

import type { ChatWire } from '../../../catalog/catalog';
import { streamErrorFrame } from '../../../lib/error-responder';
import type { GatewayError } from '../../../lib/errors';
import type { ChatCompletion, ChatStreamChunk, MessagesResult, MessagesStreamEvent, SimDirectives, TokenUsage } from '../../../providers/port';
import { chunksToMessagesEvents, completionToMessagesResult, messagesEventsToChunks, messagesResultToCompletion } from '../../../providers/translate';
import { openAiUsageJson } from '../../../providers/openai/chat';
import { deltaValueCarries } from './preamble';
import type { InlineMedia } from './inline-media';
import { parseChatBody, parseMessagesBody, passthroughOf, type ParsedBody } from './request';
import type { InboundCall, Upstream } from './upstream';

/** One piece of a stream on either wire: what it adds to the output and the usage it reports. */
export interface StreamPiece {
  outputDelta: string;
  usage?: TokenUsage;
  /** The prompt the provider stated before the end, on a piece whose wire carries it apart from its usage. */
  statedPrompt?: TokenUsage;
}

/** A request as its wire states it, shape-checked; the limits are the use case's. */
export interface ParsedChat {
  stream: boolean;
  maxTokens: unknown;
  thinking: unknown;
  /** Everything else, for rejectUnsupported (n, max_completion_tokens). */
  body: Record<string, unknown>;
  /** The inline images and PDFs of its messages, as read while they were checked (undefined: none). */
  media?: readonly InlineMedia[];
  /** The call to make, given the frozen max_tokens. */
  call(maxTokens: number, upstreamModel: string, directives?: SimDirectives): InboundCall;
}

/** Reading a request of the wire: its shape, and the call it makes once max_tokens is frozen. */
export interface WireRequest {
  parse(body: unknown): ParsedChat;
}

/** Calling the upstream, whichever wire the serving profile speaks, and answering in this wire's terms. */
export interface WireCaller<Result, Piece extends StreamPiece> {
  /** `answered`: told once the upstream's answer began (its headers), as the provider port says. */
  complete(upstream: Upstream, signal: AbortSignal, answered?: () => void): Promise<Result>;
  stream(upstream: Upstream, signal: AbortSignal): Promise<AsyncIterable<Piece>>;
}

/** What the wire's answers say about the charge (docs/money.md). */
export interface WireCharge<Result, Piece extends StreamPiece> {
  usage(result: Result): TokenUsage;
  /** True when the piece is produced output (counted, one token each, towards a cut stream's charge). */
  producesOutput(piece: Piece): boolean;
  /** True when the piece's usage is the provider's final count (the stream then completed). */
  finalUsage(piece: Piece): boolean;
}

/** How the client hears it: the JSON answer, the stream's frames, its end and its error frame. */
export interface WireAnswer<Result, Piece extends StreamPiece> {
  /** The JSON answer, naming the gateway's model id. */
  json(result: Result, modelId: string): Record<string, unknown>;
  /** The SSE frame of one piece, or undefined when it is not relayed. */
  frame(piece: Piece, modelId: string, parsed: ParsedChat): string | undefined;
  /** What closes a stream that completed. */
  readonly end: string;
  /** The frame that reports a failure after the stream started. */
  streamError(error: GatewayError): string;
}

/** An inbound chat wire, by role. */
export interface InboundWire<Result, Piece extends StreamPiece> {
  readonly wire: ChatWire;
  readonly request: WireRequest;
  readonly caller: WireCaller<Result, Piece>;
  readonly charge: WireCharge<Result, Piece>;
  readonly answer: WireAnswer<Result, Piece>;
}

/** The fields both wires name alike: stream, max_tokens, thinking. */
function parsedFrom({ body, media }: ParsedBody<Record<string, unknown>>, call: ParsedChat['call']): ParsedChat {
  return { stream: body.stream === true, maxTokens: body.max_tokens, thinking: body.thinking, body, media, call };
}

export const openAiWire: InboundWire<ChatCompletion, ChatStreamChunk> = {
  wire: 'openai-chat',
  request: {
    parse(raw) {
      const parsed = parseChatBody(raw);
      const { body } = parsed;
      return parsedFrom(parsed, (maxTokens, upstreamModel, directives) => ({
        wire: 'openai-chat',
        call: { upstreamModel, messages: body.messages as InboundCallMessages, maxTokens, passthrough: passthroughOf(body), directives },
      }));
    },
  },
  caller: {
    async complete(upstream, signal, answered) {
      if (upstream.wire === 'openai-chat') return upstream.provider.complete({ ...upstream.call, signal, answered });
      return messagesResultToCompletion(await upstream.provider.create({ ...upstream.call, signal, answered }));
    },
    async stream(upstream, signal) {
      if (upstream.wire === 'openai-chat') return upstream.provider.stream({ ...upstream.call, signal });
      return messagesEventsToChunks(await upstream.provider.stream({ ...upstream.call, signal }), upstream.call.upstreamModel);
    },
  },
  charge: {
    usage: (completion) => completion.usage,
    producesOutput: (piece) => piece.outputDelta !== '' || deltaCarriesOutput(piece.chunk),
    finalUsage: (piece) => piece.usage !== undefined,
  },
  answer: {
    json(completion, modelId) {
      // An OpenAI-wire upstream's message is relayed whole (tool calls, refusal, …), as its stream's chunks are.
      const choice: Record<string, unknown> = { index: 0, message: completion.message ?? { role: 'assistant', content: completion.content }, finish_reason: completion.finishReason };
      if (completion.logprobs !== undefined) choice.logprobs = completion.logprobs;
      const answer: Record<string, unknown> = { id: completion.id, object: 'chat.completion', created: completion.created, model: modelId, choices: [choice], usage: openAiUsageJson(completion.usage) };
      if (completion.systemFingerprint !== undefined) answer.system_fingerprint = completion.systemFingerprint;
      return answer;
    },
    frame(piece, modelId, parsed) {
      const includeUsage = (parsed.body.stream_options as { include_usage?: boolean } | null | undefined)?.include_usage === true;
      piece.chunk.model = modelId;
      if (piece.usage && !includeUsage) {
        // Usage the client did not ask for: a chunk of usage alone is not relayed, but one that
        // also carries a choice (some upstreams put the usage on the last text or finish chunk,
        // or on every chunk) is, without its usage: its text is output the client is charged for.
        const { usage: _usage, ...rest } = piece.chunk;
        return Array.isArray(rest.choices) && rest.choices.length > 0 ? `data: ${JSON.stringify(rest)}\n\n` : undefined;
      }
      return `data: ${JSON.stringify(piece.chunk)}\n\n`;
    },
    end: 'data: [DONE]\n\n',
    streamError: (error) => streamErrorFrame('openai', error),
  },
};

/** A chunk whose delta carries more than its role: tool calls, refusals, reasoning are output too. */
function deltaCarriesOutput(chunk: Record<string, unknown>): boolean {
  const choices = chunk.choices;
  const delta = Array.isArray(choices) ? (choices[0] as { delta?: unknown } | undefined)?.delta : undefined;
  if (typeof delta !== 'object' || delta === null) return false;
  return Object.entries(delta).some(([key, value]) => key !== 'role' && deltaValueCarries(value));
}

type InboundCallMessages = Extract<InboundCall, { wire: 'openai-chat' }>['call']['messages'];

export const anthropicWire: InboundWire<MessagesResult, MessagesStreamEvent> = {
  wire: 'anthropic-messages',
  request: {
    parse(raw) {
      const parsed = parseMessagesBody(raw);
      const { body } = parsed;
      return parsedFrom(parsed, (maxTokens, upstreamModel, directives) => ({
        wire: 'anthropic-messages',
        call: { upstreamModel, body: { ...passthroughOf(body), messages: body.messages }, maxTokens, directives },
      }));
    },
  },
  caller: {
    async complete(upstream, signal, answered) {
      if (upstream.wire === 'anthropic-messages') return upstream.provider.create({ ...upstream.call, signal, answered });
      return completionToMessagesResult(await upstream.provider.complete({ ...upstream.call, signal, answered }), upstream.call.upstreamModel);
    },
    async stream(upstream, signal) {
      if (upstream.wire === 'anthropic-messages') return upstream.provider.stream({ ...upstream.call, signal });
      return chunksToMessagesEvents(await upstream.provider.stream({ ...upstream.call, signal }), upstream.call.upstreamModel);
    },
  },
  charge: {
    usage: (result) => result.usage,
    // Every content delta is output the upstream bills: text, thinking, tool-input JSON alike.
    producesOutput: (piece) => piece.event === 'content_block_delta',
    finalUsage: (piece) => piece.event === 'message_delta' && piece.usage !== undefined,
  },
  answer: {
    json: (result, modelId) => ({ ...result.message, model: modelId }),
    frame(piece, modelId) {
      let data = piece.data;
      if (piece.event === 'message_start' && typeof data.message === 'object' && data.message !== null) {
        data = { ...data, message: { ...(data.message as Record<string, unknown>), model: modelId } };
      }
      return `event: ${piece.event}\ndata: ${JSON.stringify(data)}\n\n`;
    },
    end: '',
    streamError: (error) => streamErrorFrame('anthropic', error),
  },
};
