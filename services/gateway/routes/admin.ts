// The operator API (docs/api.md#operator): accounts, API keys (shown once; optionally scoped, see
// docs/auth.md), credits (idempotent per reference).

import { Router, type Request } from 'express';
import type { z } from 'zod';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { accountBody, accountListQuery, apiKeyBody, auditQuery, creditBody, debitBody, limitsBody, noBody, rotateBody } from './admin-schemas';
import { noQuery, writesTakeNoQuery } from '../middleware/no-query';
import type { AccountOperator } from '../accounts/operator';
import type { AuditLog, OperatorAction } from '../accounts/audit';
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
import { parseJsonObject, refusalOf } from '../json-object';

function parse<T>(schema: z.ZodType<T>, value: unknown, where: 'body' | 'query' = 'body'): T {
  // No body reads as an empty one; a body given must be a JSON object (`null`, a list, a string is refused).
  if (where === 'body') return parseJsonObject(schema, value === undefined ? {} : value);
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw refusalOf(result.error, where);
  return result.data;
}

export interface AdminDeps {
  adminToken?: string;
  accounts: AccountStore;
  operator: AccountOperator;
  audit: AuditLog;
  funds: FundsHoldClient;
  outbox: ActorOutboxClient;
  ledger: LedgerReader;
  orders: OrderService;
}

/** Who acts, under which request: what each operator use case records in the audit log. */
const actionOf = (req: Request): OperatorAction => ({ who: req.operatorId, requestId: req.requestId });

export function adminRoutes(options: AdminDeps): Router {
  const { funds, operator, audit } = options;
  const router = Router();
  router.use('/admin/v1', adminAuth(options.adminToken), writesTakeNoQuery, jsonBody(64 * 1024));

  router.post('/admin/v1/accounts', async (req, res) => {
    const { name } = parse(accountBody, req.body);
    const account = await operator.createAccount(actionOf(req), name);
    res.status(201).json({ accountId: account.accountId, name: account.name, createdAt: account.createdAt });
  });

  router.get('/admin/v1/accounts', async (req, res) => {
    res.json(await operator.listAccounts(parse(accountListQuery, req.query, 'query')));
  });

  router.get('/admin/v1/accounts/:accountId', noQuery, async (req, res) => {
    res.json({ currency: CURRENCY, scale: SCALE, ...(await operator.accountDetail(req.params.accountId as string)) });
  });

  router.patch('/admin/v1/accounts/:accountId', async (req, res) => {
    const { limits } = parse(limitsBody, req.body);
    res.json(await operator.setAccountLimits(actionOf(req), req.params.accountId as string, limits));
  });

  router.patch('/admin/v1/api-keys/:apiKeyId', async (req, res) => {
    const { limits } = parse(limitsBody, req.body);
    res.json(await operator.setKeyLimits(actionOf(req), req.params.apiKeyId as string, limits));
  });

  router.post('/admin/v1/accounts/:accountId/suspend', async (req, res) => {
    parse(noBody, req.body);
    res.json(await operator.setSuspended(actionOf(req), req.params.accountId as string, true));
  });

  router.post('/admin/v1/accounts/:accountId/unsuspend', async (req, res) => {
    parse(noBody, req.body);
    res.json(await operator.setSuspended(actionOf(req), req.params.accountId as string, false));
  });

  router.post('/admin/v1/accounts/:accountId/debits', async (req, res) => {
    const body = parse(debitBody, req.body);
    const accountId = req.params.accountId as string;
    const outcome = await operator.debit(actionOf(req), accountId, body);
    res.status(200).json({ accountId, currency: CURRENCY, scale: SCALE, ...outcome });
  });

  router.get('/admin/v1/accounts/:accountId/api-keys', noQuery, async (req, res) => {
    res.json(await operator.listKeys(req.params.accountId as string));
  });

  router.post('/admin/v1/accounts/:accountId/api-keys', async (req, res) => {
    const body = parse(apiKeyBody, req.body);
    const scopes = parseApiKeyScopes(body.scopes ?? []);
    const key = await operator.createKey(actionOf(req), req.params.accountId as string, { scopes, name: body.name, expiresAt: body.expiresAt });
    res.status(201).json(key);
  });

  router.delete('/admin/v1/api-keys/:apiKeyId', async (req, res) => {
    // It takes no body: a field (a "graceSeconds", say: that is a rotation's) is refused, not ignored by a revocation in force at once.
    parse(noBody, req.body);
    await operator.revokeKey(actionOf(req), req.params.apiKeyId as string);
    res.status(204).end();
  });

  router.post('/admin/v1/api-keys/:apiKeyId/rotate', async (req, res) => {
    const { graceSeconds } = parse(rotateBody, req.body);
    res.status(201).json(await operator.rotateKey(actionOf(req), req.params.apiKeyId as string, graceSeconds ?? 0));
  });

  router.get('/admin/v1/audit', async (req, res) => {
    res.json(await audit.read(parse(auditQuery, req.query, 'query')));
  });

  const existing = (accountId: string) => operator.existing(accountId);

  router.post('/admin/v1/accounts/:accountId/credits', async (req, res) => {
    const body = parse(creditBody, req.body);
    // Order credits are made by their orders only: once per order, for the order's amount.
    if (body.reference.startsWith(ORDER_REFERENCE_PREFIX)) throw new GatewayError('invalid_request', `references starting with "${ORDER_REFERENCE_PREFIX}" are reserved for orders`, { param: 'reference' });
    const account = await existing(req.params.accountId as string);
    const outcome = await funds.of(account.accountId, body.pool).credit({ amount: body.amount, reference: body.reference });
    // Recorded on a repeat too, once per reference and pool: the entry a first attempt died before is written then.
    await audit.record(actionOf(req), 'account.credit', { accountId: account.accountId }, { pool: body.pool, amount: body.amount, reference: body.reference }, `${account.accountId}:${body.pool}:${body.reference}`);
    res.status(200).json({ accountId: account.accountId, currency: CURRENCY, scale: SCALE, ...outcome });
  });

  // A top-up order made by an operator: paid and fulfilled like the owner's own (docs/orders.md).
  router.post('/admin/v1/accounts/:accountId/orders', async (req, res) => {
    const account = await existing(req.params.accountId as string);
    const { order, replayed } = await options.orders.create({ accountId: account.accountId, createdBy: 'operator', scope: 'operator', body: req.body, idempotencyKey: req.headers['idempotency-key'] });
    // Recorded once per order: a replay (the same Idempotency-Key and body) adds no entry, but writes the one its first attempt died before.
    await audit.record(actionOf(req), 'order.create', { accountId: account.accountId }, { orderId: order.orderId, amount: order.amount }, order.orderId);
    sendOrder(res, 201, order, replayed);
  });

  // Every ledger account's balance recomputed from its bill rows against its FundsHold actor;
  // each difference names the events the actor emitted that the ledger lacks.
  router.get('/admin/v1/reconciliation', noQuery, async (_req, res) => {
    res.json(await reconcile(options.ledger, funds, options.outbox));
  });

  // The repair: the differing accounts' actors deliver their missing events to the ledger
  // (idempotent by event id); the answer says what was delivered and reconciles again.
  router.post('/admin/v1/reconciliation/repair', async (req, res) => {
    // It takes no body: a field it does not know (a "dryRun", say) is refused, never ignored by a repair that runs anyway.
    parse(noBody, req.body);
    const repaired = await repair(options.ledger, funds, options.outbox);
    // An entry only when an event was delivered: a repair that changed nothing (a clean ledger, or
    // every event still pending) is not an action on anything, like any repeat that changes nothing.
    const changed = repaired.repaired.filter((r) => r.delivered.length > 0);
    if (changed.length > 0) await audit.record(actionOf(req), 'reconciliation.repair', {}, { accounts: changed.map((r) => `${r.accountId}:${r.pool}`).slice(0, 100) });
    res.json(repaired);
  });
  return router;
}
