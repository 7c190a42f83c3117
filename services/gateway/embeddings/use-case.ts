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
import { checkBodySize, reservationEstimate } from '../chat/limits';
import type { ChatDeps, ChatInput } from '../chat/prepare';
import type { ChatAdapters } from '../chat/upstream';
import type { UseCaseAnswer } from '../http/answer';
import { inputTokenBound, parseEmbeddingsBody, type EmbeddingsRequest } from './request';

/** The adapters of one provider entry: the chat's, and the embeddings one where it has it. */
export type EmbeddingsAdapters = ChatAdapters & { embeddings?: EmbeddingsProvider };

export interface EmbeddingsDeps extends ChatDeps {
  providers: ReadonlyMap<string, EmbeddingsAdapters>;
}

export interface PreparedEmbeddings {
  resolved: ResolvedProfile;
  provider: EmbeddingsProvider;
  request: EmbeddingsRequest;
  /** nano-USD per prompt token: the model's eligible TEXT_INPUT price. */
  price: number;
  /** The most prompt tokens the input can be (./request.ts). */
  tokenBound: number;
  estimate: number;
}

/** Everything that can refuse the request, before anything is held. */
export function prepareEmbeddings(deps: EmbeddingsDeps, input: ChatInput): PreparedEmbeddings {
  const resolved = deps.catalog.resolve(input.modelId, 'openai-embeddings');
  for (const capability of input.capabilities) {
    requireCapability(capability, { model: resolved.model, profile: resolved.profile, scopes: input.caller.scopes, ...deps.capabilityGates });
  }
  const provider = deps.providers.get(resolved.profile.provider)?.embeddings;
  if (!provider) throw new GatewayError('model_not_eligible', `model ${resolved.model.id} has no configured provider for openai-embeddings`);
  checkBodySize(input.bodyBytes, [deps.maxBodyBytes, provider.maxBodyBytes, resolved.model.limits.max_body_bytes ?? Infinity]);
  const request = parseEmbeddingsBody(input.body);
  const price = requireEligible(resolved.model, 'TEXT_INPUT');
  const tokenBound = inputTokenBound(request.input);
  return { resolved, provider, request, price, tokenBound, estimate: reservationEstimate(tokenBound, 0, price, 0) };
}

/** The one line of an embeddings call: its prompt tokens at TEXT_INPUT. */
function lines(price: number, usage: TokenUsage): UsageLine[] {
  return [{ unit: 'TEXT_INPUT', quantity: usage.inputTokens, unitPrice: price }];
}

/** From the reservation on: the request has passed every check. */
export async function runEmbeddings(deps: EmbeddingsDeps, prepared: PreparedEmbeddings, input: ChatInput): Promise<UseCaseAnswer> {
  const { resolved, provider, request, price } = prepared;
  const held = await openHeldCall(deps, input, {
    estimate: prepared.estimate,
    tokenBound: prepared.tokenBound,
    rateStyle: 'openai',
    modelId: resolved.model.id,
    profileId: resolved.profile.profile_id,
    lines: (usage) => lines(price, usage),
    billed: (usage) => metrics.tokensBilled('TEXT_INPUT', usage.inputTokens),
  });
  return completeHeld(deps, held, {
    span: () => startModelCall('embeddings', 'openai', resolved.profile.upstream_model, resolved.profile.provider),
    call: (signal) => provider.embed({ ...request, upstreamModel: resolved.profile.upstream_model, directives: input.directives, signal }),
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
