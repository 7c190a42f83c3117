// A test catalog: the default models plus a model served over real HTTP by the local upstream
// (OpenAI adapter) and a model that is not eligible (ready without a price).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes';

export function writeTestCatalog(path: string, upstreamUrl: string): string {
  const base = JSON.parse(readFileSync(join(ROOT, 'catalog/default-catalog.json'), 'utf8'));
  const chat = base.models[0];
  base.models.push(
    { ...chat, id: 'upstream-chat', profiles: [{ ...chat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e01', provider: 'local-openai', upstream_model: 'up-model' }] },
    { ...chat, id: 'unpriced-chat', profiles: [{ ...chat.profiles[0], profile_id: '8b1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e01' }], prices: {} },
  );
  base.providers['local-openai'] = { kind: 'openai', baseUrl: upstreamUrl };
  writeFileSync(path, JSON.stringify(base, null, 2));
  return path;
}
