// POST /api/consumer/orders             — a top-up order for the caller's own account (the
//                                          account's API key or a member token of the account).
// GET  /api/consumer/orders/{orderId}   — the caller's own order; anything else is the same 404.
// POST /api/consumer/checkout/callback  — the payment provider's signed callback (no API key:
//                                          the Checkout-Signature is its credential).

import { Router, type NextFunction, type Request, type Response } from 'express';
import type { OrderView } from '../../../actors/order/OrderInterface';
import { SCALE } from '../../../lib/money';
import type { AccountStore } from '../accounts/store';
import type { OAuthVerifier } from '../auth/oauth';
import { countedRequest, type RateAdmission } from '../limits/admission';
import { credentialAuth } from '../middleware/auth';
import { jsonBody, rawJsonBody } from '../middleware/json-body';
import type { OrderService } from '../orders/use-case';
import { SIGNATURE_HEADER } from '../orders/signature';
import { noQuery } from '../middleware/no-query';

/** Order requests and callbacks are small. */
const ORDER_BODY_LIMIT = 64 * 1024;

/** The order as every order route shows it: amounts in nano-USD (scale 9). */
/** An order's answer; a replayed creation (same Idempotency-Key) says so in `x-payg-replayed: true`. */
export function sendOrder(res: Response, status: number, order: OrderView, replayed = false): void {
  if (replayed) res.set('x-payg-replayed', 'true');
  res.status(status).json({ ...order, scale: SCALE });
}

export function orderRoutes(orders: OrderService, credentials: { accounts: AccountStore; oauth?: OAuthVerifier }, limits?: RateAdmission): Router {
  const router = Router();
  // Console routes take both families (docs/auth.md): neither moves a call to another pool.
  const auth = credentialAuth(credentials, { accept: ['api_key', 'oauth'] });
  router.post('/api/consumer/orders', auth, noQuery, jsonBody(ORDER_BODY_LIMIT), async (req, res) => {
    // A request of the caller's requests_per_minute, as every call is; a replay (same
    // Idempotency-Key and amount) is answered from its order and counts nothing.
    const { order, replayed, headers } = await orders.create({
      accountId: req.caller.accountId,
      createdBy: 'console',
      // An Idempotency-Key is scoped to the credential that sent it.
      scope: req.caller.apiKeyId ?? `oauth:${req.caller.subject}`,
      body: req.body,
      idempotencyKey: req.headers['idempotency-key'],
    }, (call) => countedRequest(limits, req.caller, call, (created) => created.replayed));
    res.set(headers);
    sendOrder(res, 201, order, replayed);
  });
  router.get('/api/consumer/orders/:orderId', auth, noQuery, async (req, res) => {
    sendOrder(res, 200, await orders.get(req.caller.accountId, req.params.orderId as string));
  });
  router.post('/api/consumer/checkout/callback', checkoutEnabled(orders), rawJsonBody(ORDER_BODY_LIMIT), async (req, res) => {
    res.status(200).json(await orders.callback({ raw: req.rawBody, signature: req.headers[SIGNATURE_HEADER.toLowerCase()] }));
  });
  return router;
}

/** 503 before the body is read while no checkout secret is configured. */
function checkoutEnabled(orders: OrderService) {
  return function requireCheckoutSecret(_req: Request, _res: Response, next: NextFunction): void {
    orders.assertCheckoutEnabled();
    next();
  };
}
