// Console routes on the caller's own account.

import { Router } from 'express';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { CURRENCY, SCALE } from '../../../lib/money';
import type { AccountStore } from '../accounts/store';
import { apiKeyAuth } from '../middleware/auth';

export function consoleRoutes(options: { accounts: AccountStore; funds: FundsHoldClient }): Router {
  const router = Router();
  router.get('/api/distribution/api-credit/balance', apiKeyAuth(options.accounts), async (req, res) => {
    const view = await options.funds.of(req.caller.accountId).getBalance();
    res.json({ currency: CURRENCY, scale: SCALE, ...view });
  });
  return router;
}
