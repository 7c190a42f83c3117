// POST /v1/embeddings, as a story: check the model, the body and its limits (./request.ts), hold
// the input's upper bound of prompt tokens at the model's TEXT_INPUT price, call the provider,
// settle for the prompt tokens it reports as one TEXT_INPUT line (never above the hold), or release
// when it failed or did not answer in time. The hold, its settle and the charged JSON answer are
// the chat's (../chat/held-call.ts): same pool, same limits, drain and deadline.

import { requireEligible, type ResolvedProfile } from '../../../catalog/catalog';
import { GatewayError } from '../../../lib/errors';
import { metrics } from '../../../lib/metrics';
import { startModelCall } from '../../../lib/tracing';
import type { EmbeddingsProvider, EmbeddingsResult, TokenUsage } from '../../../providers/port';
import type { UsageLine } from '../../../actors/funds-hold/FundsHoldInterface';
import { requireCapability } from '../capabilities/gates';
import { completeHeld, openHeldCall } from '../chat/held-call';
import { routingOf } from '../chat/provider-call';
import { checkBodySize, reservationEstimate } from '../chat/limits';
import type { ChatDeps, ChatInput } from '../chat/prepare';
import type { ChatAdapters } from '../chat/upstream';
import type { UseCaseAnswer } from '../http/answer';
import { inputTokenBound, parseEmbeddingsBody, type EmbeddingsRequest } from './request';
import type { TokenCounting } from '../limits/admission';

/** The adapters of one provider entry: the chat's, and the embeddings one where it has it. */
export type EmbeddingsAdapters = ChatAdapters & { embeddings?: EmbeddingsProvider };

export interface EmbeddingsDeps extends ChatDeps {
  providers: ReadonlyMap<string, EmbeddingsAdapters>;
}

/** One upstream an embeddings call may be served by (docs/providers.md, "Routing"). */
export interface EmbeddingsCandidate {
  provider: string;
  weight: number;
  upstream: { adapter: EmbeddingsProvider; upstreamModel: string };
}

export interface PreparedEmbeddings {
  resolved: ResolvedProfile;
  /** The profile's upstreams this deployment serves, in the file's order. */
  candidates: EmbeddingsCandidate[];
  request: EmbeddingsRequest;
  /** nano-USD per prompt token: the model's eligible TEXT_INPUT price. */
  price: number;
  /** The most prompt tokens the input can be (./request.ts). */
  tokenBound: number;
  estimate: number;
}

/** How tokenBound counts, as a 413 for an embeddings call bigger than a whole tokens_per_minute says it. */
export const EMBEDDINGS_TOKEN_COUNTING: TokenCounting = {
  how: 'its input at the most tokens it can be: a token for each UTF-8 byte of a text, a token array at its length',
  smaller: 'send less input',
};

/** Everything that can refuse the request, before anything is held. */
export function prepareEmbeddings(deps: EmbeddingsDeps, input: ChatInput): PreparedEmbeddings {
  const resolved = deps.catalog.resolve(input.modelId, 'openai-embeddings');
  for (const capability of input.capabilities) {
    requireCapability(capability, { model: resolved.model, profile: resolved.profile, scopes: input.caller.scopes, ...deps.capabilityGates });
  }
  const candidates = resolved.profile.upstreams.flatMap((u) => {
    const adapter = deps.providers.get(u.provider)?.embeddings;
    return adapter ? [{ provider: u.provider, weight: u.weight, upstream: { adapter, upstreamModel: u.upstream_model } }] : [];
  });
  if (candidates.length === 0) throw new GatewayError('model_not_eligible', `model ${resolved.model.id} has no configured provider for openai-embeddings`);
  // The body must fit every upstream it may be sent to.
  checkBodySize(input.bodyBytes, [deps.maxBodyBytes, ...candidates.map((c) => c.upstream.adapter.maxBodyBytes), resolved.model.limits.max_body_bytes ?? Infinity]);
  const request = parseEmbeddingsBody(input.body);
  const price = requireEligible(resolved.model, 'TEXT_INPUT');
  const tokenBound = inputTokenBound(request.input);
  return { resolved, candidates, request, price, tokenBound, estimate: reservationEstimate(tokenBound, 0, price, 0) };
}

/** The one line of an embeddings call: its prompt tokens at TEXT_INPUT. */
function lines(price: number, usage: TokenUsage): UsageLine[] {
  return [{ unit: 'TEXT_INPUT', quantity: usage.inputTokens, unitPrice: price }];
}

/** From the reservation on: the request has passed every check. */
export async function runEmbeddings(deps: EmbeddingsDeps, prepared: PreparedEmbeddings, input: ChatInput): Promise<UseCaseAnswer> {
  const { resolved, request, price } = prepared;
  const held = await openHeldCall(deps, input, {
    estimate: prepared.estimate,
    tokenBound: prepared.tokenBound,
    tokenCounting: EMBEDDINGS_TOKEN_COUNTING,
    rateStyle: 'openai',
    modelId: resolved.model.id,
    profileId: resolved.profile.profile_id,
    lines: (usage) => lines(price, usage),
    billed: (usage) => metrics.tokensBilled('TEXT_INPUT', usage.inputTokens),
    tokens: (usage) => usage.inputTokens,
  });
  return completeHeld(deps, held, {
    route: {
      routing: routingOf(deps),
      logger: deps.logger,
      key: resolved.profile.profile_id,
      candidates: prepared.candidates,
      span: (candidate) => startModelCall('embeddings', 'openai', candidate.upstream.upstreamModel, candidate.provider),
    },
    call: (upstream, signal) => upstream.adapter.embed({ ...request, upstreamModel: upstream.upstreamModel, directives: input.directives, signal }),
    usage: (result) => result.usage,
    body: (result) => answer(result, resolved.model.id),
  });
}

/** OpenAI's embeddings answer, naming the gateway's model id. */
function answer(result: EmbeddingsResult, modelId: string) {
  const promptTokens = result.usage.inputTokens;
  return {
    object: 'list',
    data: result.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model: modelId,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
