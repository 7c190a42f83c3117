import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog, CatalogFileError, eligibility, loadCatalog, publicEntry, requireEligible } from './catalog';
import type { CatalogModel } from './schema';

const defaultPath = join(__dirname, 'default-catalog.json');

function model(overrides: Partial<CatalogModel>): CatalogModel {
  const base = loadCatalog(defaultPath).file.models[0];
  return { ...base, ...overrides };
}

describe('catalog file', () => {
  it('when the default catalog loads, then sim-chat has an OpenAI and an Anthropic profile and sim-image is IMAGE-ready', () => {
    const catalog = loadCatalog(defaultPath);
    const chat = publicEntry(catalog.resolve('sim-chat', 'openai-chat').model, Date.now());
    expect(chat.profiles.map((p) => p.wire_format)).toEqual(['openai-chat', 'anthropic-messages']);
    expect(chat.capabilities_profile_id).toBe(chat.profiles[0].profile_id);
    expect(chat.pricing_status.TEXT_OUTPUT).toBe('ready');
    const image = catalog.models().find((m) => m.id === 'sim-image')!;
    expect(eligibility(image, 'IMAGE').eligible).toBe(true);
  });

  it('when the default catalog loads, then sim-embed has an embeddings profile and its public entry tells its TEXT_INPUT readiness', () => {
    const catalog = loadCatalog(defaultPath);
    const embed = catalog.resolve('sim-embed', 'openai-embeddings').model;
    expect(eligibility(embed, 'TEXT_INPUT')).toEqual({ eligible: true, price: 20 });
    expect(publicEntry(embed, Date.now()).pricing_status).toMatchObject({ TEXT_INPUT: 'ready', TEXT_OUTPUT: 'not_offered' });
    expect(publicEntry(catalog.resolve('sim-chat', 'openai-chat').model, Date.now()).pricing_status).not.toHaveProperty('TEXT_INPUT');
  });

  it('when the file is invalid, then loading fails with a message naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-'));
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ models: [{ id: 'x', profiles: [], pricing_status: {} }], providers: {} }));
    expect(() => loadCatalog(path)).toThrow(CatalogFileError);
    expect(() => loadCatalog(path)).toThrow(/models\.0\.profiles/);
    writeFileSync(path, '{not json');
    expect(() => loadCatalog(path)).toThrow(/catalog file/);
  });

  it('when a profile names an unknown provider, then the catalog is refused', () => {
    const file = loadCatalog(defaultPath).file;
    expect(() => new Catalog({ ...file, providers: {} })).toThrow(/unknown provider/);
  });
});

describe('a profile\'s tokenizer', () => {
  const withTokenizer = (index: number, tokenizer: string) => {
    const file = loadCatalog(defaultPath).file;
    const [chat, ...rest] = file.models;
    const profiles = chat.profiles.map((p, i) => (i === index ? { ...p, tokenizer } : p));
    return { ...file, models: [{ ...chat, profiles }, ...rest] } as never;
  };
  it('when an openai-chat profile names a known encoding, then it is kept', () => {
    expect(new Catalog(withTokenizer(0, 'o200k_base')).resolve('sim-chat', 'openai-chat').profile.tokenizer).toBe('o200k_base');
  });
  it('when an anthropic-messages profile names one, then the catalog is refused: Anthropic states its own count', () => {
    expect(() => new Catalog(withTokenizer(1, 'o200k_base'))).toThrow(/only openai-chat profiles/);
  });
  it('when the encoding is unknown, then the file is refused naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-'));
    const path = join(dir, 'tokenizer.json');
    writeFileSync(path, JSON.stringify(withTokenizer(0, 'p50k_base')));
    expect(() => loadCatalog(path)).toThrow(/models\.0\.profiles\.0\.tokenizer/);
  });
});

describe('pricing eligibility', () => {
  it('when the status is ready with an explicit price, then the operation is eligible', () => {
    expect(eligibility(model({ pricing_status: { TEXT_OUTPUT: 'ready' }, prices: { TEXT_OUTPUT: 5 } }), 'TEXT_OUTPUT')).toEqual({ eligible: true, price: 5 });
  });
  it('when the status is missing or unknown, then it is not ready', () => {
    expect(eligibility(model({ pricing_status: {}, prices: { TEXT_OUTPUT: 5 } }), 'TEXT_OUTPUT').eligible).toBe(false);
    expect(eligibility(model({ pricing_status: { TEXT_OUTPUT: 'READY!' }, prices: { TEXT_OUTPUT: 5 } }), 'TEXT_OUTPUT').eligible).toBe(false);
  });
  it('when ready but without a price, then it is not eligible', () => {
    expect(eligibility(model({ pricing_status: { IMAGE: 'ready' }, prices: {} }), 'IMAGE').eligible).toBe(false);
  });
  it('when the price is zero, then only the explicit free contract makes it eligible', () => {
    expect(eligibility(model({ pricing_status: { SECOND: 'ready' }, prices: { SECOND: 0 }, free_contract: false }), 'SECOND').eligible).toBe(false);
    expect(eligibility(model({ pricing_status: { SECOND: 'ready' }, prices: { SECOND: 0 }, free_contract: true }), 'SECOND').eligible).toBe(true);
  });
  it('when a profile id of the wrong wire format is used, then it is refused; unknown ids are not found', () => {
    const catalog = loadCatalog(defaultPath);
    const anthropic = catalog.file.models[0].profiles[1].profile_id;
    expect(() => catalog.resolve(anthropic, 'openai-chat')).toThrow(expect.objectContaining({ code: 'wire_format_mismatch' }));
    expect(catalog.resolve(anthropic, 'anthropic-messages').profile.profile_id).toBe(anthropic);
    expect(() => catalog.resolve('nope', 'openai-chat')).toThrow(expect.objectContaining({ code: 'model_not_found' }));
  });
});

describe('dated prices', () => {
  const file = (schedule: unknown[], extra: Record<string, unknown> = {}) => {
    const base = JSON.parse(readFileSync(defaultPath, 'utf8'));
    Object.assign(base.models[0], { price_schedule: schedule }, extra);
    return base;
  };
  const write = (content: unknown) => {
    const path = join(mkdtempSync(join(tmpdir(), 'catalog-')), 'catalog.json');
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  const MAY = '2026-05-01T00:00:00Z';
  const JUNE = '2026-06-01T00:00:00Z';
  const schedule = [
    { effective_from: MAY, prices: { TEXT_INPUT: 200, TEXT_OUTPUT: 800 } },
    { effective_from: JUNE, prices: { TEXT_INPUT: 300 }, pricing_status: { TEXT_OUTPUT: 'suspended' } },
  ];

  it('when an entry\'s date has come, then its prices are in force until the next one\'s; before the first, the undated prices are', () => {
    let now = Date.parse(MAY) - 1;
    const catalog = loadCatalog(write(file(schedule)), { now: () => now });
    const output = () => requireEligible(catalog.resolveChat('sim-chat', 'openai-chat').model, 'TEXT_OUTPUT');
    expect(output()).toBe(400);
    now = Date.parse(MAY);
    expect(output()).toBe(800);
    expect(catalog.resolve('sim-chat', 'anthropic-messages').model.prices).toEqual({ TEXT_INPUT: 200, TEXT_OUTPUT: 800 });
    // The June entry replaces the prices whole and its status makes TEXT_OUTPUT not ready.
    now = Date.parse(JUNE) + 1;
    const june = catalog.models().find((m) => m.id === 'sim-chat')!;
    expect(june.prices).toEqual({ TEXT_INPUT: 300 });
    expect(eligibility(june, 'TEXT_OUTPUT')).toEqual({ eligible: false, reason: 'TEXT_OUTPUT pricing is "suspended", not ready' });
  });

  it('when a model resolved under one price and the date passes, then the resolved model keeps the price it read', () => {
    let now = Date.parse(MAY) - 1;
    const catalog = loadCatalog(write(file(schedule)), { now: () => now });
    const frozen = catalog.resolveChat('sim-chat', 'openai-chat').model;
    now = Date.parse(MAY);
    expect(frozen.prices.TEXT_OUTPUT).toBe(400);
    expect(catalog.resolveChat('sim-chat', 'openai-chat').model.prices.TEXT_OUTPUT).toBe(800);
  });

  it('when the public entry is built, then it shows the prices in force, the date they took force and the whole schedule', () => {
    const catalog = loadCatalog(write(file(schedule)));
    const entry = (at: number) => publicEntry(catalog.file.models[0], at);
    expect(entry(Date.parse(MAY) - 1)).toMatchObject({ prices: { TEXT_INPUT: 100, TEXT_OUTPUT: 400 }, prices_effective_from: null, price_schedule: schedule });
    expect(entry(Date.parse(MAY) + 5)).toMatchObject({ prices: { TEXT_INPUT: 200, TEXT_OUTPUT: 800 }, prices_effective_from: MAY, pricing_status: { TEXT_OUTPUT: 'ready' } });
    expect(entry(Date.parse(JUNE))).toMatchObject({ prices: { TEXT_INPUT: 300 }, prices_effective_from: JUNE, pricing_status: { TEXT_OUTPUT: 'suspended' } });
  });

  it('when the dates are out of order, repeated, not UTC or the prices break the unit rules, then the file is refused naming the entry', () => {
    expect(() => loadCatalog(write(file([schedule[1], schedule[0]])))).toThrow(/price_schedule\.1\.effective_from: must be later than entry 0's/);
    expect(() => loadCatalog(write(file([schedule[0], { ...schedule[1], effective_from: MAY }])))).toThrow(/price_schedule\.1\.effective_from: must be later/);
    expect(() => loadCatalog(write(file([{ ...schedule[0], effective_from: '2026-05-01T02:00:00+02:00' }])))).toThrow(/price_schedule\.0\.effective_from/);
    expect(() => loadCatalog(write(file([{ ...schedule[0], effective_from: '2026-05-01' }])))).toThrow(/price_schedule\.0\.effective_from/);
    expect(() => loadCatalog(write(file([{ effective_from: MAY, prices: { TEXT_OUTPUT: -1 } }])))).toThrow(/price_schedule\.0\.prices\.TEXT_OUTPUT/);
    expect(() => loadCatalog(write(file([{ effective_from: MAY, prices: { TOKENS: 1 } }])))).toThrow(/price_schedule\.0\.prices/);
  });

  it('when a dated price is zero, then only the free contract makes it eligible', () => {
    const now = () => Date.parse(MAY);
    const zero = [{ effective_from: MAY, prices: { TEXT_OUTPUT: 0 } }];
    const paid = loadCatalog(write(file(zero)), { now });
    expect(() => requireEligible(paid.resolveChat('sim-chat', 'openai-chat').model, 'TEXT_OUTPUT')).toThrow(/zero price without the free contract/);
    const free = loadCatalog(write(file(zero, { free_contract: true })), { now });
    expect(requireEligible(free.resolveChat('sim-chat', 'openai-chat').model, 'TEXT_OUTPUT')).toBe(0);
  });

  it('when another catalog replaces the one in force, then new lookups see it and the version changes', () => {
    const path = write(file([]));
    const catalog = loadCatalog(path);
    const before = catalog.loaded.version;
    const resolvedBefore = catalog.resolveChat('sim-chat', 'openai-chat').model;
    catalog.replace(loadCatalog(write(file([], { prices: { TEXT_OUTPUT: 999 } }))));
    expect(catalog.loaded.version).not.toBe(before);
    expect(catalog.resolveChat('sim-chat', 'openai-chat').model.prices).toEqual({ TEXT_OUTPUT: 999 });
    expect(resolvedBefore.prices.TEXT_OUTPUT).toBe(400);
    expect(loadCatalog(path).loaded.version).toBe(before);
  });
});

describe('a profile\'s upstreams', () => {
  const withProfile = (change: (profile: Record<string, unknown>) => Record<string, unknown>) => {
    const raw = JSON.parse(readFileSync(defaultPath, 'utf8'));
    raw.models[0].profiles[0] = change(raw.models[0].profiles[0]);
    raw.providers.second = { kind: 'simulated' };
    const dir = mkdtempSync(join(tmpdir(), 'catalog-'));
    const path = join(dir, 'routed.json');
    writeFileSync(path, JSON.stringify(raw));
    return path;
  };
  const listed = (providers: unknown[]) => withProfile(({ provider: _p, ...profile }) => ({ ...profile, providers }));

  it('when a profile names one provider, then it is its one upstream, weight 1', () => {
    expect(loadCatalog(defaultPath).resolve('sim-chat', 'openai-chat').profile.upstreams).toEqual([{ provider: 'sim', weight: 1, upstream_model: 'sim-chat-1' }]);
  });

  it('when it lists providers, then each keeps its weight and its own model name, else the profile\'s', () => {
    const catalog = loadCatalog(listed([{ provider: 'sim', weight: 3 }, { provider: 'second', upstream_model: 'other-model' }]));
    expect(catalog.resolve('sim-chat', 'openai-chat').profile.upstreams).toEqual([
      { provider: 'sim', weight: 3, upstream_model: 'sim-chat-1' },
      { provider: 'second', weight: 1, upstream_model: 'other-model' },
    ]);
  });

  it.each([
    ['both provider and providers', withProfile((p) => ({ ...p, providers: [{ provider: 'sim' }] })), /models\.0\.profiles\.0\.provider: name the upstreams either/],
    ['neither', withProfile(({ provider: _p, ...p }) => p), /models\.0\.profiles\.0\.provider: name the upstreams either/],
    ['a provider listed twice', listed([{ provider: 'sim' }, { provider: 'sim' }]), /providers\.1\.provider: provider "sim" is listed twice/],
    ['a weight of zero', listed([{ provider: 'sim', weight: 0 }]), /providers\.0\.weight/],
    ['an empty list', listed([]), /providers/],
    ['an unknown provider', listed([{ provider: 'nowhere' }]), /names unknown provider "nowhere"/],
    // A routed call's usage rows name their upstream in at most 128 characters: a longer name would have every settle refused.
    ['a provider name longer than a route record holds', listed([{ provider: 'sim' }, { provider: 'p'.repeat(129) }]), /providers\.1\.provider: a provider name is at most 128 characters/],
  ])('when a profile has %s, then the file is refused naming the field', (_case, path, message) => {
    expect(() => loadCatalog(path)).toThrow(message);
  });

  it('when an entry has no model name and the profile none either, then the file is refused', () => {
    const path = withProfile(({ provider: _p, upstream_model: _m, ...p }) => ({ ...p, providers: [{ provider: 'sim' }] }));
    expect(() => loadCatalog(path)).toThrow(/providers\.0\.upstream_model: needs an upstream_model/);
  });
});
