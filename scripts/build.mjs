// Transpiles every TypeScript source (tests excluded) to dist/ with esbuild, one file per file.
// Type checking is `npm run typecheck`. Dapr actor types are class names: esbuild keeps every
// name as written when it neither bundles nor minifies, so keepNames is off (its __name helper
// ran Object.defineProperty on every closure made per request, ≈1 % of the gateway's CPU).
import { build } from 'esbuild';
import { readdirSync, statSync, cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['lib', 'actors', 'services', 'providers', 'catalog', 'topology', 'cli', 'bench', 'test/support'];
const entryPoints = [];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.d.ts')) entryPoints.push(path);
  }
}
for (const root of roots) if (existsSync(root)) walk(root);

await build({
  entryPoints,
  outdir: 'dist',
  outbase: '.',
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  sourcemap: true,
  keepNames: false,
  logLevel: 'warning',
});
if (existsSync('catalog/default-catalog.json')) cpSync('catalog/default-catalog.json', 'dist/catalog/default-catalog.json');
// The test OTLP receiver loads its schema beside itself.
if (existsSync('test/support/otlp-trace.proto')) cpSync('test/support/otlp-trace.proto', 'dist/test/support/otlp-trace.proto');
// The web console, bundled for the browser (scripts/build-console.mjs).
await (await import('./build-console.mjs')).buildConsole();
