import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadCatalog, requireEligible } from '../../catalog/catalog';
import { registry } from '../../lib/metrics';
import { createProviders } from '../../providers/registry';
import { passes } from '../../test/support/eventually';
import { CatalogReloader, type ReloadOutcome } from './catalog-reload';

const defaultFile = JSON.parse(readFileSync(join(__dirname, '../../catalog/default-catalog.json'), 'utf8'));

/** The default catalog with sim-chat's output priced at `output`. */
function withOutput(output: number) {
  const file = structuredClone(defaultFile);
  file.models[0].prices.TEXT_OUTPUT = output;
  return file;
}

function setUp() {
  const path = join(mkdtempSync(join(tmpdir(), 'catalog-reload-')), 'catalog.json');
  writeFileSync(path, JSON.stringify(withOutput(400)));
  const catalog = loadCatalog(path);
  const lines: { level: number; msg: string; file?: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const reloader = new CatalogReloader({ catalog, path, providers: createProviders(catalog.file.providers), logger, debounceMs: 20 });
  const output = () => requireEligible(catalog.resolveChat('sim-chat', 'openai-chat').model, 'TEXT_OUTPUT');
  return { path, catalog, reloader, lines, output };
}

async function reloads(outcome: ReloadOutcome): Promise<number> {
  const metric = await registry.getSingleMetric('payg_catalog_reloads_total')!.get();
  return metric.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

describe('catalog reloads', () => {
  it('when the file holds other valid prices, then a reload puts them in force, logs the new version and counts it', async () => {
    const { path, catalog, reloader, lines, output } = setUp();
    const before = catalog.loaded.version;
    const applied = await reloads('applied');
    writeFileSync(path, JSON.stringify(withOutput(700)));
    expect(reloader.reload('signal')).toBe('applied');
    expect(output()).toBe(700);
    expect(catalog.loaded.version).not.toBe(before);
    expect(lines.at(-1)).toMatchObject({ msg: 'catalog reloaded', file: path, trigger: 'signal', version: catalog.loaded.version, previous: before });
    expect(await reloads('applied')).toBe(applied + 1);
    expect(reloader.reload('signal')).toBe('unchanged');
  });

  it.each([
    ['bad JSON', () => '{"models": [', /catalog file .*catalog\.json: .*JSON/],
    ['a schema failure', () => JSON.stringify({ ...withOutput(700), models: [{ ...withOutput(700).models[0], prices: { TEXT_OUTPUT: 'cheap' } }] }), /models\.0\.prices\.TEXT_OUTPUT/],
    ['an unknown provider', () => JSON.stringify({ ...withOutput(700), models: [{ ...withOutput(700).models[0], profiles: [{ ...defaultFile.models[0].profiles[0], provider: 'nowhere' }] }] }), /names unknown provider "nowhere"/],
    ['a changed providers map', () => JSON.stringify({ ...withOutput(700), providers: { sim: { kind: 'simulated' }, other: { kind: 'simulated' } } }), /providers map differs .* need a restart/],
  ])('when the file has %s, then the reload is refused with one error line naming the file and the old prices stay', async (_case, content, reason) => {
    const { path, catalog, reloader, lines, output } = setUp();
    const before = catalog.loaded.version;
    const refused = await reloads('refused');
    writeFileSync(path, content());
    expect(reloader.reload('signal')).toBe('refused');
    expect(output()).toBe(400);
    expect(catalog.loaded.version).toBe(before);
    const errors = lines.filter((l) => l.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: path, trigger: 'signal', version: before });
    expect(errors[0].msg).toMatch(/^catalog reload refused, the catalog in force stays/);
    expect(errors[0].msg).toMatch(reason);
    expect(await reloads('refused')).toBe(refused + 1);
  });

  it('when the file is written in place or replaced by a rename, then the watch reloads it once it has settled', async () => {
    const { path, reloader, output } = setUp();
    reloader.watch();
    try {
      writeFileSync(path, JSON.stringify(withOutput(500)));
      await passes(async () => expect(output()).toBe(500), 5_000);
      // An editor's save: a new file renamed over the old one (a watch on the file would miss it).
      writeFileSync(`${path}.tmp`, JSON.stringify(withOutput(600)));
      renameSync(`${path}.tmp`, path);
      await passes(async () => expect(output()).toBe(600), 5_000);
    } finally {
      reloader.close();
    }
  });
});
