// The operator API (DESIGN.md §4): accounts, API keys (shown once), credits (idempotent per reference).

import { Router } from 'express';
import { z } from 'zod';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { GatewayError } from '../../../lib/errors';
import { CURRENCY, SCALE } from '../../../lib/money';
import type { AccountStore } from '../accounts/store';
import { adminAuth } from '../middleware/auth';
import { jsonBody } from '../middleware/json-body';

const accountBody = z.object({ name: z.string().trim().min(1).max(200) }).strict();
const creditBody = z.object({
  amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  reference: z.string().min(1).max(200),
}).strict();

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new GatewayError('invalid_request', `${issue?.path.join('.') || 'body'}: ${issue?.message}`, { param: issue?.path.join('.') || undefined });
  }
  return result.data;
}

export function adminRoutes(options: { adminToken?: string; accounts: AccountStore; funds: FundsHoldClient }): Router {
  const { accounts, funds } = options;
  const router = Router();
  router.use('/admin/v1', adminAuth(options.adminToken), jsonBody(64 * 1024));

  router.post('/admin/v1/accounts', async (req, res) => {
    const { name } = parse(accountBody, req.body);
    const account = await accounts.createAccount(name);
    res.status(201).json({ accountId: account.accountId, name: account.name, createdAt: account.createdAt });
  });

  const existing = async (accountId: string) => {
    const account = await accounts.getAccount(accountId);
    if (!account) throw new GatewayError('account_not_found', `no account ${accountId}`);
    return account;
  };

  router.post('/admin/v1/accounts/:accountId/api-keys', async (req, res) => {
    const account = await existing(req.params.accountId as string);
    const key = await accounts.createApiKey(account.accountId);
    res.status(201).json({ apiKeyId: key.apiKeyId, apiKey: key.apiKey, accountId: account.accountId });
  });

  router.post('/admin/v1/accounts/:accountId/credits', async (req, res) => {
    const body = parse(creditBody, req.body);
    const account = await existing(req.params.accountId as string);
    const outcome = await funds.of(account.accountId).credit(body);
    res.status(200).json({ accountId: account.accountId, currency: CURRENCY, scale: SCALE, ...outcome });
  });
  return router;
}
