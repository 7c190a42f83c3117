// The public API of the Account actor: one per account (the account id is the actor id), the
// operator's record of the account: its API keys (never a key itself: its SHA-256, a short
// non-secret prefix, its name, scopes, dates) and whether it is suspended. Turn-based, so keys
// made, rotated and revoked at once through several gateways are all kept. The gateway keeps,
// per key and per account, a projection of this record in its key-value store for the request
// path (services/gateway/accounts/store.ts). Callers depend on this file only; the actor type
// name "Account" is frozen.

import { z } from 'zod';
import { limitsPatchSchema, type Limits, type LimitsPatch, type RateLimitName } from '../../lib/limits';

export const ACCOUNT_ACTOR_TYPE = 'Account';
/** Keys an account holds at most, revoked ones included: creating past it is refused with 409. */
export const MAX_KEYS_PER_ACCOUNT = 1000;
/** The longest rotation grace: the old key works at most this long beside its successor. */
export const MAX_ROTATION_GRACE_MS = 30 * 24 * 3600 * 1000;

export interface NewApiKey {
  apiKeyId: string;
  /** SHA-256 of the key, hex. */
  hash: string;
  /** The key's first characters: enough to recognise it, far too few to use it. */
  prefix: string;
  name: string | null;
  scopes: string[];
  /** Epoch ms; null: never expires. */
  expiresAt: number | null;
}

export interface ApiKeyEntry extends NewApiKey {
  /** Epoch ms, by the actor's clock. */
  createdAt: number;
  /** From when the key is refused (epoch ms; in the future while a rotation's grace runs); null: not revoked. */
  revokedAt: number | null;
  /**
   * Set (to the revocation's time) by the one revocation call that changed the key: the audit
   * entry of that revocation is named by the key, so a repeated call writes it if a crash lost it.
   * Absent: not revoked by a revocation call (a rotation's grace ended, or never), or revoked
   * before this was kept (2026-11-29): a repeat then writes no entry, as before.
   */
  revokedByOperator?: number;
  /** The key this one was made to replace, and the key made to replace this one. */
  rotatedFrom: string | null;
  rotatedTo: string | null;
  /**
   * The key whose spend this key's charges count as (FundsHold's key spend): the first key of its
   * rotation chain, so a rotation does not start a new count. Absent: the key itself.
   */
  spendKeyId?: string;
  /** The key's own limits (lib/limits.ts); absent in entries made before limits existed. */
  limits?: Limits;
}

export interface AccountStatus {
  /** Epoch ms since when the account is suspended; null: not suspended. */
  suspendedAt: number | null;
  /**
   * The suspendedAt of the suspension last lifted: an unsuspension's audit entry is named by it,
   * so a repeated unsuspension writes the entry a crash lost. Absent: none lifted since this was
   * kept (2026-11-29).
   */
  liftedSuspension?: number;
  /** The account's limits, over all its keys and credentials. */
  limits?: Limits;
}

/** Where a rate stands in the current window: what the rate-limit headers tell. */
export interface RateWindowView {
  limit: number;
  remaining: number;
  /** Epoch ms when the window ends and the count starts again. */
  resetAt: number;
}

export interface AdmitRequest {
  /** The key the call comes with (null: an OAuth credential, only the account's limits apply). */
  apiKeyId: string | null;
  /** The call's token estimate (its input estimated from its size, plus its frozen max_tokens); corrected at settle. */
  tokens: number;
  /**
   * The key whose window the call counts in, when not apiKeyId: the first key of its rotation
   * chain, so a rotation neither resets the key's rates nor doubles them during its grace.
   * apiKeyId still names the key whose limits apply (a successor carries its predecessor's).
   */
  countAs?: string;
}

export interface Admission {
  admitted: boolean;
  /** The window the call was counted in (correctTokens names it). */
  windowStart: number;
  /** The tighter of the account's and the key's rates, when either is limited. */
  requests?: RateWindowView;
  tokens?: RateWindowView;
  /**
   * Why it was refused: the limit and whose it is, and when to try again; `max` the limit and
   * `adds` what this call would count. `adds > max`: the call can never be admitted under it (such
   * a limit is named before any other that is over).
   */
  refused?: { limit: RateLimitName; scope: 'account' | 'key'; retryAfterMs: number; max: number; adds: number };
  /**
   * The actor's clock when it answered: a window's reset (resetAt) is a time of that clock, so
   * the time left until it is counted from this, not from the gateway instance's clock (absent
   * from an actor of an earlier version: the instance's clock is used).
   */
  now?: number;
}

/** What the current minute window has counted, for the account and one key: read, never counted. */
export interface RateUsage {
  windowStart: number;
  resetAt: number;
  account: { requests: number; tokens: number };
  /** The key's own counts; null for a credential without a key (an OAuth member token). */
  key: { requests: number; tokens: number } | null;
}

/** An order creation counted against the account's orders of the day (UTC, the actor's clock). */
export interface OrderCount {
  admitted: boolean;
  /** The day counted in, `YYYY-MM-DD` (uncountOrder names it). */
  day: string;
  /** Orders counted that day, this one included when admitted. */
  count: number;
  limit: number;
  /** Until the next day begins (when refused: when to try again). */
  retryAfterMs: number;
}

export interface RotateRequest {
  apiKeyId: string;
  /** The new key: name, scopes and expiry are the old key's. */
  successor: Pick<NewApiKey, 'apiKeyId' | 'hash' | 'prefix'>;
  /** How long the old key keeps working beside the new one. */
  graceMs: number;
}

export interface AccountApi {
  /** Records a new key; a repeat with the same id and hash answers the same entry. */
  addKey(request: NewApiKey): Promise<ApiKeyEntry>;
  /** Every key of the account, newest first. */
  keys(request: Record<string, never>): Promise<{ keys: ApiKeyEntry[] }>;
  /** One key as it is now; 404 api_key_not_found. */
  key(request: { apiKeyId: string }): Promise<ApiKeyEntry>;
  /** From now on the key is refused; an earlier revocation (or a shorter grace) stands. 404 api_key_not_found. */
  revokeKey(request: { apiKeyId: string }): Promise<ApiKeyEntry>;
  /** A successor with the old key's name, scopes and expiry; the old key is refused after the grace. 409 api_key_inactive for a revoked or expired key. */
  rotateKey(request: RotateRequest): Promise<{ old: ApiKeyEntry; successor: ApiKeyEntry }>;
  status(request: Record<string, never>): Promise<AccountStatus>;
  /** Suspends (or lifts the suspension); a repeat changes nothing. */
  setSuspended(request: { suspended: boolean }): Promise<AccountStatus>;
  /** Changes the limits of the account, or of one of its keys (a null removes one); answers them, and whether this call changed them. 409 api_key_inactive for a revoked or expired key. */
  setLimits(request: { apiKeyId?: string; limits: LimitsPatch }): Promise<{ limits: Limits; entry?: ApiKeyEntry; changed: boolean }>;
  /** Counts a call against the account's and the key's rates in the current window, or refuses it (nothing counted). */
  admit(request: AdmitRequest): Promise<Admission>;
  /** What the current window has counted so far (a read: nothing is counted). */
  rates(request: { apiKeyId: string | null }): Promise<RateUsage>;
  /**
   * After the call: its real tokens replace the admitted bound, if its window is still the
   * current one; `requests: -1` gives its request back too (a call refused before anything was
   * held). `apiKeyId`: the key whose window it counted in (AdmitRequest.countAs, else its key).
   */
  correctTokens(request: { apiKeyId: string | null; windowStart: number; delta: number; requests?: number }): Promise<void>;
  /** Counts one order creation in the account's day, or refuses it at `limit` (nothing counted). */
  countOrder(request: { limit: number }): Promise<OrderCount>;
  /** Gives a counted creation back (it made no order), if its day is still the current one. */
  uncountOrder(request: { day: string }): Promise<void>;
}

export const ACCOUNT_METHODS = ['addKey', 'keys', 'key', 'revokeKey', 'rotateKey', 'status', 'setSuspended', 'setLimits', 'admit', 'rates', 'correctTokens', 'countOrder', 'uncountOrder'] as const satisfies readonly (keyof AccountApi)[];

const keyId = z.string().min(1).max(100);
const keyPart = { apiKeyId: keyId, hash: z.string().regex(/^[0-9a-f]{64}$/), prefix: z.string().min(1).max(32) };

/** Each method's argument, checked by the host before the actor sees it (actors/runtime/args.ts). */
export const ACCOUNT_ARGS = {
  addKey: z.looseObject({
    ...keyPart,
    name: z.string().max(200).nullable(),
    scopes: z.array(z.string()),
    expiresAt: z.number().int().positive().nullable(),
  }),
  keys: z.looseObject({}),
  key: z.looseObject({ apiKeyId: keyId }),
  revokeKey: z.looseObject({ apiKeyId: keyId }),
  rotateKey: z.looseObject({ apiKeyId: keyId, successor: z.looseObject(keyPart), graceMs: z.number().int().min(0).max(MAX_ROTATION_GRACE_MS) }),
  status: z.looseObject({}),
  setSuspended: z.looseObject({ suspended: z.boolean() }),
  setLimits: z.looseObject({ apiKeyId: keyId.optional(), limits: limitsPatchSchema }),
  admit: z.looseObject({ apiKeyId: keyId.nullable(), tokens: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), countAs: keyId.optional() }),
  rates: z.looseObject({ apiKeyId: keyId.nullable() }),
  correctTokens: z.looseObject({ apiKeyId: keyId.nullable(), windowStart: z.number().int().min(0), delta: z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER), requests: z.number().int().min(-1).max(0).optional() }),
  countOrder: z.looseObject({ limit: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }),
  uncountOrder: z.looseObject({ day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) }),
} satisfies Record<(typeof ACCOUNT_METHODS)[number], z.ZodType>;
