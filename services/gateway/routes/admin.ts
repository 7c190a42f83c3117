// The operator API (docs/api.md#operator): accounts, API keys (shown once; optionally scoped, see
// docs/auth.md), credits (idempotent per reference).

import { Router } from 'express';
import type { z } from 'zod';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { DEFAULT_POOL, MEMBER_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import { accountBody, apiKeyBody, creditBody } from './admin-schemas';
import { GatewayError } from '../../../lib/errors';
import { CURRENCY, SCALE } from '../../../lib/money';
import type { AccountStore } from '../accounts/store';
import type { OrderService } from '../orders/use-case';
import { ORDER_REFERENCE_PREFIX } from '../../../actors/order/OrderInterface';
import { sendOrder } from './orders';
import type { LedgerReader } from '../ledger/reader';
import { reconcile, repair } from '../ledger/reconcile';
import type { ActorOutboxClient } from '../../../actors/runtime/outbox-client';
import { adminAuth } from '../middleware/auth';
import { parseApiKeyScopes } from '../auth/scopes';
import { jsonBody } from '../middleware/json-body';

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new GatewayError('invalid_request', `${issue?.path.join('.') || 'body'}: ${issue?.message}`, { param: issue?.path.join('.') || undefined });
  }
  return result.data;
}

export function adminRoutes(options: { adminToken?: string; accounts: AccountStore; funds: FundsHoldClient; outbox: ActorOutboxClient; ledger: LedgerReader; orders: OrderService }): Router {
  const { accounts, funds } = options;
  const router = Router();
  router.use('/admin/v1', adminAuth(options.adminToken), jsonBody(64 * 1024));

  router.post('/admin/v1/accounts', async (req, res) => {
    const { name } = parse(accountBody, req.body);
    // Both pools enter the ledger's index first, so reconciliation covers the account from its
    // creation on, before any of its events has reached the ledger.
    const account = await accounts.createAccount(name, async (accountId) => {
      for (const pool of [DEFAULT_POOL, MEMBER_POOL]) await options.ledger.register(accountId, pool);
    });
    res.status(201).json({ accountId: account.accountId, name: account.name, createdAt: account.createdAt });
  });

  const existing = async (accountId: string) => {
    const account = await accounts.getAccount(accountId);
    if (!account) throw new GatewayError('account_not_found', `no account ${accountId}`);
    return account;
  };

  router.post('/admin/v1/accounts/:accountId/api-keys', async (req, res) => {
    const scopes = parseApiKeyScopes(parse(apiKeyBody, req.body).scopes ?? []);
    const account = await existing(req.params.accountId as string);
    const key = await accounts.createApiKey(account.accountId, scopes);
    res.status(201).json({ apiKeyId: key.apiKeyId, apiKey: key.apiKey, accountId: account.accountId, scopes: key.scopes });
  });

  router.post('/admin/v1/accounts/:accountId/credits', async (req, res) => {
    const body = parse(creditBody, req.body);
    // Order credits are made by their orders only: once per order, for the order's amount.
    if (body.reference.startsWith(ORDER_REFERENCE_PREFIX)) throw new GatewayError('invalid_request', `references starting with "${ORDER_REFERENCE_PREFIX}" are reserved for orders`, { param: 'reference' });
    const account = await existing(req.params.accountId as string);
    const outcome = await funds.of(account.accountId, body.pool).credit({ amount: body.amount, reference: body.reference });
    res.status(200).json({ accountId: account.accountId, currency: CURRENCY, scale: SCALE, ...outcome });
  });

  // A top-up order made by an operator: paid and fulfilled like the owner's own (docs/orders.md).
  router.post('/admin/v1/accounts/:accountId/orders', async (req, res) => {
    const account = await existing(req.params.accountId as string);
    const order = await options.orders.create({ accountId: account.accountId, createdBy: 'operator', scope: 'operator', body: req.body, idempotencyKey: req.headers['idempotency-key'] });
    sendOrder(res, 201, order);
  });

  // Every ledger account's balance recomputed from its bill rows against its FundsHold actor;
  // each difference names the events the actor emitted that the ledger lacks.
  router.get('/admin/v1/reconciliation', async (_req, res) => {
    res.json(await reconcile(options.ledger, funds, options.outbox));
  });

  // The repair: the differing accounts' actors deliver their missing events to the ledger
  // (idempotent by event id); the answer says what was delivered and reconciles again.
  router.post('/admin/v1/reconciliation/repair', async (_req, res) => {
    res.json(await repair(options.ledger, funds, options.outbox));
  });
  return router;
}
