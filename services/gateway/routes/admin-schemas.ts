// The operator API's bodies and answers, once: the routes parse with these schemas and the OpenAPI
// document (openapi-admin.ts) is generated from them, so the two cannot drift.

import { z } from 'zod';
import { DEFAULT_POOL, MEMBER_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import { MAX_ROTATION_GRACE_MS } from '../../../actors/account/AccountInterface';
import { API_KEY_SCOPES } from '../auth/scopes';
import { limitsPatchSchema, limitsSchema } from '../../../lib/limits';
import { fromNotAfterTo, instant, TO_BEFORE_FROM } from '../../ledger/console-query';
import { AUDIT_ACTIONS, type AuditAction, type AuditQuery } from '../accounts/audit';

const nanoUsd = z.number().int().max(Number.MAX_SAFE_INTEGER);

export const accountBody = z.object({ name: z.string().trim().min(1).max(200) }).strict();
/** Scopes are checked by name after the shape, so an unknown or repeated one is invalid_scope naming it. */
export const apiKeyBody = z.object({
  scopes: z.array(z.string().max(64)).max(32).optional().describe(`Any of: ${API_KEY_SCOPES.join(', ')}`),
  name: z.string().trim().min(1).max(200).optional().describe('A label for the operator; not secret'),
  expiresAt: z.iso.datetime({ offset: true }).optional().describe('From then on the key is refused (401), like a revoked one; must be in the future'),
}).strict();
export const limitsBody = z.object({
  limits: limitsPatchSchema.describe('Each limit a positive integer (spend in nano-USD); null removes it; an absent one is kept'),
}).strict();
/** Routes that take no body (an empty JSON object is accepted) and routes that take no query. */
export const noBody = z.object({}).strict();
export const rotateBody = z.object({
  graceSeconds: z.number().int().min(0).max(MAX_ROTATION_GRACE_MS / 1000).optional().describe('How long the old key keeps working beside the new one (default 0: refused at once)'),
}).strict();
export const limitQuery = z.object({
  // Decimal digits only: Number() would also read "0x10", "1e1", " 5" or "" (as 0), and a repeated parameter is a list.
  limit: z.string({ error: 'must be given once, a whole number from 1 to 100' }).regex(/^[0-9]{1,16}$/, 'must be a whole number from 1 to 100 (decimal digits)')
    .transform(Number).pipe(z.number().int().min(1, 'must be a whole number from 1 to 100').max(100, 'must be a whole number from 1 to 100')).default(20),
  before: z.string({ error: "must be given once, a previous page's next" }).regex(/^(0|[1-9][0-9]{0,15})$/, "must be a previous page's next (a whole number)").optional().describe("A previous page's `next`"),
}).strict();
export const accountListQuery = limitQuery.extend({ name: z.string().min(1).max(200).optional().describe('Only accounts whose name contains this, compared without case') }).strict();
const AUDIT_ACTION_LIST = AUDIT_ACTIONS.join(', ');
const auditActions = z.string({ error: `action must be given once: one action or several separated by commas, of ${AUDIT_ACTION_LIST}` })
  .transform((text, ctx) => {
    const names = text.split(',');
    const unknown = names.filter((name) => !(AUDIT_ACTIONS as readonly string[]).includes(name));
    if (unknown.length > 0) {
      ctx.addIssue({ code: 'custom', message: `unknown action ${unknown.map((name) => JSON.stringify(name)).join(', ')}: the actions are ${AUDIT_ACTION_LIST}` });
      return z.NEVER;
    }
    return [...new Set(names)] as AuditAction[];
  });
export const auditQuery = limitQuery.extend({
  accountId: z.string({ error: 'must be given once, one account id' }).min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional().describe('Only actions on this account'),
  action: auditActions.optional().describe(`Only these actions: one, or several separated by commas, of ${AUDIT_ACTION_LIST}`),
  from: instant('from').optional().describe("Only entries at or after this RFC 3339 time (the entry's `at`)"),
  to: instant('to').optional().describe('Only entries before this RFC 3339 time; not before `from`'),
}).strict().refine(fromNotAfterTo, TO_BEFORE_FROM)
  .transform(({ action, ...rest }): AuditQuery => ({ ...rest, ...(action !== undefined ? { actions: action } : {}) }));
export const debitBody = z.object({
  amount: nanoUsd.positive().describe('nano-USD taken off the balance; never more than is available'),
  reference: z.string().min(1).max(200).describe('Idempotency: a reference already applied to this pool changes nothing and answers applied false'),
  reason: z.string().trim().min(1).max(500).describe('Why: kept in the audit log'),
  pool: z.enum([DEFAULT_POOL, MEMBER_POOL]).default(DEFAULT_POOL),
}).strict();
export const creditBody = z.object({
  amount: nanoUsd.positive().describe('nano-USD'),
  reference: z.string().min(1).max(200).describe('Idempotency: a reference already applied to this pool changes nothing and answers applied false'),
  /** pool-3 (PAYG, the default) or the member entitlement budget of the OAuth family. */
  pool: z.enum([DEFAULT_POOL, MEMBER_POOL]).default(DEFAULT_POOL),
}).strict();

const isoTime = z.string().describe('ISO 8601 time');
export const accountAnswer = z.object({ accountId: z.string(), name: z.string(), createdAt: isoTime });
export const accountSummaryAnswer = accountAnswer.extend({
  suspendedAt: isoTime.nullable().describe('null: not suspended'),
  limits: limitsSchema.describe("The account's limits over all its keys and credentials (nano-USD for spend)"),
});
export const accountListAnswer = z.object({
  items: z.array(accountSummaryAnswer).describe('Newest first'),
  next: z.string().nullable().describe('Pass as `before` for the next page; null: no more'),
});
export const apiKeyAnswer = z.object({
  apiKeyId: z.string(),
  apiKey: z.string().describe('The key itself, shown this once'),
  accountId: z.string(),
  scopes: z.array(z.string()),
  name: z.string().nullable(),
  prefix: z.string().describe('The non-secret start of the key, as lists show it'),
  createdAt: isoTime,
  expiresAt: isoTime.nullable(),
});
export const rotatedKeyAnswer = apiKeyAnswer.extend({
  replaces: z.string().describe('The old key id'),
  oldKeyRefusedFrom: isoTime.describe('When the old key stops working: now, or after the grace, or at its expiry if that comes first'),
});
export const API_KEY_STATES = ['active', 'expiring', 'revoked', 'expired'] as const;
export const apiKeyItem = z.object({
  apiKeyId: z.string(),
  prefix: z.string().describe('The non-secret start of the key'),
  name: z.string().nullable(),
  scopes: z.array(z.string()),
  state: z.enum(API_KEY_STATES).describe("The key's own state, whatever its account's: expiring: works until revokedAt (a rotation grace) or expiresAt"),
  effectiveState: z.enum([...API_KEY_STATES, 'account_suspended']).describe("What a call with the key gets now: the key's own state, or account_suspended while its account is suspended and the key itself works (refused 403 account_suspended; its state again once the suspension is lifted)"),
  createdAt: isoTime,
  lastUsedAt: isoTime.nullable().describe('To within a minute; null: never used'),
  expiresAt: isoTime.nullable(),
  revokedAt: isoTime.nullable().describe('From when the key is refused (in the future during a rotation grace)'),
  rotatedFrom: z.string().nullable(),
  rotatedTo: z.string().nullable(),
  limits: limitsSchema.describe("The key's own limits (the account's apply too)"),
});
export const apiKeyListAnswer = z.object({
  items: z.array(apiKeyItem).describe('Newest first; never the keys themselves'),
  accountSuspendedAt: isoTime.nullable().describe("The account's suspension, which refuses every one of its keys; null: not suspended"),
});
export const poolAnswer = z.object({ pool: z.string(), balance: nanoUsd, held: nanoUsd, available: nanoUsd, leased: nanoUsd });
export const accountDetailAnswer = accountSummaryAnswer.extend({
  currency: z.string(), scale: z.number().int(),
  pools: z.array(poolAnswer),
  keys: z.array(apiKeyItem),
});
export const auditEntryAnswer = z.object({
  id: z.string(),
  at: isoTime,
  who: z.string().describe("The operator credential's id (never the credential)"),
  action: z.string(),
  accountId: z.string().nullable(),
  apiKeyId: z.string().nullable(),
  requestId: z.string(),
  details: z.record(z.string(), z.unknown()).describe('What the action changed; never a secret'),
});
export const auditListAnswer = z.object({
  items: z.array(auditEntryAnswer).describe('Newest first; under filters a page may hold fewer than `limit` (the scan of one page is bounded), even none, with `next` not null'),
  next: z.string().nullable().describe('Pass as `before`, with the same filters, for the next page; null: no more'),
});
export const creditAnswer = z.object({
  accountId: z.string(), currency: z.string(), scale: z.number().int(),
  reference: z.string(), amount: nanoUsd, applied: z.boolean().describe('false: the reference was applied before; nothing moved'), balance: nanoUsd,
});

const missingEvent = z.object({
  id: z.string(), topic: z.string(), type: z.string(), occurredAt: z.string(),
  balanceDelta: z.number().int().optional().describe("What the event moves the balance by: a billing event's, or the bill a settle's usage event carries; absent for an event that moves no balance"),
  amount: z.number().int().optional().describe('The amount of that bill'),
});
export const reconciliationAnswer = z.object({
  accounts: z.number().int().describe('Ledger accounts compared'),
  differences: z.array(z.object({
    accountId: z.string(), pool: z.string(),
    ledger: z.number().int().describe("Σ balanceDelta of the ledger's bill rows"),
    actor: z.number().int().describe("The FundsHold actor's balance"),
    ledgerRunningTotal: z.number().int(),
    bills: z.object({
      ledger: z.number().int().describe("Bill rows the FundsHold actor's events made in the ledger"),
      actor: z.number().int().describe('Bills the FundsHold actor emitted'),
    }).optional().describe('Present when both sides count bills (accounts whose records were made from 2026-11-29 on); apart with equal balances: a lost bill that moves no balance, a release or a platform-borne record'),
    missing: z.array(missingEvent).describe('Events the actor emitted that the ledger lacks'),
  })),
});
export const repairAnswer = z.object({
  repaired: z.array(z.object({ accountId: z.string(), pool: z.string(), delivered: z.array(z.string()), pending: z.array(z.string()) })),
  after: reconciliationAnswer,
});
