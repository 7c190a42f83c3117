// The one port every provider adapter implements. The gateway speaks OpenAI chat-completions
// wire to adapters; an adapter translates to its upstream. Streams yield chunk by chunk.

export type ProviderErrorKind =
  /** The upstream refused the request and said so (4xx but 429): nothing was produced. */
  | 'rejected'
  /** The upstream limited the platform's rate (429): nothing was produced; not the request's fault. */
  | 'rate_limited'
  /** The upstream could not be reached or failed (connect error, 5xx) before any output. */
  | 'unavailable'
  /** No answer within the provider timeout: the outcome is unknown. */
  | 'timeout'
  /** The connection broke or the upstream sent something unreadable after the call started. */
  | 'protocol';

/**
 * A provider call that failed. `message` is the operators' account (the entry's name, the
 * upstream's own words, a connect error's address): it goes to the log and the call's span,
 * never to the customer. What the customer is told is built from the kind, the status and
 * `detail` alone (customerProviderMessage).
 */
export class ProviderError extends Error {
  /** Words about the failure fit for the customer (a refusal's reason, stripped of anything internal); none by default. */
  readonly detail?: string;

  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly upstreamStatus?: number,
    /** How long the upstream asked to be left alone (Retry-After of a 429 or 503), ms. */
    readonly retryAfterMs?: number,
    options: { detail?: string } = {},
  ) {
    super(message);
    this.name = 'ProviderError';
    if (options.detail) this.detail = options.detail;
  }
}

/**
 * Upstream statuses that say the platform's own credentials or configuration for the upstream
 * are wrong (its key, its organisation, its proxy): never the customer's request. Adapters map
 * them to 'unavailable', so the call may go on to another upstream and the customer is told 502.
 */
export const CREDENTIAL_STATUSES: ReadonlySet<number> = new Set([401, 403, 407]);

/** What the customer is told when the provider refused the platform's credentials. */
export const PLATFORM_CREDENTIALS_REFUSED = "the provider refused the platform's credentials";

/** What the customer is told when the provider limited the platform's rate (an upstream 429). */
export const PROVIDER_RATE_LIMITED = "the provider is limiting the platform's rate (429)";

/** Whether `error` says the upstream refused the platform's credentials (CREDENTIAL_STATUSES). */
export function isCredentialFailure(error: unknown): boolean {
  return error instanceof ProviderError && error.upstreamStatus !== undefined && CREDENTIAL_STATUSES.has(error.upstreamStatus);
}

/**
 * The one sentence the customer reads about a failed provider call: from its kind, its
 * upstream status and its `detail`, never from its message (docs/providers.md, "What the
 * customer is told"). The full account is logged and traced instead.
 */
export function customerProviderMessage(error: ProviderError): string {
  const status = error.upstreamStatus;
  if (isCredentialFailure(error)) return PLATFORM_CREDENTIALS_REFUSED;
  switch (error.kind) {
    case 'rejected':
      return `the provider rejected the request${status ? ` (${status})` : ''}${error.detail ? `: ${error.detail}` : ''}`;
    case 'rate_limited':
      return PROVIDER_RATE_LIMITED;
    case 'timeout':
      return 'the provider did not answer in time';
    case 'unavailable':
      if (error.detail) return `the provider failed: ${error.detail}`;
      return status === undefined ? 'the provider could not be reached' : `the provider failed (${status})`;
    case 'protocol':
      return `the provider's answer broke off or could not be read${error.detail ? `: ${error.detail}` : ''}`;
  }
}

/** Per-request directives for the simulated provider (header `X-Sim-Directive`, see docs/simulated-provider.md). */
export interface SimDirectives {
  /** Fail with 503 before any output. */
  failBeforeOutput?: boolean;
  /** Confirmed rejection (400 from the provider). */
  reject?: boolean;
  /** Never answer (until aborted): the gateway's provider timeout decides. */
  hang?: boolean;
  /** Deliver the artifact only after this many ms (images). */
  lateArtifactMs?: number;
  /** Delay between streamed chunks, ms. */
  streamDelayMs?: number;
  /** Number of output tokens to produce (capped by max_tokens). */
  outputTokens?: number;
  /** Fail in the middle of a stream after this many chunks. */
  failAfterChunks?: number;
}

export interface ChatMessage {
  role: string;
  content: unknown;
  [key: string]: unknown;
}

export interface ChatCall {
  /** The upstream's own model name (from the catalog profile). */
  upstreamModel: string;
  messages: ChatMessage[];
  /** The frozen effective max_tokens: what the provider is asked for. */
  maxTokens: number;
  /** Other request fields passed through unchanged (temperature, top_p, stop, tools, ...). */
  passthrough: Record<string, unknown>;
  directives?: SimDirectives;
  signal: AbortSignal;
  /**
   * Told once a JSON call's answer began: its headers came with a success status (the
   * upstream's first byte). An attempt with a fallback behind it is given up only before this; a
   * generation the upstream has begun to answer runs to the call's deadline.
   */
  answered?: () => void;
}

export interface TokenUsage {
  /** Every prompt token the model read: uncached, read from the prompt cache, written to it. */
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens: read from the provider's prompt cache (absent: none). */
  cacheReadTokens?: number;
  /** Of inputTokens: written to the prompt cache for its default lifetime (absent: none). */
  cacheWriteTokens?: number;
  /** Of inputTokens: written to the prompt cache for one hour (absent: none). */
  cacheWrite1hTokens?: number;
  /** Of outputTokens: reasoning tokens, when the provider says (absent: not said, or none). */
  reasoningTokens?: number;
  /**
   * True when inputTokens is the gateway's own count of a stream cut before the provider stated
   * its count (a tokenizer, else a byte estimate): how much of it the prompt cache served is unknown.
   */
  promptCounted?: boolean;
}

/** The prompt-cache counts of a usage, only those above zero (the way the adapters report them). */
export function withCacheCounts<T extends Pick<TokenUsage, 'inputTokens'>>(usage: T, read: number, write: number, write1h: number): T & Pick<TokenUsage, 'cacheReadTokens' | 'cacheWriteTokens' | 'cacheWrite1hTokens'> {
  return { ...usage, ...(read > 0 ? { cacheReadTokens: read } : {}), ...(write > 0 ? { cacheWriteTokens: write } : {}), ...(write1h > 0 ? { cacheWrite1hTokens: write1h } : {}) };
}

/** The prompt tokens that were neither read from nor written to the prompt cache. */
export function uncachedInput(usage: TokenUsage): number {
  return Math.max(0, usage.inputTokens - (usage.cacheReadTokens ?? 0) - (usage.cacheWriteTokens ?? 0) - (usage.cacheWrite1hTokens ?? 0));
}

export interface ChatCompletion {
  id: string;
  content: string;
  finishReason: string;
  usage: TokenUsage;
  /** The upstream's created timestamp, seconds. */
  created: number;
  /**
   * The upstream's message as an OpenAI-wire upstream sent it (its tool calls, refusal and any
   * other field beside the text), relayed whole on the OpenAI wire; absent: a text message of
   * `content`.
   */
  message?: Record<string, unknown>;
  /** The choice's `logprobs`, when an OpenAI-wire upstream sent them (asked for by the request). */
  logprobs?: unknown;
  /** The upstream's `system_fingerprint`, when it sent one. */
  systemFingerprint?: string;
}

export interface ChatStreamChunk {
  /** The OpenAI chat.completion.chunk object, to be relayed as one SSE event. */
  chunk: Record<string, unknown>;
  /** Text this chunk adds to the output (counted towards the charge on disconnect). */
  outputDelta: string;
  /** Present on the final usage chunk. */
  usage?: TokenUsage;
  /**
   * The prompt as the provider stated it before the end, where its wire does (an Anthropic
   * stream's message_start, translated to this wire): what a cut stream's prompt is charged.
   */
  statedPrompt?: TokenUsage;
}

/** What every text provider offers, on its own wire: its name, its body limit, a stream. */
interface StreamingProvider<Call, Piece> {
  readonly name: string;
  /** The largest request body the upstream accepts, bytes. */
  readonly maxBodyBytes: number;
  /** Resolves once the upstream accepted the stream (errors before output reject here). */
  stream(call: Call): Promise<AsyncIterable<Piece>>;
  /** Frees kept-alive connections at shutdown; adapters without any omit it. */
  close?(): Promise<void>;
}

export interface ChatProvider extends StreamingProvider<ChatCall, ChatStreamChunk> {
  complete(call: ChatCall): Promise<ChatCompletion>;
}

// ---- Images -------------------------------------------------------------------------------

/** One image generation, as the gateway asks an adapter for it (always exactly one image). */
export interface ImageCall {
  /** The image task this call belongs to: sent upstream as the call's idempotency reference. */
  taskId: string;
  /** The upstream's own model name (from the catalog profile). */
  upstreamModel: string;
  prompt: string;
  responseFormat: 'url' | 'b64_json';
  /** Other request fields passed through unchanged (size, quality, style, user, ...). */
  passthrough: Record<string, unknown>;
  directives?: SimDirectives;
  /** When the call was sent (ms since the epoch): lets a provider answer a later lookup. */
  sentAt: number;
  signal: AbortSignal;
}

/** The one generated image: exactly one of url and b64Json is set, as the call asked. */
export interface ImageArtifact {
  url?: string;
  b64Json?: string;
  revisedPrompt?: string;
  /** The upstream's created timestamp, seconds. */
  created: number;
}

/** What a provider can say, later, about an earlier call it was sent. */
export type ImageLookup =
  | { status: 'succeeded'; artifact: ImageArtifact }
  /** The provider confirms the call produced nothing and never will (a confirmed rejection). */
  | { status: 'failed'; reason: string }
  /** Still running, or the provider cannot tell: the outcome stays undetermined. */
  | { status: 'pending' };

export interface ImageProvider {
  readonly name: string;
  /** The largest request body the upstream accepts, bytes. */
  readonly maxBodyBytes: number;
  /** Generates one image. Fails with ProviderError: 'rejected' is a confirmed rejection. */
  generate(call: ImageCall): Promise<ImageArtifact>;
  /**
   * Asks the upstream for the outcome of an earlier call, given that call as it was sent
   * (signal aside). Adapters whose upstream cannot tell omit it.
   */
  lookup?(call: Omit<ImageCall, 'signal'>, signal: AbortSignal): Promise<ImageLookup>;
  close?(): Promise<void>;
}

// ---- Anthropic Messages wire --------------------------------------------------------------

/** One call on the Anthropic Messages wire (POST /v1/messages), as the gateway asks an adapter. */
export interface MessagesCall {
  /** The upstream's own model name (from the catalog profile). */
  upstreamModel: string;
  /**
   * The Messages body fields other than model, max_tokens and stream, passed as given:
   * messages, system, temperature, top_p, top_k, stop_sequences, metadata, tools, thinking, ...
   */
  body: Record<string, unknown>;
  /** The frozen effective max_tokens: what the provider is asked for. */
  maxTokens: number;
  directives?: SimDirectives;
  signal: AbortSignal;
  /** As ChatCall's: told once a JSON call's answer began. */
  answered?: () => void;
}

/** A finished Messages answer: the upstream's message object and its usage. */
export interface MessagesResult {
  /** The Anthropic `message` object ({id, type:"message", role, model, content, stop_reason, stop_sequence, usage}). */
  message: Record<string, unknown>;
  usage: TokenUsage;
}

/** One event of a Messages stream, to be relayed as `event: <event>\ndata: <json>`. */
export interface MessagesStreamEvent {
  /** message_start, content_block_start, ping, content_block_delta, content_block_stop, message_delta, message_stop. */
  event: string;
  data: Record<string, unknown>;
  /** Text this event adds to the output (counted towards the charge on disconnect). */
  outputDelta: string;
  /** The usage known so far: on message_start (input) and message_delta (cumulative output). */
  usage?: TokenUsage;
}

/** A prompt to count on the Messages wire: the call without its output limit. */
export type CountTokensCall = Omit<MessagesCall, 'maxTokens'>;

export interface MessagesProvider extends StreamingProvider<MessagesCall, MessagesStreamEvent> {
  create(call: MessagesCall): Promise<MessagesResult>;
  /**
   * The provider's own count of the prompt's input tokens (Anthropic's count_tokens), free of
   * charge; adapters whose upstream cannot count omit it (the gateway then counts itself).
   */
  countTokens?(call: CountTokensCall): Promise<number>;
}

// ---- Embeddings -------------------------------------------------------------------------

/** One embeddings request's input, as the OpenAI wire allows it: text(s) or token-id array(s). */
export type EmbeddingsInput = string | string[] | number[] | number[][];

/** How the vectors come back: JSON numbers, or each vector's little-endian float32 bytes in base64. */
export type EmbeddingsEncoding = 'float' | 'base64';

/** One embeddings call (POST /v1/embeddings), as the gateway asks an adapter for it. */
export interface EmbeddingsCall {
  /** The upstream's own model name (from the catalog profile). */
  upstreamModel: string;
  input: EmbeddingsInput;
  encodingFormat: EmbeddingsEncoding;
  /** The vectors' length, when the request names one. */
  dimensions?: number;
  /** Other request fields passed through unchanged (user). */
  passthrough: Record<string, unknown>;
  directives?: SimDirectives;
  signal: AbortSignal;
}

/** The input's items, one vector each: a text, or one array of token ids. */
export function embeddingItems(input: EmbeddingsInput): (string | number[])[] {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as (string | number[])[];
}

export interface EmbeddingsResult {
  /** One vector per input, in input order: numbers (float) or a base64 string (base64), as asked. */
  vectors: (number[] | string)[];
  /** The prompt tokens the upstream counted (outputTokens is always 0: an embedding produces none). */
  usage: TokenUsage;
}

export interface EmbeddingsProvider {
  readonly name: string;
  /** The largest request body the upstream accepts, bytes. */
  readonly maxBodyBytes: number;
  embed(call: EmbeddingsCall): Promise<EmbeddingsResult>;
  close?(): Promise<void>;
}
