// The operator API's bodies and answers, once: the routes parse with these schemas and the OpenAPI
// document (openapi-admin.ts) is generated from them, so the two cannot drift.

import { z } from 'zod';
import { DEFAULT_POOL, MEMBER_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import { API_KEY_SCOPES } from '../auth/scopes';

const nanoUsd = z.number().int().max(Number.MAX_SAFE_INTEGER);

export const accountBody = z.object({ name: z.string().trim().min(1).max(200) }).strict();
/** Scopes are checked by name after the shape, so an unknown or repeated one is invalid_scope naming it. */
export const apiKeyBody = z.object({ scopes: z.array(z.string().max(64)).max(32).optional().describe(`Any of: ${API_KEY_SCOPES.join(', ')}`) }).strict();
export const creditBody = z.object({
  amount: nanoUsd.positive().describe('nano-USD'),
  reference: z.string().min(1).max(200).describe('Idempotency: a reference already applied to this pool changes nothing and answers applied false'),
  /** pool-3 (PAYG, the default) or the member entitlement budget of the OAuth family. */
  pool: z.enum([DEFAULT_POOL, MEMBER_POOL]).default(DEFAULT_POOL),
}).strict();

export const accountAnswer = z.object({ accountId: z.string(), name: z.string(), createdAt: z.string() });
export const apiKeyAnswer = z.object({
  apiKeyId: z.string(),
  apiKey: z.string().describe('The key itself, shown this once'),
  accountId: z.string(),
  scopes: z.array(z.string()),
});
export const creditAnswer = z.object({
  accountId: z.string(), currency: z.string(), scale: z.number().int(),
  reference: z.string(), amount: nanoUsd, applied: z.boolean().describe('false: the reference was applied before; nothing moved'), balance: nanoUsd,
});

const missingEvent = z.object({
  id: z.string(), topic: z.string(), type: z.string(), occurredAt: z.string(),
  balanceDelta: z.number().int().optional(), amount: z.number().int().optional(),
});
export const reconciliationAnswer = z.object({
  accounts: z.number().int().describe('Ledger accounts compared'),
  differences: z.array(z.object({
    accountId: z.string(), pool: z.string(),
    ledger: z.number().int().describe("Σ balanceDelta of the ledger's bill rows"),
    actor: z.number().int().describe("The FundsHold actor's balance"),
    ledgerRunningTotal: z.number().int(),
    missing: z.array(missingEvent).describe('Events the actor emitted that the ledger lacks'),
  })),
});
export const repairAnswer = z.object({
  repaired: z.array(z.object({ accountId: z.string(), pool: z.string(), delivered: z.array(z.string()), pending: z.array(z.string()) })),
  after: reconciliationAnswer,
});
