// Console routes on the caller's own account (pool-3): balance, limits, bills and usage by page,
// and their exports. The account is the credential's (the account's API key or a member token of
// the account), never anything in the request.

import { Router, type Request, type Response } from 'express';
import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import type { RateAdmission } from '../limits/admission';
import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { sendStream } from '../../../lib/http-stream';
import { CURRENCY, SCALE } from '../../../lib/money';
import { parseExportQuery, parsePageQuery, parseSpendingQuery, type ConsoleKind } from '../../ledger/console-query';
import { noQuery } from '../middleware/no-query';
import { exportHeaders } from '../../ledger/export-format';
import type { AccountStore } from '../accounts/store';
import type { OAuthVerifier } from '../auth/oauth';
import type { LedgerReader } from '../ledger/reader';
import { credentialAuth } from '../middleware/auth';
import { formBody } from '../middleware/json-body';

/** A form that asks for an export: its credential and a few filters. */
const EXPORT_FORM_LIMIT = 4096;

export function consoleRoutes(options: { credentials: { accounts: AccountStore; oauth?: OAuthVerifier }; funds: FundsHoldClient; ledger: LedgerReader; limits?: RateAdmission }): Router {
  const router = Router();
  const auth = credentialAuth(options.credentials, { accept: ['api_key', 'oauth'] });
  // The exports again, asked by a form post: the web console submits one so that the browser
  // saves the file as it arrives (a fetch would hold the whole file in the page first), and a
  // form can carry its credential only in a field (docs/console.md, "Web console").
  const formAuth = credentialAuth(options.credentials, { accept: ['api_key', 'oauth'], formToken: true });
  router.get('/api/distribution/api-credit/balance', auth, noQuery, async (req, res) => {
    const view = await options.funds.of(req.caller.accountId).getBalance();
    res.json({ currency: CURRENCY, scale: SCALE, ...view });
  });
  // The limits in force for this credential, as the key's projection says; under a rate limit
  // what the current minute has counted (the Account actor's read); and what the account and the
  // key have spent and hold as the spend limits count it (the FundsHold actor's read): what the
  // web console shows (docs/auth.md, "Limits").
  router.get('/api/distribution/api-credit/limits', auth, noQuery, async (req, res) => {
    const caller = req.caller;
    const spendKeyId = caller.family === 'api_key' ? caller.spendKeyId ?? caller.apiKeyId ?? null : null;
    const [usage, spend] = await Promise.all([options.limits?.usage(caller), options.funds.of(caller.accountId).getSpend({ apiKeyId: spendKeyId })]);
    res.json({
      key: caller.family === 'api_key' ? caller.limits?.key ?? {} : null,
      account: caller.limits?.account ?? {},
      rate_usage: usage ? { window_start: new Date(usage.windowStart).toISOString(), reset_at: new Date(usage.resetAt).toISOString(), account: usage.account, key: usage.key } : null,
      spend_usage: spend,
    });
  });

  const page = (kind: ConsoleKind) => async function consolePage(req: Request, res: Response) {
    const query = parsePageQuery(req.query, kind);
    res.json(await options.ledger.page(kind, req.caller.accountId, DEFAULT_POOL, query));
  };
  const exported = (kind: ConsoleKind, from: 'query' | 'body' = 'query') => async function consoleExport(req: Request, res: Response) {
    const query = parseExportQuery(from === 'query' ? req.query : req.body, kind, from);
    const body = await options.ledger.export(kind, req.caller.accountId, DEFAULT_POOL, query);
    res.set(exportHeaders(kind, query.format));
    await sendStream(body, res);
  };
  // Charged per UTC day and model, from the sums the ledger keeps as it appends (the Overview's chart).
  router.get('/api/distribution/api-credit/spending', auth, async (req, res) => {
    const query = parseSpendingQuery(req.query);
    res.json(await options.ledger.spending(req.caller.accountId, DEFAULT_POOL, query));
  });
  router.get('/api/distribution/api-credit/bills/page', auth, page('bills'));
  router.get('/api/distribution/api-credit/usage/page', auth, page('usage'));
  router.get('/api/distribution/api-credit/bills/export', auth, exported('bills'));
  router.get('/api/distribution/api-credit/usage/export', auth, exported('usage'));
  router.post('/api/distribution/api-credit/bills/export', noQuery, formBody(EXPORT_FORM_LIMIT), formAuth, exported('bills', 'body'));
  router.post('/api/distribution/api-credit/usage/export', noQuery, formBody(EXPORT_FORM_LIMIT), formAuth, exported('usage', 'body'));
  return router;
}
