import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from './openapi';

/** Every route path registered by the gateway's route modules (operator routes excluded). */
function registeredOpenPaths(): string[] {
  const dir = join(__dirname, 'routes');
  const paths = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/router\.(?:get|post|put|delete)\('([^']+)'/g)) {
      if (!match[1].startsWith('/admin/')) paths.add(match[1].replace(/:([A-Za-z]+)/g, '{$1}'));
    }
  }
  return [...paths].sort();
}

describe('OpenAPI document', () => {
  it('when the routes are registered, then every open route is described and nothing else', () => {
    expect(Object.keys(openApiDocument.paths).sort()).toEqual(registeredOpenPaths());
  });
  it('when read, then it is OpenAPI 3.1 and lists no prototype route', () => {
    expect(openApiDocument.openapi).toBe('3.1.0');
    for (const path of Object.keys(openApiDocument.paths)) expect(path.startsWith('/v1/sessions') || path === '/v1/workspaces').toBe(false);
  });
});
