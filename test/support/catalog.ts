// A test catalog: the default models plus a model served over real HTTP by the local upstream
// (OpenAI adapter) and a model that is not eligible (ready without a price).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes';

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
  base.providers['local-openai-slow'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'delay=400' } };
  base.providers['local-openai-hang'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'hang' } };
  for (const model of base.models) if (options.withdrawn?.includes(model.id)) model.withdrawn = true;
  writeFileSync(path, JSON.stringify(base, null, 2));
  return path;
}
