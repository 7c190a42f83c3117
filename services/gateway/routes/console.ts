// Console routes on the caller's own account (pool-3): balance, limits, bills and usage by page,
// and their exports. The account is the credential's (the account's API key or a member token of
// the account), never anything in the request.

import { Router, type Request, type Response } from 'express';
import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import type { RateAdmission } from '../limits/admission';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { sendStream } from '../../../lib/http-stream';
import { CURRENCY, SCALE } from '../../../lib/money';
import { parseBalanceQuery, parseExportQuery, parsePageQuery, type ConsoleKind } from '../../ledger/console-query';
import { exportHeaders } from '../../ledger/export-format';
import type { AccountStore } from '../accounts/store';
import type { OAuthVerifier } from '../auth/oauth';
import type { LedgerReader } from '../ledger/reader';
import { credentialAuth } from '../middleware/auth';

export function consoleRoutes(options: { credentials: { accounts: AccountStore; oauth?: OAuthVerifier }; funds: FundsHoldClient; ledger: LedgerReader; limits?: RateAdmission }): Router {
  const router = Router();
  const auth = credentialAuth(options.credentials, { accept: ['api_key', 'oauth'] });
  router.get('/api/distribution/api-credit/balance', auth, async (req, res) => {
    parseBalanceQuery(req.query);
    const view = await options.funds.of(req.caller.accountId).getBalance();
    res.json({ currency: CURRENCY, scale: SCALE, ...view });
  });
  // The limits in force for this credential, as the key's projection says, and under a rate limit
  // what the current minute has counted (the Account actor's read): what the web console shows
  // beside what was spent (docs/auth.md, "Limits").
  router.get('/api/distribution/api-credit/limits', auth, async (req, res) => {
    parseBalanceQuery(req.query);
    const usage = (await options.limits?.usage(req.caller)) ?? null;
    res.json({
      key: req.caller.family === 'api_key' ? req.caller.limits?.key ?? {} : null,
      account: req.caller.limits?.account ?? {},
      rate_usage: usage && { window_start: new Date(usage.windowStart).toISOString(), reset_at: new Date(usage.resetAt).toISOString(), account: usage.account, key: usage.key },
    });
  });

  const page = (kind: ConsoleKind) => async function consolePage(req: Request, res: Response) {
    const query = parsePageQuery(req.query);
    res.json(await options.ledger.page(kind, req.caller.accountId, DEFAULT_POOL, query));
  };
  const exported = (kind: ConsoleKind) => async function consoleExport(req: Request, res: Response) {
    const query = parseExportQuery(req.query);
    const body = await options.ledger.export(kind, req.caller.accountId, DEFAULT_POOL, query);
    res.set(exportHeaders(kind, query.format));
    await sendStream(body, res);
  };
  router.get('/api/distribution/api-credit/bills/page', auth, page('bills'));
  router.get('/api/distribution/api-credit/usage/page', auth, page('usage'));
  router.get('/api/distribution/api-credit/bills/export', auth, exported('bills'));
  router.get('/api/distribution/api-credit/usage/export', auth, exported('usage'));
  return router;
}
