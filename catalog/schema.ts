// The catalog configuration file: models, their profiles and prices. Validated at start-up.

import { z } from 'zod';
import { CANONICAL_UUID } from '../lib/uuid';
import { MAX_ROUTE_ATTEMPTS, MAX_UPSTREAM_LENGTH } from '../lib/route-record';
import { TOKENIZERS } from '../providers/tokenizer';

export const PRICED_OPERATIONS = ['TEXT_OUTPUT', 'IMAGE', 'SECOND'] as const;
/** The operations behind the capability gates' price condition (docs/capabilities.md). */
export const CAPABILITY_OPERATIONS = ['AGENT_RUN', 'SIGNATURE', 'EVIDENCE', 'MEDIA'] as const;
/**
 * TEXT_INPUT is priced as an operation of its own where it is the whole bill (embeddings); a chat
 * bills it beside TEXT_OUTPUT, whose status gates the chat.
 */
export type PricedOperation = (typeof PRICED_OPERATIONS)[number] | (typeof CAPABILITY_OPERATIONS)[number] | 'TEXT_INPUT';

export const WIRE_FORMATS = ['openai-chat', 'anthropic-messages', 'openai-images', 'openai-embeddings'] as const;
export type WireFormat = (typeof WIRE_FORMATS)[number];

const uuid = z.string().regex(CANONICAL_UUID, 'must be a lowercase UUID');
const amount = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const tokens = z.number().int().positive().max(1_048_576);
/** A provider entry's name: what a routed call's usage rows record as its upstream, within that record's bound. */
const providerName = z.string().min(1).max(MAX_UPSTREAM_LENGTH, `a provider name is at most ${MAX_UPSTREAM_LENGTH} characters`);

/** One upstream of a profile: a provider entry, its share of the traffic, its own model name where it differs. */
const upstreamEntrySchema = z.object({
  provider: providerName,
  weight: z.number().int().min(1).max(1000).default(1),
  upstream_model: z.string().min(1).optional(),
}).strict();

/**
 * A profile names its upstreams as one `provider` (with `upstream_model`) or as a `providers`
 * list (docs/providers.md, "Routing"), never both; either way the loaded profile has `upstreams`,
 * each with its provider, weight and upstream model, in the file's order.
 */
export const profileSchema = z.object({
  profile_id: uuid,
  wire_format: z.enum(WIRE_FORMATS),
  compat_profile: z.string().min(1),
  provider: providerName.optional(),
  // Each upstream is tried at most once per call: a route record has room for every attempt.
  providers: z.array(upstreamEntrySchema).min(1).max(MAX_ROUTE_ATTEMPTS).optional(),
  upstream_model: z.string().min(1).optional(),
  capabilities: z.array(z.string().min(1)),
  chat_runtime_supported: z.boolean(),
  /**
   * The encoding of the upstream model (openai-chat profiles only): counts the prompt of a stream
   * cut before the provider said its count, and of count_tokens. Absent: a byte bound.
   */
  tokenizer: z.enum(TOKENIZERS).optional(),
}).strict().superRefine((profile, ctx) => {
  if ((profile.provider === undefined) === (profile.providers === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['provider'], message: 'name the upstreams either as "provider" or as a "providers" list: exactly one of the two' });
  }
  if (profile.provider !== undefined && profile.upstream_model === undefined) ctx.addIssue({ code: 'custom', path: ['upstream_model'], message: 'required with "provider"' });
  profile.providers?.forEach((entry, i) => {
    if (entry.upstream_model === undefined && profile.upstream_model === undefined) {
      ctx.addIssue({ code: 'custom', path: ['providers', i, 'upstream_model'], message: 'needs an upstream_model: its own, or the profile\'s' });
    }
    if (profile.providers!.findIndex((other) => other.provider === entry.provider) !== i) {
      ctx.addIssue({ code: 'custom', path: ['providers', i, 'provider'], message: `provider "${entry.provider}" is listed twice` });
    }
  });
}).transform(({ provider, providers, upstream_model, ...profile }) => ({
  ...profile,
  upstreams: (providers ?? [{ provider: provider!, weight: 1, upstream_model }]).map((entry) => ({
    provider: entry.provider, weight: entry.weight, upstream_model: (entry.upstream_model ?? upstream_model)!,
  })),
}));

export type ProfileUpstream = { provider: string; weight: number; upstream_model: string };

/** Status strings are kept as written: anything other than "ready" (or a missing one) is not ready. */
const pricingStatus = z.record(z.string(), z.string());

export const pricesSchema = z.object({
  TEXT_INPUT: amount.optional(),
  /** Prompt tokens read from the provider's prompt cache; unpriced: billed as TEXT_INPUT. */
  TEXT_INPUT_CACHE_READ: amount.optional(),
  /** Prompt tokens written to the prompt cache (default lifetime); unpriced: billed as TEXT_INPUT. */
  TEXT_INPUT_CACHE_WRITE: amount.optional(),
  /** Prompt tokens written to the prompt cache for one hour; unpriced: billed as TEXT_INPUT_CACHE_WRITE. */
  TEXT_INPUT_CACHE_WRITE_1H: amount.optional(),
  TEXT_OUTPUT: amount.optional(),
  IMAGE: amount.optional(),
  SECOND: amount.optional(),
  AGENT_RUN: amount.optional(),
  SIGNATURE: amount.optional(),
  EVIDENCE: amount.optional(),
  MEDIA: amount.optional(),
}).strict();

/** An instant in UTC, written as ISO 8601 with a `Z` (the price schedule's dates). */
const utcInstant = z.iso.datetime({ offset: false }).describe('ISO 8601 UTC, e.g. 2026-12-01T00:00:00Z');

/**
 * One dated set of prices: in force from `effective_from` until the next entry's. It replaces
 * the model's `prices` whole (a unit it leaves out is unpriced while it is in force) and, when it
 * has one, the model's `pricing_status`.
 */
export const priceEntrySchema = z.object({
  effective_from: utcInstant,
  prices: pricesSchema,
  pricing_status: pricingStatus.optional(),
}).strict();

/** Entries in strictly increasing order of their dates: which one is in force is never ambiguous. */
const priceSchedule = z.array(priceEntrySchema).default([]).superRefine((entries, ctx) => {
  for (let i = 1; i < entries.length; i++) {
    if (Date.parse(entries[i].effective_from) <= Date.parse(entries[i - 1].effective_from)) {
      ctx.addIssue({ code: 'custom', path: [i, 'effective_from'], message: `must be later than entry ${i - 1}'s (${entries[i - 1].effective_from}): dates are sorted and unique` });
    }
  }
});

export const modelSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'letters, digits, ".", "_" and "-" only'),
  display_name: z.string().optional(),
  withdrawn: z.boolean().default(false),
  profiles: z.array(profileSchema).min(1),
  pricing_status: pricingStatus,
  /** Prices in minor units per unit (token, image, second). */
  prices: pricesSchema.default({}),
  /**
   * Effective-dated prices (docs/money.md, "Dated prices"): the latest entry whose
   * `effective_from` has come is in force; before the first, `prices` and `pricing_status` are.
   */
  price_schedule: priceSchedule,
  /** The explicit free contract: the only way a zero price is valid. */
  free_contract: z.boolean().default(false),
  limits: z.object({
    max_tokens: tokens.optional(),
    output_budget: tokens.optional(),
    max_body_bytes: z.number().int().positive().optional(),
    /**
     * The most prompt tokens one inline image costs on this model, where its provider bills
     * images above the rule of its provider kind (docs/money.md, "Inline images and PDFs"): set,
     * it bounds every inline image, and each PDF page's image, in place of that rule.
     */
    max_image_tokens: tokens.optional(),
  }).strict().default({}),
}).strict();

export const catalogFileSchema = z.object({
  models: z.array(modelSchema),
  providers: z.record(providerName, z.unknown()),
}).strict();

export type CatalogProfile = z.infer<typeof profileSchema>;
export type CatalogModel = z.infer<typeof modelSchema>;
export type PriceEntry = z.infer<typeof priceEntrySchema>;
export type CatalogFile = z.infer<typeof catalogFileSchema>;
