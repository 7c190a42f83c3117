// A test catalog: the default models plus models served over real HTTP by the local upstream
// (OpenAI adapter and Anthropic adapter, one wire each), a model that is not eligible (ready
// without a price), and models whose profile offers the gated capabilities (with and without
// their prices).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes';

const CAPABILITY_TAGS = ['agent_run', 'signing', 'evidence', 'media'];

export interface TestCatalogOptions {
  /** Model ids marked withdrawn (kept in the file, gone from the catalog and the routes). */
  withdrawn?: string[];
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
  base.providers['local-openai'] = { kind: 'openai', baseUrl: upstreamUrl };
  base.providers['local-anthropic'] = { kind: 'anthropic', baseUrl: upstreamUrl };
  base.providers['local-openai-slow'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'delay=400' } };
  base.providers['local-openai-hang'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'hang' } };
  for (const model of base.models) if (options.withdrawn?.includes(model.id)) model.withdrawn = true;
  writeFileSync(path, JSON.stringify(base, null, 2));
  return path;
}
