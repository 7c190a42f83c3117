// Account actor: each key under `key:<apiKeyId>` (a change rewrites only its own record), their
// ids in order of creation under `keys`, the suspension and the account's limits under `status`,
// the current rate window's counts under `window`, the count of today's orders under `orders`.
// Times are the actor's own clock, so every gateway instance sees one revocation time, one rate
// window and one day.

import { GatewayError } from '../../lib/errors';
import { patchLimits, RATE_WINDOW_MS, sameLimits, type Limits, type LimitsPatch, type RateLimitName } from '../../lib/limits';
import type { ActorContext, ActorInstance } from '../runtime/port';
import { StateRecord, StateRecords } from '../runtime/state-record';
import {
  ACCOUNT_ACTOR_TYPE,
  ACCOUNT_ARGS,
  ACCOUNT_METHODS,
  MAX_KEYS_PER_ACCOUNT,
  type AccountApi,
  type AccountStatus,
  type Admission,
  type AdmitRequest,
  type RateUsage,
  type ApiKeyEntry,
  type RateWindowView,
  type NewApiKey,
  type OrderCount,
  type RotateRequest,
} from './AccountInterface';

/** What the current rate window has counted: the account's, and each key's. */
interface RateWindow {
  start: number;
  account: { requests: number; tokens: number };
  keys: Record<string, { requests: number; tokens: number }>;
}

/** The orders counted on one UTC day. */
interface OrdersOfDay {
  day: string;
  count: number;
}

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export class Account implements AccountApi, ActorInstance {
  static readonly actorType = ACCOUNT_ACTOR_TYPE;
  static readonly methods = ACCOUNT_METHODS;
  static readonly args = ACCOUNT_ARGS;

  private readonly keyIds: StateRecord<string[]>;
  private readonly entries: StateRecords<ApiKeyEntry>;
  private readonly stored: StateRecord<AccountStatus>;
  private readonly window: StateRecord<RateWindow>;
  private readonly orders: StateRecord<OrdersOfDay>;

  constructor(private readonly ctx: ActorContext) {
    this.keyIds = new StateRecord(ctx.state, 'keys', 'no keys');
    this.entries = new StateRecords(ctx.state, 'key:');
    this.stored = new StateRecord(ctx.state, 'status', 'no status');
    this.window = new StateRecord(ctx.state, 'window', 'no window');
    this.orders = new StateRecord(ctx.state, 'orders', 'no orders');
  }

  async addKey(request: NewApiKey): Promise<ApiKeyEntry> {
    return this.add({ ...request, createdAt: this.ctx.now(), revokedAt: null, rotatedFrom: null, rotatedTo: null });
  }

  async keys(): Promise<{ keys: ApiKeyEntry[] }> {
    const ids = (await this.keyIds.load()) ?? [];
    const keys: ApiKeyEntry[] = [];
    for (const id of [...ids].reverse()) {
      const entry = await this.entries.get(id);
      if (entry) keys.push(entry);
    }
    return { keys };
  }

  key(request: { apiKeyId: string }): Promise<ApiKeyEntry> {
    return this.entry(request.apiKeyId);
  }

  async revokeKey(request: { apiKeyId: string }): Promise<ApiKeyEntry> {
    const entry = await this.entry(request.apiKeyId);
    const now = this.ctx.now();
    if (entry.revokedAt === null || entry.revokedAt > now) {
      entry.revokedAt = now;
      entry.revokedByOperator = now;
      this.entries.set(entry.apiKeyId, entry);
    }
    return entry;
  }

  async rotateKey(request: RotateRequest): Promise<{ old: ApiKeyEntry; successor: ApiKeyEntry }> {
    const old = await this.entry(request.apiKeyId);
    const done = await this.entries.get(request.successor.apiKeyId);
    // A repeat of the same rotation (a retried call) answers the same.
    if (done && done.rotatedFrom === old.apiKeyId && done.hash === request.successor.hash) return { old, successor: done };
    const now = this.ctx.now();
    refuseInactive(old, now);
    const successor = await this.add({
      ...request.successor, name: old.name, scopes: old.scopes, expiresAt: old.expiresAt, ...(old.limits ? { limits: old.limits } : {}),
      createdAt: now, revokedAt: null, rotatedFrom: old.apiKeyId, rotatedTo: null, spendKeyId: old.spendKeyId ?? old.apiKeyId,
    });
    // The old key's refusal comes with the grace, unless it was already due earlier.
    old.revokedAt = Math.min(old.revokedAt ?? Infinity, now + request.graceMs);
    old.rotatedTo = successor.apiKeyId;
    this.entries.set(old.apiKeyId, old);
    return { old, successor };
  }

  async status(): Promise<AccountStatus> {
    return (await this.stored.load()) ?? { suspendedAt: null };
  }

  async setSuspended(request: { suspended: boolean }): Promise<AccountStatus> {
    const status = await this.status();
    if (request.suspended === (status.suspendedAt !== null)) return status;
    const next: AccountStatus = request.suspended ? { ...status, suspendedAt: this.ctx.now() } : { ...status, suspendedAt: null, liftedSuspension: status.suspendedAt! };
    this.stored.save(next);
    return next;
  }

  async setLimits(request: { apiKeyId?: string; limits: LimitsPatch }): Promise<{ limits: Limits; entry?: ApiKeyEntry; changed: boolean }> {
    // `changed` is judged in this turn: of concurrent calls setting the same limits, one changes them.
    if (request.apiKeyId === undefined) {
      const status = await this.status();
      const next = { ...status, limits: patchLimits(status.limits, request.limits) };
      this.stored.save(next);
      return { limits: next.limits, changed: !sameLimits(status.limits, next.limits) };
    }
    const entry = await this.entry(request.apiKeyId);
    // A key that is refused for good has no calls left to limit: its limits stay as they were.
    refuseInactive(entry, this.ctx.now());
    const before = entry.limits;
    entry.limits = patchLimits(entry.limits, request.limits);
    this.entries.set(entry.apiKeyId, entry);
    return { limits: entry.limits, entry, changed: !sameLimits(before, entry.limits) };
  }

  /**
   * The minute window of the actor clock now, as counted so far (a new one counts nothing yet).
   * A stored window that began later, by at most a window, is still the current one: the clock
   * stepped back across the minute (an NTP step, or the actor placed on a host whose clock is a
   * little behind), and starting an earlier window afresh would let a full window's calls in again.
   * Further ahead, the clock was wrong rather than stepped, and waiting for it would refuse calls
   * for that long: a fresh window counts.
   */
  private async currentWindow(): Promise<{ now: number; resetAt: number; window: RateWindow }> {
    const now = this.ctx.now();
    const ownStart = now - (now % RATE_WINDOW_MS);
    const stored = await this.window.load();
    const windowStart = stored !== undefined && stored.start > ownStart && stored.start - now <= RATE_WINDOW_MS ? stored.start : ownStart;
    const window: RateWindow = stored?.start === windowStart ? stored : { start: windowStart, account: { requests: 0, tokens: 0 }, keys: {} };
    return { now, resetAt: windowStart + RATE_WINDOW_MS, window };
  }

  async admit(request: AdmitRequest): Promise<Admission> {
    const account = (await this.status()).limits ?? {};
    const key = request.apiKeyId === null ? {} : ((await this.entries.get(request.apiKeyId))?.limits ?? {});
    const { now, resetAt, window } = await this.currentWindow();
    const windowStart = window.start;
    // Counted in its rotation chain's window: a rotation neither resets nor doubles the key's rates.
    const counted = request.apiKeyId === null ? null : (request.countAs ?? request.apiKeyId);
    const keyCount = counted === null ? { requests: 0, tokens: 0 } : (window.keys[counted] ?? { requests: 0, tokens: 0 });
    // Every limit that applies, with what it has counted and what this call adds.
    const checks = [
      { scope: 'account' as const, limit: 'requests_per_minute' as const, max: account.requests_per_minute, used: window.account.requests, adds: 1 },
      { scope: 'key' as const, limit: 'requests_per_minute' as const, max: key.requests_per_minute, used: keyCount.requests, adds: 1 },
      { scope: 'account' as const, limit: 'tokens_per_minute' as const, max: account.tokens_per_minute, used: window.account.tokens, adds: request.tokens },
      { scope: 'key' as const, limit: 'tokens_per_minute' as const, max: key.tokens_per_minute, used: keyCount.tokens, adds: request.tokens },
    ].filter((check): check is typeof check & { max: number } => check.max !== undefined);
    // A call bigger than a whole limit is named first: whatever else is over now, no later window
    // would admit it, and the gateway must not tell its client to retry.
    const over = checks.find((check) => check.adds > check.max) ?? checks.find((check) => check.used + check.adds > check.max);
    const admitted = over === undefined;
    if (admitted) {
      window.account = { requests: window.account.requests + 1, tokens: window.account.tokens + request.tokens };
      if (counted !== null) window.keys[counted] = { requests: keyCount.requests + 1, tokens: keyCount.tokens + request.tokens };
      this.window.save(window);
    }
    // The headers tell the tighter of the account's and the key's counts, after this call.
    const view = (limit: RateLimitName): RateWindowView | undefined => {
      let tightest: RateWindowView | undefined;
      for (const check of checks.filter((c) => c.limit === limit)) {
        const remaining = Math.max(0, check.max - check.used - (admitted ? check.adds : 0));
        if (!tightest || remaining < tightest.remaining) tightest = { limit: check.max, remaining, resetAt };
      }
      return tightest;
    };
    const requests = view('requests_per_minute');
    const tokens = view('tokens_per_minute');
    return {
      admitted, windowStart, now,
      ...(requests ? { requests } : {}),
      ...(tokens ? { tokens } : {}),
      ...(over ? { refused: { limit: over.limit, scope: over.scope, retryAfterMs: resetAt - now, max: over.max, adds: over.adds } } : {}),
    };
  }

  async rates(request: { apiKeyId: string | null }): Promise<RateUsage> {
    const { resetAt, window } = await this.currentWindow();
    // Copies: the embedded host hands answers over by reference, and the window is the actor's own.
    const key = request.apiKeyId === null ? null : { ...(window.keys[request.apiKeyId] ?? { requests: 0, tokens: 0 }) };
    return { windowStart: window.start, resetAt, account: { ...window.account }, key };
  }

  async correctTokens(request: { apiKeyId: string | null; windowStart: number; delta: number; requests?: number }): Promise<void> {
    const window = await this.window.load();
    const requests = request.requests ?? 0;
    if (!window || window.start !== request.windowStart || (request.delta === 0 && requests === 0)) return;
    window.account = { requests: Math.max(0, window.account.requests + requests), tokens: Math.max(0, window.account.tokens + request.delta) };
    const key = request.apiKeyId === null ? undefined : window.keys[request.apiKeyId];
    if (key) window.keys[request.apiKeyId!] = { requests: Math.max(0, key.requests + requests), tokens: Math.max(0, key.tokens + request.delta) };
    this.window.save(window);
  }

  async countOrder(request: { limit: number }): Promise<OrderCount> {
    const now = this.ctx.now();
    const stored = await this.orders.load();
    // The next day already counted is still the day when the clock stepped back across midnight
    // (as a rate window, above): a fresh count of the day before would let its orders in again.
    const day = stored !== undefined && stored.day === dayOf(now + DAY_MS) ? stored.day : dayOf(now);
    const count = stored?.day === day ? stored.count : 0;
    const admitted = count < request.limit;
    if (admitted) this.orders.save({ day, count: count + 1 });
    return { admitted, day, count: admitted ? count + 1 : count, limit: request.limit, retryAfterMs: Date.parse(`${day}T00:00:00Z`) + DAY_MS - now };
  }

  async uncountOrder(request: { day: string }): Promise<void> {
    const stored = await this.orders.load();
    if (stored?.day !== request.day || stored.count === 0) return;
    this.orders.save({ day: stored.day, count: stored.count - 1 });
  }

  async onReminder(): Promise<void> {}

  private async add(entry: ApiKeyEntry): Promise<ApiKeyEntry> {
    const existing = await this.entries.get(entry.apiKeyId);
    if (existing) {
      if (existing.hash !== entry.hash) throw new GatewayError('invalid_request', `API key id ${entry.apiKeyId} is taken`, { param: 'apiKeyId' });
      return existing;
    }
    const ids = (await this.keyIds.load()) ?? [];
    if (ids.length >= MAX_KEYS_PER_ACCOUNT) throw new GatewayError('api_key_limit_reached', `an account holds at most ${MAX_KEYS_PER_ACCOUNT} API keys, revoked ones included`);
    ids.push(entry.apiKeyId);
    this.keyIds.save(ids);
    this.entries.set(entry.apiKeyId, entry);
    return entry;
  }

  private async entry(apiKeyId: string): Promise<ApiKeyEntry> {
    const entry = await this.entries.get(apiKeyId);
    if (!entry) throw new GatewayError('api_key_not_found', `no API key ${apiKeyId} in this account`);
    return entry;
  }
}

/** 409 api_key_inactive for a key refused from `now` on (revoked, past its rotation grace, or expired); a key in its grace still works. */
function refuseInactive(entry: ApiKeyEntry, now: number): void {
  const refusedSince = Math.min(entry.revokedAt ?? Infinity, entry.expiresAt ?? Infinity);
  if (refusedSince <= now) throw new GatewayError('api_key_inactive', `API key ${entry.apiKeyId} is ${entry.revokedAt !== null && entry.revokedAt <= now ? 'revoked' : 'expired'}: make a new key instead`);
}
