// The operator's use cases on accounts and API keys (docs/auth.md, "Key lifecycle"): each keeps
// the Account actor (the record: keys, suspension), the key-value projection the request path
// reads (services/gateway/accounts/store.ts) and the journals (the account directory, the audit
// log) in step, in an order where a failure part-way never leaves a key working that the operator
// was told is refused:
//
// - a new key is recorded in its actor before its projection exists (a key that works is always
//   listed, so always revocable);
// - a revocation, rotation or suspension is recorded in the actor, then projected; the answer
//   waits for both, and a failed projection answers 503: the operator repeats the call (each is
//   idempotent) and the repeat writes it.

import type { AccountClient } from '../../../actors/account/client';
import type { AccountStatus, ApiKeyEntry } from '../../../actors/account/AccountInterface';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { DEFAULT_POOL, MEMBER_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import type { JournalClient } from '../../../actors/journal/client';
import { ACCOUNTS_JOURNAL } from '../../../actors/journal/JournalInterface';
import { GatewayError } from '../../../lib/errors';
import type { LimitsPatch } from '../../../lib/limits';
import type { ApiKeyScope } from '../auth/scopes';
import type { LedgerReader } from '../ledger/reader';
import type { AuditLog, OperatorAction } from './audit';
import { hashApiKey, newApiKey, shownPrefix, type Account, type AccountStore, type ApiKeyRecord } from './store';
import { accountProjection, created, iso, keyView, projection, summary, type AccountSummary, type CreatedKey, type KeyView } from './key-views';

export type { AccountSummary, CreatedKey, KeyState, KeyView } from './key-views';

const POOLS = [DEFAULT_POOL, MEMBER_POOL] as const;

export interface OperatorDeps {
  accounts: AccountStore;
  accountActors: AccountClient;
  journals: JournalClient;
  funds: FundsHoldClient;
  ledger: LedgerReader;
  audit: AuditLog;
  now?: () => number;
}

const cursorOf = (next: number | null) => (next === null ? null : String(next));

export class AccountOperator {
  private readonly now: () => number;
  /** Unlisted keys being recorded (once per key per instance). */
  private readonly listing = new Set<string>();

  constructor(private readonly deps: OperatorDeps) {
    this.now = deps.now ?? Date.now;
  }

  async createAccount(action: OperatorAction, name: string): Promise<Account> {
    const { accounts, ledger, journals } = this.deps;
    // Both pools enter the ledger's index first, so reconciliation covers the account from its
    // creation on; the directory lists it before it exists (a listed id whose record is missing
    // is left out of the list).
    const account = await accounts.createAccount(name, async (accountId) => {
      for (const pool of POOLS) await ledger.register(accountId, pool);
      await journals.of(ACCOUNTS_JOURNAL).append({ id: accountId, entry: { accountId, name, createdAt: new Date(this.now()).toISOString() } });
    });
    await this.deps.audit.record(action, 'account.create', { accountId: account.accountId }, { name });
    return account;
  }

  /** The account, or 404 account_not_found. */
  async existing(accountId: string): Promise<Account> {
    const account = await this.deps.accounts.getAccount(accountId);
    if (!account) throw new GatewayError('account_not_found', `no account ${accountId}`);
    return account;
  }

  async listAccounts(query: { limit: number; before?: string; name?: string }): Promise<{ items: AccountSummary[]; next: string | null }> {
    const page = await this.deps.journals.of(ACCOUNTS_JOURNAL).read({
      limit: query.limit,
      ...(query.before !== undefined ? { before: Number(query.before) } : {}),
      ...(query.name !== undefined ? { match: { field: 'name', text: query.name } } : {}),
    });
    const items: AccountSummary[] = [];
    for (const { entry } of page.items) {
      const account = await this.deps.accounts.getAccount(String(entry.accountId));
      if (account) items.push(summary(account));
    }
    return { items, next: cursorOf(page.next) };
  }

  async accountDetail(accountId: string): Promise<AccountSummary & { pools: { pool: string; balance: number; held: number; available: number; leased: number }[]; keys: KeyView[] }> {
    const account = await this.existing(accountId);
    const pools = [];
    for (const pool of POOLS) {
      const balance = await this.deps.funds.of(accountId, pool).getBalance();
      pools.push({ pool, balance: balance.balance, held: balance.held, available: balance.available, leased: balance.leased });
    }
    return { ...summary(account), pools, keys: (await this.listKeys(accountId)).items };
  }

  async createKey(action: OperatorAction, accountId: string, request: { scopes: ApiKeyScope[]; name?: string; expiresAt?: string }): Promise<CreatedKey> {
    const account = await this.existing(accountId);
    const expiresAt = request.expiresAt === undefined ? null : Date.parse(request.expiresAt);
    if (expiresAt !== null && expiresAt <= this.now()) throw new GatewayError('invalid_request', 'expiresAt must be in the future', { param: 'expiresAt' });
    const key = newApiKey();
    const hash = hashApiKey(key.apiKey);
    await this.deps.accounts.putKeyAccount(key.apiKeyId, account.accountId);
    const entry = await this.deps.accountActors.of(account.accountId).addKey({
      apiKeyId: key.apiKeyId, hash, prefix: shownPrefix(key.apiKey), name: request.name ?? null, scopes: request.scopes, expiresAt,
    });
    await this.deps.accounts.putApiKey(hash, projection(account.accountId, entry, this.now()));
    await this.deps.audit.record(action, 'api_key.create', { accountId, apiKeyId: key.apiKeyId }, { name: entry.name, scopes: entry.scopes, expiresAt: iso(expiresAt) });
    return created(account.accountId, key.apiKey, entry);
  }

  async listKeys(accountId: string): Promise<{ items: KeyView[]; accountSuspendedAt: string | null }> {
    const account = await this.existing(accountId);
    const { keys } = await this.deps.accountActors.of(accountId).keys({});
    const now = this.now();
    const items = await Promise.all(keys.map(async (entry) => keyView(entry, await this.deps.accounts.lastUsed(entry.apiKeyId), now, account)));
    return { items, accountSuspendedAt: iso(account.suspendedAt) };
  }

  /** Changes a key's limits (a null removes one): in its actor, then in its projection. */
  async setKeyLimits(action: OperatorAction, apiKeyId: string, patch: LimitsPatch): Promise<KeyView> {
    const accountId = await this.keyAccount(apiKeyId);
    // The audit log has an entry for a change only: a patch that leaves the limits as they were has
    // none. The actor tells it from the turn that made the change, so of concurrent calls setting
    // the same limits one is recorded (an actor of an older version does not tell: recorded).
    const { entry, changed } = await this.deps.accountActors.of(accountId).setLimits({ apiKeyId, limits: patch });
    await this.project(accountId, entry!);
    if (changed !== false) await this.deps.audit.record(action, 'api_key.limits', { accountId, apiKeyId }, { limits: entry!.limits });
    return keyView(entry!, await this.deps.accounts.lastUsed(apiKeyId), this.now(), await this.existing(accountId));
  }

  /** Changes the account's limits: in its actor, then in its projection. */
  async setAccountLimits(action: OperatorAction, accountId: string, patch: LimitsPatch): Promise<AccountSummary> {
    const account = await this.existing(accountId);
    const { limits, changed } = await this.deps.accountActors.of(accountId).setLimits({ limits: patch });
    const projected = await this.projectAccount(account);
    if (changed !== false) await this.deps.audit.record(action, 'account.limits', { accountId }, { limits });
    return summary(projected);
  }

  async revokeKey(action: OperatorAction, apiKeyId: string): Promise<void> {
    const accountId = await this.keyAccount(apiKeyId);
    const entry = await this.deps.accountActors.of(accountId).revokeKey({ apiKeyId });
    // The revocation is in force at the actor's clock (its time is that clock's now, or earlier).
    await this.project(accountId, entry, entry.revokedAt ?? undefined);
    // Recorded on a repeat too, once per key (a key is revoked by a call at most once): the entry a
    // first attempt died before is written then. A key refused only by a rotation's grace has none.
    if (entry.revokedByOperator !== undefined) {
      await this.deps.audit.record(action, 'api_key.revoke', { accountId, apiKeyId }, { revokedAt: iso(entry.revokedAt) }, apiKeyId);
    }
  }

  async rotateKey(action: OperatorAction, apiKeyId: string, graceSeconds: number): Promise<CreatedKey & { replaces: string; oldKeyRefusedFrom: string }> {
    const accountId = await this.keyAccount(apiKeyId);
    const key = newApiKey();
    const hash = hashApiKey(key.apiKey);
    await this.deps.accounts.putKeyAccount(key.apiKeyId, accountId);
    const { old, successor } = await this.deps.accountActors.of(accountId).rotateKey({
      apiKeyId, successor: { apiKeyId: key.apiKeyId, hash, prefix: shownPrefix(key.apiKey) }, graceMs: graceSeconds * 1000,
    });
    // The successor was made at the actor's now: a rotation without grace is in force from then.
    await this.deps.accounts.putApiKey(hash, projection(accountId, successor, Math.max(this.now(), successor.createdAt)));
    await this.project(accountId, old, successor.createdAt);
    // The old key stops working at the grace's end, or at its expiry if that comes first.
    const oldKeyRefusedFrom = iso(Math.min(old.revokedAt ?? Infinity, old.expiresAt ?? Infinity))!;
    await this.deps.audit.record(action, 'api_key.rotate', { accountId, apiKeyId }, { successor: successor.apiKeyId, graceSeconds, oldKeyRefusedFrom });
    return { ...created(accountId, key.apiKey, successor), replaces: old.apiKeyId, oldKeyRefusedFrom };
  }

  async setSuspended(action: OperatorAction, accountId: string, suspended: boolean): Promise<AccountSummary> {
    const account = await this.existing(accountId);
    const status = await this.deps.accountActors.of(accountId).setSuspended({ suspended });
    const projected = await this.projectAccount(account, status);
    // Recorded on a repeat too, once per suspension (named by its suspendedAt) and once per lifting
    // of one: the entry a first attempt died before is written then, an entry already written is
    // not written again. Nothing suspended or lifted (an account never suspended): no entry.
    const named = suspended ? status.suspendedAt : status.liftedSuspension;
    if (named !== null && named !== undefined) {
      await this.deps.audit.record(action, suspended ? 'account.suspend' : 'account.unsuspend', { accountId }, { suspendedAt: iso(status.suspendedAt) }, `${accountId}:${named}`);
    }
    return summary(projected);
  }

  async debit(action: OperatorAction, accountId: string, request: { amount: number; reference: string; reason: string; pool: string }) {
    await this.existing(accountId);
    const outcome = await this.deps.funds.of(accountId, request.pool).debit({ amount: request.amount, reference: request.reference });
    // Recorded on a repeat too, once per reference and pool: the entry a first attempt died before is written then.
    await this.deps.audit.record(action, 'account.debit', { accountId }, { pool: request.pool, amount: request.amount, reference: request.reference, reason: request.reason }, `${accountId}:${request.pool}:${request.reference}`);
    return outcome;
  }

  /**
   * A key made before keys were listed, seen in use: recorded in its account's actor, so it can be
   * listed, rotated and revoked like any other. Once per key per instance, never awaited by the
   * request (a failure is tried again at a later use). Its projection is marked listed before the
   * actor records it: an operator can only revoke the key once the actor has it, so the
   * revocation's own projection is always the later write and is never overwritten.
   */
  recordUnlisted(apiKey: string, record: ApiKeyRecord): void {
    const hash = hashApiKey(apiKey);
    if (this.listing.has(hash)) return;
    this.listing.add(hash);
    const { accounts, accountActors } = this.deps;
    const recordIt = async () => {
      await accounts.putKeyAccount(record.apiKeyId, record.accountId);
      await accounts.putApiKey(hash, { ...record, listed: true });
      try {
        await accountActors.of(record.accountId).addKey({
          apiKeyId: record.apiKeyId, hash, prefix: shownPrefix(apiKey), name: record.name ?? null, scopes: record.scopes, expiresAt: record.expiresAt ?? null,
        });
      } catch (error) {
        // Not recorded: unlisted again, so a later use tries again.
        await accounts.putApiKey(hash, record);
        throw error;
      }
    };
    recordIt().catch(() => this.listing.delete(hash));
  }

  /**
   * Writes a changed key's projection, then reads the key again and writes once more if another
   * operator call changed it meanwhile: whichever write comes last carries the actor's final
   * state, so concurrent revocations and rotations of one key cannot leave an older one behind.
   * `actorNow`: a time the actor's clock has reached, as its answer tells it. What is in force is
   * judged by the later of it and this instance's clock: an instance whose clock is behind the
   * actor's would otherwise project a revocation made now as a future one, and every instance
   * whose clock is behind would serve the key until its own clock reached it.
   */
  private async project(accountId: string, entry: ApiKeyEntry, actorNow = 0): Promise<void> {
    const now = () => Math.max(this.now(), actorNow);
    await this.deps.accounts.putApiKey(entry.hash, projection(accountId, entry, now()));
    const current = await this.deps.accountActors.of(accountId).key({ apiKeyId: entry.apiKeyId });
    if (JSON.stringify(current) !== JSON.stringify(entry)) await this.deps.accounts.putApiKey(current.hash, projection(accountId, current, now()));
  }

  /**
   * The account's projection from its actor's status (suspension and limits together), written,
   * then checked against the status once more like a key's: a suspension and a limits change made
   * at once through two instances both end up in it. `status`: the actor's answer, if at hand.
   */
  private async projectAccount(account: Account, status?: AccountStatus): Promise<Account> {
    const actor = this.deps.accountActors.of(account.accountId);
    const first = status ?? await actor.status({});
    await this.deps.accounts.putAccount(accountProjection(account, first));
    const current = await actor.status({});
    const projected = accountProjection(account, current);
    if (JSON.stringify(current) !== JSON.stringify(first)) await this.deps.accounts.putAccount(projected);
    return projected;
  }

  private async keyAccount(apiKeyId: string): Promise<string> {
    const owner = await this.deps.accounts.keyAccount(apiKeyId);
    if (!owner) throw new GatewayError('api_key_not_found', `no API key ${apiKeyId}`);
    return owner.accountId;
  }
}
