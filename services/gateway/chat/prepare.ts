// A chat request, checked: the model, its capabilities, the body and its limits, the provider
// call frozen (max_tokens), the reservation estimate. Everything that can refuse a request
// before anything is held happens here.

import type { AccountShare } from '../limits/account-share';
import type { BodyBudget } from '../limits/body-budget';
import type { RateAdmission } from '../limits/admission';
import { requireEligible, type Catalog, type ResolvedProfile } from '../../../catalog/catalog';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { GatewayError } from '../../../lib/errors';
import type { Logger } from 'pino';
import type { SimDirectives } from '../../../providers/port';
import { countChatPromptOffThread } from '../../../providers/tokenizer-thread';
import { requireCapability, type Capability } from '../capabilities/gates';
import type { Drain } from '../drain';
import type { FundsSource } from '../funds/leased-funds';
import type { Caller } from '../middleware/auth';
import type { ProgressEvery } from './hold-progress';
import type { Routing } from './provider-call';
import { checkBodySize, checkThinkingBudget, effectiveMaxTokens, rejectUnsupported, reservationEstimate } from './limits';
import type { PendingSettlements } from './pending-settlements';
import { mediaRuleOf, NO_MEDIA, tallyMedia, type MediaTally } from './inline-media';
import { chatPrices, promptPriceBound, type ChatPrices } from './prices';
import { upstreamFor, type ChatAdapters, type Upstream } from './upstream';
import type { InboundWire, ParsedChat, StreamPiece } from './wires';

export interface ChatDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, ChatAdapters>;
  funds: FundsHoldClient;
  /** Funds leases (GATEWAY_FUNDS_LEASE): the chat's holds carved from this instance's lease; else `funds`. */
  leases?: FundsSource;
  maxBodyBytes: number;
  /** Request bodies being received, per account (GATEWAY_ACCOUNT_BODY_BYTES); absent: not counted. */
  bodyBudget?: BodyBudget;
  /** Model calls running, per account (GATEWAY_ACCOUNT_CALLS); absent: not counted. */
  callsRunning?: AccountShare;
  providerTimeoutMs: number;
  holdTtlMs: number;
  /** How often a call records its progress on its hold and renews it (default 256 tokens or 2 s). */
  holdProgress?: ProgressEvery;
  /** Settles that did not land at once, retried until they do (./pending-settlements.ts). */
  settlements: PendingSettlements;
  logger: Logger;
  /** Calls in flight, aborted when a graceful shutdown times out (./drain.ts). */
  drain?: Drain;
  /** How a profile's upstreams are tried (./provider-call.ts, ../routing/health.ts); absent: the process's defaults. */
  routing?: Routing;
  /** Rate limits: the caller's Account actor admits each call of a caller that has one (../limits/admission.ts). */
  limits?: RateAdmission;
  /** What the capability gates decide per deployment: configured providers, accepted delivery channels. */
  capabilityGates: { providers: ReadonlySet<string>; accepted: ReadonlySet<Capability> };
}

export interface ChatInput {
  modelId: string;
  body: unknown;
  bodyBytes: number;
  caller: Caller;
  requestId: string;
  /** The funding pool the route's family pays from (pool-3 for open and compatibility routes). */
  pool: string;
  directives?: SimDirectives;
  /** Capabilities the request asks to use (X-Payg-Capabilities): each must pass its four gates. */
  capabilities: readonly Capability[];
  /** Aborted when the client has gone: the provider call is stopped and charged for what it produced. */
  signal?: AbortSignal;
}

/** One upstream the chat may be served by: its provider entry, its weight, the call made to it. */
export interface RouteCandidate {
  provider: string;
  weight: number;
  upstream: Upstream;
}

export interface PreparedChat {
  resolved: ResolvedProfile;
  parsed: ParsedChat;
  /** The call as the profile's first upstream gets it (the prompt the gateway counts is the same for all). */
  upstream: Upstream;
  /** Every upstream of the profile this deployment serves, in the file's order (../routing: the order tried). */
  route: RouteCandidate[];
  estimate: number;
  prices: ChatPrices;
  inputBytes: number;
  /** Its inline images and PDFs, under the rules of the upstreams that may serve it (./inline-media.ts). */
  media: MediaTally;
  /** The frozen max_tokens sent upstream. */
  maxTokens: number;
}

export type AnyWire = InboundWire<unknown, StreamPiece>;

/** Everything that can refuse a request, before anything is held. */
export function prepareChat<R, P extends StreamPiece>(deps: ChatDeps, wire: InboundWire<R, P>, input: ChatInput): PreparedChat {
  const resolved = deps.catalog.resolveChat(input.modelId, wire.wire);
  for (const capability of input.capabilities) {
    requireCapability(capability, { model: resolved.model, profile: resolved.profile, scopes: input.caller.scopes, ...deps.capabilityGates });
  }
  // The profile's upstreams this deployment serves on the profile's wire, each with its adapters.
  const served = resolved.profile.upstreams.flatMap((u) => {
    const adapters = deps.providers.get(u.provider);
    const provider = resolved.profile.wire_format === 'openai-chat' ? adapters?.chat : adapters?.messages;
    return provider ? [{ ...u, adapters, maxBodyBytes: provider.maxBodyBytes }] : [];
  });
  if (served.length === 0) throw new GatewayError('model_not_eligible', `model ${resolved.model.id} has no configured provider`);
  // The body must fit every upstream it may be sent to.
  checkBodySize(input.bodyBytes, [deps.maxBodyBytes, ...served.map((u) => u.maxBodyBytes), resolved.model.limits.max_body_bytes ?? Infinity]);
  const parsed = wire.request.parse(input.body);
  rejectUnsupported(parsed.body);
  const maxTokens = effectiveMaxTokens(parsed.maxTokens, resolved.model.limits);
  checkThinkingBudget(parsed.thinking, maxTokens);
  const output = requireEligible(resolved.model, 'TEXT_OUTPUT');
  const route = served.map((u) => ({ provider: u.provider, weight: u.weight, upstream: upstreamFor(resolved, u.adapters, parsed.call(maxTokens, u.upstream_model, input.directives)) }));
  const upstream = route[0].upstream;
  const prices = chatPrices(resolved.model, output, maxTokens);
  // The body's bytes bound its text; an inline image or PDF adds what its pixels or pages may cost beyond its bytes, by the rule of any upstream that may serve it.
  const media = parsed.media ? tallyMedia(parsed.media, served.map((u) => mediaRuleOf(providerKind(deps.catalog, u.provider))), resolved.model.limits.max_image_tokens) : NO_MEDIA;
  const estimate = reservationEstimate(input.bodyBytes + media.beyondBytes, maxTokens, promptPriceBound(prices), prices.output);
  return { resolved, parsed, upstream, route, estimate, prices, inputBytes: input.bodyBytes, media, maxTokens };
}



/** The kind of a provider entry of the catalog file (openai, anthropic, simulated), as its `providers` map names it. */
function providerKind(catalog: Catalog, provider: string): unknown {
  const entry = catalog.file.providers[provider];
  return typeof entry === 'object' && entry !== null ? (entry as { kind?: unknown }).kind : undefined;
}

/**
 * The prompt as the gateway counts it when the provider has not stated its count (docs/money.md,
 * "A cut stream"): an OpenAI-wire upstream's messages by the profile's tokenizer (text only),
 * else ceil(UTF-8 bytes of their JSON, less the characters of their inline images and PDFs, / 4);
 * an Anthropic upstream states its count before any output: should it not, the request body's
 * bytes, less those characters, / 4. The inline parts are then counted as their provider bills
 * them (./inline-media.ts, mediaChargedTokens), not by the bytes that carry them.
 */
export async function countedPrompt(chat: PreparedChat): Promise<number> {
  const { upstream, media } = chat;
  const byBytes = (bytes: number) => Math.ceil((bytes - media.chars) / 4);
  const tokenizer = chat.resolved.profile.tokenizer;
  let text: number;
  if (upstream.wire !== 'openai-chat') text = byBytes(chat.inputBytes);
  // Off the event loop (providers/tokenizer-thread.ts): a count can take the tokenizer half a second.
  else if (tokenizer) text = await countChatPromptOffThread(tokenizer, upstream.call.messages);
  else text = byBytes(Buffer.byteLength(JSON.stringify(upstream.call.messages), 'utf8'));
  return text + media.charged;
}
