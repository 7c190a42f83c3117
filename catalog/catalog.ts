// The loaded catalog: lookups by model or profile id, pricing eligibility, and the public view.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GatewayError } from '../lib/errors';
import { catalogFileSchema, PRICED_OPERATIONS, type CatalogFile, type CatalogModel, type CatalogProfile, type PricedOperation, type PriceEntry, type WireFormat } from './schema';

export type { CatalogModel, CatalogProfile } from './schema';

export class CatalogFileError extends Error {}

export const CHAT_WIRES = ['openai-chat', 'anthropic-messages'] as const satisfies readonly WireFormat[];
export type ChatWire = (typeof CHAT_WIRES)[number];

export function otherChatWire(wire: ChatWire): ChatWire {
  return wire === 'openai-chat' ? 'anthropic-messages' : 'openai-chat';
}

export interface ResolvedProfile {
  model: CatalogModel;
  profile: CatalogProfile;
}

/** The entry of a model's price schedule in force at `at` (ms since the epoch); undefined: its undated prices. */
export function scheduleEntryAt(model: CatalogModel, at: number): PriceEntry | undefined {
  let found: PriceEntry | undefined;
  for (const entry of model.price_schedule) {
    if (Date.parse(entry.effective_from) > at) break;
    found = entry;
  }
  return found;
}

/**
 * The model as priced at `at`: `prices` and `pricing_status` are those in force then, so every
 * reader of a resolved model (eligibility, a chat's prices, an image's price) sees one price.
 * Applied twice with the same `at`, it gives the same prices.
 */
export function pricedAt(model: CatalogModel, at: number): CatalogModel {
  const entry = scheduleEntryAt(model, at);
  return entry ? { ...model, prices: entry.prices, pricing_status: entry.pricing_status ?? model.pricing_status } : model;
}

export interface CatalogOptions {
  /** The clock that says which dated prices are in force (ms since the epoch). */
  now?: () => number;
  /** What identifies the file's content in logs and /readyz (loadCatalog: a hash of the bytes). */
  version?: string;
}

/** One loaded file and its indexes: replaced whole by a reload, never changed in place. */
interface Snapshot {
  file: CatalogFile;
  byModel: Map<string, CatalogModel>;
  byProfile: Map<string, ResolvedProfile>;
  version: string;
  loadedAt: Date;
}

function indexed(file: CatalogFile, version: string): Snapshot {
  const byModel = new Map<string, CatalogModel>();
  const byProfile = new Map<string, ResolvedProfile>();
  for (const model of file.models) {
    if (byModel.has(model.id)) throw new CatalogFileError(`models: duplicate model id "${model.id}"`);
    byModel.set(model.id, model);
    for (const profile of model.profiles) {
      if (byProfile.has(profile.profile_id)) throw new CatalogFileError(`models[${model.id}]: duplicate profile_id ${profile.profile_id}`);
      for (const { provider } of profile.upstreams) {
        if (!(provider in file.providers)) throw new CatalogFileError(`models[${model.id}]: profile ${profile.profile_id} names unknown provider "${provider}"`);
      }
      if (profile.tokenizer !== undefined && profile.wire_format !== 'openai-chat') {
        throw new CatalogFileError(`models[${model.id}]: profile ${profile.profile_id} names a tokenizer, which only openai-chat profiles use (an Anthropic upstream states its own count)`);
      }
      byProfile.set(profile.profile_id, { model, profile });
    }
  }
  return { file, byModel, byProfile, version, loadedAt: new Date() };
}

/**
 * The catalog in force. Every lookup reads one snapshot and prices the model at that moment;
 * `replace` swaps the snapshot in one assignment, so a request sees either the old file or the
 * new one, and what it resolved before keeps the prices it read (docs/money.md, "Dated prices").
 */
export class Catalog {
  private current: Snapshot;
  readonly now: () => number;

  constructor(file: CatalogFile, options: CatalogOptions = {}) {
    this.current = indexed(file, options.version ?? 'unversioned');
    this.now = options.now ?? Date.now;
  }

  get file(): CatalogFile {
    return this.current.file;
  }

  /** The loaded file's version and when it was loaded. */
  get loaded(): { version: string; loadedAt: Date } {
    return { version: this.current.version, loadedAt: this.current.loadedAt };
  }

  /** Puts another loaded catalog's file in force (a reload); lookups already made keep theirs. */
  replace(next: Catalog): void {
    this.current = next.current;
  }

  /** `{id}` of the routes: a model id (its first profile of the wanted wire) or a profile id. */
  resolve(id: string, wire: WireFormat, options: { includeWithdrawn?: boolean } = {}): ResolvedProfile {
    const { byModel, byProfile } = this.current;
    const direct = byProfile.get(id);
    if (direct) {
      if (direct.model.withdrawn && !options.includeWithdrawn) throw new GatewayError('model_not_found', `no model ${id}`);
      if (direct.profile.wire_format !== wire) {
        throw new GatewayError('wire_format_mismatch', `profile ${id} speaks ${direct.profile.wire_format}; this route needs ${wire}`);
      }
      return { model: pricedAt(direct.model, this.now()), profile: direct.profile };
    }
    const model = byModel.get(id);
    if (!model || (model.withdrawn && !options.includeWithdrawn)) throw new GatewayError('model_not_found', `no model ${id}`);
    const profile = model.profiles.find((p) => p.wire_format === wire);
    if (!profile) throw new GatewayError('wire_format_mismatch', `model ${id} has no ${wire} profile`);
    return { model: pricedAt(model, this.now()), profile };
  }

  /**
   * A chat route's `{id}`: a profile id must speak the route's wire; a model id takes its
   * profile of that wire, else its profile of the other chat wire, which serves the request
   * only where the translation is exact (the caller translates and refuses otherwise).
   */
  resolveChat(id: string, wire: ChatWire): ResolvedProfile {
    const { byModel, byProfile } = this.current;
    if (byProfile.has(id)) return this.resolve(id, wire);
    const model = byModel.get(id);
    const profile = model?.profiles.find((p) => p.wire_format === wire) ?? model?.profiles.find((p) => p.wire_format === otherChatWire(wire));
    if (!model || model.withdrawn) throw new GatewayError('model_not_found', `no model ${id}`);
    if (!profile) throw new GatewayError('wire_format_mismatch', `model ${id} has no chat profile`);
    return { model: pricedAt(model, this.now()), profile };
  }

  /** The models offered, each priced at `at` (default now). */
  models(at = this.now()): CatalogModel[] {
    return this.current.file.models.filter((m) => !m.withdrawn).map((m) => pricedAt(m, at));
  }
}

/** Eligibility of one priced operation: status ready with an explicit valid price; zero only when free. */
export function eligibility(model: CatalogModel, operation: PricedOperation): { eligible: true; price: number } | { eligible: false; reason: string } {
  const status = model.pricing_status[operation];
  if (status !== 'ready') return { eligible: false, reason: `${operation} pricing is ${status === undefined ? 'missing' : `"${status}"`}, not ready` };
  const price = model.prices[operation];
  if (price === undefined) return { eligible: false, reason: `${operation} is ready but has no explicit price` };
  if (price === 0 && !model.free_contract) return { eligible: false, reason: `${operation} has a zero price without the free contract` };
  return { eligible: true, price };
}

export function requireEligible(model: CatalogModel, operation: PricedOperation): number {
  const result = eligibility(model, operation);
  if (!result.eligible) throw new GatewayError('model_not_eligible', `model ${model.id} is not eligible: ${result.reason}`, { extra: { operation } });
  return result.price;
}

/** The operations a model's readiness is told for: every priced one, and TEXT_INPUT where it is an embeddings model's whole bill. */
export function reportedOperations(model: CatalogModel): PricedOperation[] {
  return model.profiles.some((p) => p.wire_format === 'openai-embeddings') ? ['TEXT_INPUT', ...PRICED_OPERATIONS] : [...PRICED_OPERATIONS];
}

/**
 * The public catalog entry at `at`: `prices` and `pricing_status` in force then, the date they
 * took force (null: the undated prices), and the whole schedule. Top-level capabilities describe
 * only the first profile.
 */
export function publicEntry(raw: CatalogModel, at: number) {
  const model = pricedAt(raw, at);
  const first = model.profiles[0];
  const pricing_status: Record<string, string> = {};
  for (const op of reportedOperations(model)) pricing_status[op] = eligibility(model, op).eligible ? 'ready' : (model.pricing_status[op] ?? 'unknown');
  return {
    id: model.id,
    object: 'model',
    display_name: model.display_name ?? model.id,
    capabilities_profile_id: first.profile_id,
    capabilities: first.capabilities,
    pricing_status,
    prices: model.prices,
    prices_effective_from: scheduleEntryAt(model, at)?.effective_from ?? null,
    price_schedule: model.price_schedule,
    free_contract: model.free_contract,
    limits: model.limits,
    profiles: model.profiles.map((p) => ({
      profile_id: p.profile_id,
      wire_format: p.wire_format,
      compat_profile: p.compat_profile,
      capabilities: p.capabilities,
      chat_runtime_supported: p.chat_runtime_supported,
    })),
  };
}

/** The first 12 hex digits of the SHA-256 of the file's bytes: what a reload log line and /readyz name. */
export function catalogVersion(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

export function loadCatalog(path: string, options: Omit<CatalogOptions, 'version'> = {}): Catalog {
  let text: string;
  let raw: unknown;
  try {
    text = readFileSync(path, 'utf8');
    raw = JSON.parse(text);
  } catch (error) {
    throw new CatalogFileError(`catalog file ${path}: ${(error as Error).message}`);
  }
  const parsed = catalogFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n');
    throw new CatalogFileError(`catalog file ${path} is invalid:\n${issues}`);
  }
  return new Catalog(parsed.data, { ...options, version: catalogVersion(text) });
}
