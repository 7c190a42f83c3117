// Limits an operator sets per API key and per account (docs/auth.md, "Limits"): two rates kept by
// the account's Account actor in fixed one-minute windows of its own clock, and three spend
// limits kept by the pool's FundsHold actor, where open holds count against them so that
// concurrent calls cannot overshoot. Amounts are nano-USD.

import { z } from 'zod';

export const RATE_LIMITS = ['requests_per_minute', 'tokens_per_minute'] as const;
export const SPEND_LIMITS = ['spend_per_day', 'spend_per_month', 'spend_total'] as const;
export const LIMIT_NAMES = [...RATE_LIMITS, ...SPEND_LIMITS] as const;
export type RateLimitName = (typeof RATE_LIMITS)[number];
export type SpendLimitName = (typeof SPEND_LIMITS)[number];
export type LimitName = (typeof LIMIT_NAMES)[number];
export type Limits = Partial<Record<LimitName, number>>;
export type SpendLimits = Partial<Record<SpendLimitName, number>>;

/** The length of a rate window. */
export const RATE_WINDOW_MS = 60_000;

const limitValue = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
/** A change of limits: a number sets one, null removes it, an absent name keeps it. */
export const limitsPatchSchema = z.object(Object.fromEntries(LIMIT_NAMES.map((name) => [name, limitValue.nullable().optional()])) as Record<LimitName, z.ZodOptional<z.ZodNullable<typeof limitValue>>>).strict();
export type LimitsPatch = z.infer<typeof limitsPatchSchema>;
/** Limits as stored and shown. */
export const limitsSchema = z.object(Object.fromEntries(LIMIT_NAMES.map((name) => [name, limitValue.optional()])) as Record<LimitName, z.ZodOptional<typeof limitValue>>).strict();

export function patchLimits(current: Limits | undefined, patch: LimitsPatch): Limits {
  const next: Limits = { ...(current ?? {}) };
  for (const name of LIMIT_NAMES) {
    const value = patch[name];
    if (value === null) delete next[name];
    else if (value !== undefined) next[name] = value;
  }
  return next;
}

/** Whether two sets of limits are the same: each name with the same value, absent and empty alike. */
export const sameLimits = (a: Limits | undefined, b: Limits | undefined) => LIMIT_NAMES.every((name) => (a?.[name] ?? null) === (b?.[name] ?? null));
export const hasRateLimits = (limits: Limits | undefined) => RATE_LIMITS.some((name) => limits?.[name] !== undefined);
export const hasSpendLimits = (limits: Limits | undefined) => SPEND_LIMITS.some((name) => limits?.[name] !== undefined);

export function spendLimitsOf(limits: Limits | undefined): SpendLimits | undefined {
  if (!hasSpendLimits(limits)) return undefined;
  return Object.fromEntries(SPEND_LIMITS.filter((name) => limits?.[name] !== undefined).map((name) => [name, limits![name]])) as SpendLimits;
}

const DAY_MS = 86_400_000;
/** The last day asked for, and its periods (every charge of a day asks for the same ones). */
let lastPeriods: Readonly<{ day: number; month: number }> = { day: NaN, month: NaN };

/** The UTC day and month a time falls in (their first millisecond): the spend periods. */
export function periodStarts(now: number): Readonly<{ day: number; month: number }> {
  // A UTC day is DAY_MS long in epoch time (which has no leap seconds): its start is exact.
  const day = now - (((now % DAY_MS) + DAY_MS) % DAY_MS);
  if (day !== lastPeriods.day) {
    const date = new Date(day);
    lastPeriods = Object.freeze({ day, month: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) });
  }
  return lastPeriods;
}
