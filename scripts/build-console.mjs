// Bundles the web console (web/console/, Preact and uPlot) into dist/services/gateway/console/
// (part of the gateway's build output, shipped with it): assets/ holds the
// script and the style sheet under content-hashed names (served as immutable), index.html names
// them (and .br and .gz beside each asset). The gateway serves both at /console (services/gateway/routes/console-ui.ts).
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { basename, join } from 'node:path';
import { createHash } from 'node:crypto';

export async function buildConsole({ source = 'web/console', out = 'dist/services/gateway/console' } = {}) {
  rmSync(out, { recursive: true, force: true });
  const assets = join(out, 'assets');
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: [join(source, 'main.tsx')],
    outdir: assets,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const js = outputs.find((name) => name.endsWith('.js'));
  const css = outputs.find((name) => name.endsWith('.css'));
  if (!js || !css) throw new Error(`the console build made no script or no style sheet: ${outputs.join(', ')}`);
  // The icon, named by its content's hash like the bundles.
  const icon = readFileSync(join(source, 'favicon.svg'));
  const iconName = `favicon-${createHash('sha256').update(icon).digest('hex').slice(0, 8).toUpperCase()}.svg`;
  writeFileSync(join(assets, iconName), icon);
  const html = readFileSync(join(source, 'index.html'), 'utf8').replace('{{js}}', js).replace('{{css}}', css).replace('{{icon}}', iconName);
  writeFileSync(join(out, 'index.html'), html);
  // Compressed once here, served by Accept-Encoding: what a browser transfers.
  for (const name of [js, css]) {
    const raw = readFileSync(join(assets, name));
    writeFileSync(join(assets, `${name}.br`), brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    writeFileSync(join(assets, `${name}.gz`), gzipSync(raw, { level: 9 }));
  }
  return { js, css, icon: iconName };
}
