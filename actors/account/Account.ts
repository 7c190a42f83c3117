// Account actor: each key under `key:<apiKeyId>` (a change rewrites only its own record), their
// ids in order of creation under `keys`, the suspension under `status`. Times are the actor's
// own clock, so every gateway instance sees one revocation time.

import { GatewayError } from '../../lib/errors';
import type { ActorContext, ActorInstance } from '../runtime/port';
import { StateRecord, StateRecords } from '../runtime/state-record';
import {
  ACCOUNT_ACTOR_TYPE,
  ACCOUNT_ARGS,
  ACCOUNT_METHODS,
  MAX_KEYS_PER_ACCOUNT,
  type AccountApi,
  type AccountStatus,
  type ApiKeyEntry,
  type NewApiKey,
  type RotateRequest,
} from './AccountInterface';

export class Account implements AccountApi, ActorInstance {
  static readonly actorType = ACCOUNT_ACTOR_TYPE;
  static readonly methods = ACCOUNT_METHODS;
  static readonly args = ACCOUNT_ARGS;

  private readonly keyIds: StateRecord<string[]>;
  private readonly entries: StateRecords<ApiKeyEntry>;
  private readonly stored: StateRecord<AccountStatus>;

  constructor(private readonly ctx: ActorContext) {
    this.keyIds = new StateRecord(ctx.state, 'keys', 'no keys');
    this.entries = new StateRecords(ctx.state, 'key:');
    this.stored = new StateRecord(ctx.state, 'status', 'no status');
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
    const refusedSince = Math.min(old.revokedAt ?? Infinity, old.expiresAt ?? Infinity);
    if (refusedSince <= now) throw new GatewayError('api_key_inactive', `API key ${old.apiKeyId} is ${old.revokedAt !== null && old.revokedAt <= now ? 'revoked' : 'expired'}: make a new key instead`);
    const successor = await this.add({
      ...request.successor, name: old.name, scopes: old.scopes, expiresAt: old.expiresAt,
      createdAt: now, revokedAt: null, rotatedFrom: old.apiKeyId, rotatedTo: null,
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
    const next: AccountStatus = { suspendedAt: request.suspended ? this.ctx.now() : null };
    this.stored.save(next);
    return next;
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
