// The loaded catalog: lookups by model or profile id, pricing eligibility, and the public view.

import { readFileSync } from 'node:fs';
import { GatewayError } from '../lib/errors';
import { catalogFileSchema, PRICED_OPERATIONS, type CatalogFile, type CatalogModel, type CatalogProfile, type PricedOperation, type WireFormat } from './schema';

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

export class Catalog {
  private readonly byModel = new Map<string, CatalogModel>();
  private readonly byProfile = new Map<string, ResolvedProfile>();

  constructor(readonly file: CatalogFile) {
    for (const model of file.models) {
      if (this.byModel.has(model.id)) throw new CatalogFileError(`models: duplicate model id "${model.id}"`);
      this.byModel.set(model.id, model);
      for (const profile of model.profiles) {
        if (this.byProfile.has(profile.profile_id)) throw new CatalogFileError(`models[${model.id}]: duplicate profile_id ${profile.profile_id}`);
        if (!(profile.provider in file.providers)) throw new CatalogFileError(`models[${model.id}]: profile ${profile.profile_id} names unknown provider "${profile.provider}"`);
        if (profile.tokenizer !== undefined && profile.wire_format !== 'openai-chat') {
          throw new CatalogFileError(`models[${model.id}]: profile ${profile.profile_id} names a tokenizer, which only openai-chat profiles use (an Anthropic upstream states its own count)`);
        }
        this.byProfile.set(profile.profile_id, { model, profile });
      }
    }
  }

  /** `{id}` of the routes: a model id (its first profile of the wanted wire) or a profile id. */
  resolve(id: string, wire: WireFormat, options: { includeWithdrawn?: boolean } = {}): ResolvedProfile {
    const direct = this.byProfile.get(id);
    if (direct) {
      if (direct.model.withdrawn && !options.includeWithdrawn) throw new GatewayError('model_not_found', `no model ${id}`);
      if (direct.profile.wire_format !== wire) {
        throw new GatewayError('wire_format_mismatch', `profile ${id} speaks ${direct.profile.wire_format}; this route needs ${wire}`);
      }
      return direct;
    }
    const model = this.byModel.get(id);
    if (!model || (model.withdrawn && !options.includeWithdrawn)) throw new GatewayError('model_not_found', `no model ${id}`);
    const profile = model.profiles.find((p) => p.wire_format === wire);
    if (!profile) throw new GatewayError('wire_format_mismatch', `model ${id} has no ${wire} profile`);
    return { model, profile };
  }

  /**
   * A chat route's `{id}`: a profile id must speak the route's wire; a model id takes its
   * profile of that wire, else its profile of the other chat wire, which serves the request
   * only where the translation is exact (the caller translates and refuses otherwise).
   */
  resolveChat(id: string, wire: ChatWire): ResolvedProfile {
    if (this.byProfile.has(id)) return this.resolve(id, wire);
    const model = this.byModel.get(id);
    const profile = model?.profiles.find((p) => p.wire_format === wire) ?? model?.profiles.find((p) => p.wire_format === otherChatWire(wire));
    if (!model || model.withdrawn) throw new GatewayError('model_not_found', `no model ${id}`);
    if (!profile) throw new GatewayError('wire_format_mismatch', `model ${id} has no chat profile`);
    return { model, profile };
  }

  models(): CatalogModel[] {
    return this.file.models.filter((m) => !m.withdrawn);
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

/** The public catalog entry. Top-level capabilities describe only the first profile. */
export function publicEntry(model: CatalogModel) {
  const first = model.profiles[0];
  const pricing_status: Record<string, string> = {};
  for (const op of PRICED_OPERATIONS) pricing_status[op] = eligibility(model, op).eligible ? 'ready' : (model.pricing_status[op] ?? 'unknown');
  return {
    id: model.id,
    object: 'model',
    display_name: model.display_name ?? model.id,
    capabilities_profile_id: first.profile_id,
    capabilities: first.capabilities,
    pricing_status,
    prices: model.prices,
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

export function loadCatalog(path: string): Catalog {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new CatalogFileError(`catalog file ${path}: ${(error as Error).message}`);
  }
  const parsed = catalogFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n');
    throw new CatalogFileError(`catalog file ${path} is invalid:\n${issues}`);
  }
  return new Catalog(parsed.data);
}
