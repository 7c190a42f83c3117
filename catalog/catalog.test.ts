import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog, CatalogFileError, eligibility, loadCatalog, publicEntry } from './catalog';
import type { CatalogModel } from './schema';

const defaultPath = join(__dirname, 'default-catalog.json');

function model(overrides: Partial<CatalogModel>): CatalogModel {
  const base = loadCatalog(defaultPath).file.models[0];
  return { ...base, ...overrides };
}

describe('catalog file', () => {
  it('when the default catalog loads, then sim-chat has an OpenAI and an Anthropic profile and sim-image is IMAGE-ready', () => {
    const catalog = loadCatalog(defaultPath);
    const chat = publicEntry(catalog.resolve('sim-chat', 'openai-chat').model);
    expect(chat.profiles.map((p) => p.wire_format)).toEqual(['openai-chat', 'anthropic-messages']);
    expect(chat.capabilities_profile_id).toBe(chat.profiles[0].profile_id);
    expect(chat.pricing_status.TEXT_OUTPUT).toBe('ready');
    const image = catalog.models().find((m) => m.id === 'sim-image')!;
    expect(eligibility(image, 'IMAGE').eligible).toBe(true);
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
