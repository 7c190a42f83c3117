// A test catalog: the default models plus models served over real HTTP by the local upstream
// (OpenAI adapter and Anthropic adapter, one wire each; an embeddings model on the OpenAI
// adapter), models that are not eligible (ready without a price; an embeddings price not
// ready), and models whose profile offers the gated capabilities (with and without their prices).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes';

const CAPABILITY_TAGS = ['agent_run', 'signing', 'evidence', 'media'];
/** A model priced per prompt-cache unit (nano-USD per token). */
export const CACHE_PRICES = { TEXT_INPUT: 1000, TEXT_INPUT_CACHE_READ: 100, TEXT_INPUT_CACHE_WRITE: 1250, TEXT_INPUT_CACHE_WRITE_1H: 2000, TEXT_OUTPUT: 4000 };

export interface TestCatalogOptions {
  /** Model ids marked withdrawn (kept in the file, gone from the catalog and the routes). */
  withdrawn?: string[];
}

/** A profile without its one provider, to be given a `providers` list. */
function routedProfile(profile: Record<string, unknown>): Record<string, unknown> {
  const { provider: _provider, upstream_model: _model, ...rest } = profile;
  return rest;
}

export function writeTestCatalog(path: string, upstreamUrl: string, options: TestCatalogOptions = {}): string {
  const base = JSON.parse(readFileSync(join(ROOT, 'catalog/default-catalog.json'), 'utf8'));
  const chat = base.models[0];
  const image = base.models.find((m: { id: string }) => m.id === 'sim-image');
  const imageProfile = (profileId: string, provider: string) => [{ ...image.profiles[0], profile_id: profileId, provider, upstream_model: 'up-image' }];
  base.models.push(
    { ...chat, id: 'upstream-chat', profiles: [{ ...chat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e01', provider: 'local-openai', upstream_model: 'up-model' }] },
    { ...chat, id: 'unpriced-chat', profiles: [{ ...chat.profiles[0], profile_id: '8b1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e01' }], prices: {} },
    // Only an Anthropic-wire profile: OpenAI-wire requests are translated when exact.
    { ...chat, id: 'upstream-anthropic-chat', profiles: [{ ...chat.profiles[1], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e02', provider: 'local-anthropic', upstream_model: 'up-claude' }] },
    { ...chat, id: 'capable-chat', profiles: [{ ...chat.profiles[0], profile_id: 'ad1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e01', capabilities: [...chat.profiles[0].capabilities, ...CAPABILITY_TAGS] }],
      pricing_status: { ...chat.pricing_status, AGENT_RUN: 'ready', SIGNATURE: 'ready', EVIDENCE: 'ready', MEDIA: 'ready' },
      prices: { ...chat.prices, AGENT_RUN: 1000, SIGNATURE: 10, EVIDENCE: 10, MEDIA: 10 } },
    // Upstreams that report prompt-cache counts (test/support/upstream.ts): OpenAI 40 cached
    // tokens (and 2 of the output as reasoning); Anthropic 100 read, 30 written for 5 minutes, 20 for an hour. Priced per unit, and
    // the same Anthropic model without cache prices.
    { ...chat, id: 'cached-chat', profiles: [{ ...chat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e03', provider: 'local-openai-cached', upstream_model: 'up-model' }], prices: CACHE_PRICES },
    { ...chat, id: 'cached-anthropic-chat', profiles: [{ ...chat.profiles[1], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e04', provider: 'local-anthropic-cached', upstream_model: 'up-claude' }], prices: CACHE_PRICES },
    { ...chat, id: 'cache-unpriced-chat', profiles: [{ ...chat.profiles[1], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e05', provider: 'local-anthropic-cached', upstream_model: 'up-claude' }] },
    // Cut streams (docs/money.md, "A cut stream"): an upstream counting the prompt as OpenAI does
    // (o200k_base, 5 of it read from the cache), whole and cut after 3 events; the upstream
    // counting bytes, cut; the caching Anthropic upstream, cut after 5 events (2 of them output).
    { ...chat, id: 'tokenized-chat', profiles: [{ ...chat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e06', provider: 'local-openai-tokenized', upstream_model: 'up-model', tokenizer: 'o200k_base' }], prices: CACHE_PRICES },
    { ...chat, id: 'tokenized-cut-chat', profiles: [{ ...chat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e07', provider: 'local-openai-tokenized-cut', upstream_model: 'up-model', tokenizer: 'o200k_base' }], prices: CACHE_PRICES },
    // Upstreams that state a prompt count no call can have (docs/providers.md, "Usage an upstream states").
    { ...chat, id: 'overstating-chat', profiles: [{ ...chat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e13', provider: 'local-openai-overstating', upstream_model: 'up-model' }] },
    { ...chat, id: 'misreporting-chat', profiles: [{ ...chat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e11', provider: 'local-openai-misreporting', upstream_model: 'up-model' }] },
    { ...chat, id: 'misreporting-anthropic-chat', profiles: [{ ...chat.profiles[1], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e12', provider: 'local-anthropic-misreporting', upstream_model: 'up-claude' }] },
    // The upstream never answering: a call that is still waiting when its client leaves.
    { ...chat, id: 'hanging-upstream-chat', profiles: [{ ...chat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e14', provider: 'local-openai-hang', upstream_model: 'up-model' }] },
    { ...chat, id: 'upstream-cut-chat', profiles: [{ ...chat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e08', provider: 'local-openai-cut', upstream_model: 'up-model' }] },
    { ...chat, id: 'cached-anthropic-cut-chat', profiles: [{ ...chat.profiles[1], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e09', provider: 'local-anthropic-cached-cut', upstream_model: 'up-claude' }], prices: CACHE_PRICES },
    // Two upstreams, the first (nearly all the traffic) answering 503: every call falls back to the second.
    { ...chat, id: 'routed-chat', profiles: [{ ...routedProfile(chat.profiles[0]), profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e10', upstream_model: 'up-model', providers: [{ provider: 'local-openai-503', weight: 1000, upstream_model: 'up-model-a' }, { provider: 'local-openai', weight: 1 }] }] },
    // Routed profiles whose first pick breaks after output (no fallback then), and whose every upstream fails.
    { ...chat, id: 'routed-cut-chat', profiles: [{ ...routedProfile(chat.profiles[0]), profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e15', upstream_model: 'up-model', providers: [{ provider: 'local-openai-cut', weight: 1000 }, { provider: 'local-openai', weight: 1 }] }] },
    { ...chat, id: 'routed-down-chat', profiles: [{ ...routedProfile(chat.profiles[0]), profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e16', upstream_model: 'up-model', providers: [{ provider: 'local-openai-refused' }, { provider: 'local-openai-502' }] }] },
    { ...chat, id: 'capable-unpriced-chat', profiles: [{ ...chat.profiles[0], profile_id: 'ad1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e02', capabilities: [...chat.profiles[0].capabilities, ...CAPABILITY_TAGS] }] },
  );
  base.models.push(
    { ...image, id: 'upstream-image', profiles: imageProfile('9c1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e21', 'local-openai') },
    // The same upstream, answering 400 ms late: concurrent retries overlap the one call.
    { ...image, id: 'slow-upstream-image', profiles: imageProfile('9c1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e22', 'local-openai-slow') },
    // The same upstream, never answering: the task stays unresolved until its deadline.
    { ...image, id: 'hanging-upstream-image', profiles: imageProfile('9c1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e23', 'local-openai-hang') },
    { ...image, id: 'unpriced-image', profiles: imageProfile('9c1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e24', 'sim'), prices: {} },
  );
  const embed = base.models.find((m: { id: string }) => m.id === 'sim-embed');
  base.models.push(
    // sim-embed served over real HTTP by the local upstream's /v1/embeddings (OpenAI adapter).
    { ...embed, id: 'upstream-embed', profiles: [{ ...embed.profiles[0], profile_id: '9c1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e31', provider: 'local-openai', upstream_model: 'up-embed' }] },
    // Priced, but its TEXT_INPUT price is not ready: not eligible.
    { ...embed, id: 'unpriced-embed', profiles: [{ ...embed.profiles[0], profile_id: '9c1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e32' }], pricing_status: { ...embed.pricing_status, TEXT_INPUT: 'pending' } },
  );
  base.providers['local-openai'] = { kind: 'openai', baseUrl: upstreamUrl };
  base.providers['local-anthropic'] = { kind: 'anthropic', baseUrl: upstreamUrl };
  base.providers['local-openai-cached'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'cache-read=40,reasoning=2' } };
  base.providers['local-anthropic-cached'] = { kind: 'anthropic', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'cache-read=100,cache-write=30,cache-write-1h=20' } };
  base.providers['local-openai-tokenized'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'tokenizer=o200k_base,cache-read=5' } };
  base.providers['local-openai-tokenized-cut'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'tokenizer=o200k_base,cache-read=5,break-after=3' } };
  base.providers['local-openai-overstating'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'completion-tokens=1000' } };
  base.providers['local-openai-misreporting'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'prompt-tokens=-5' } };
  base.providers['local-anthropic-misreporting'] = { kind: 'anthropic', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'prompt-tokens=1e15' } };
  base.providers['local-openai-cut'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'break-after=3' } };
  base.providers['local-anthropic-cached-cut'] = { kind: 'anthropic', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'cache-read=100,cache-write=30,cache-write-1h=20,break-after=5' } };
  base.providers['local-openai-503'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'status=503' } };
  base.providers['local-openai-refused'] = { kind: 'openai', baseUrl: 'http://127.0.0.1:1/v1' };
  base.providers['local-openai-502'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'status=502' } };
  base.providers['local-openai-slow'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'delay=400' } };
  base.providers['local-openai-hang'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'hang' } };
  for (const model of base.models) if (options.withdrawn?.includes(model.id)) model.withdrawn = true;
  writeFileSync(path, JSON.stringify(base, null, 2));
  return path;
}
