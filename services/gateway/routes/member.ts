// The member/business OAuth route family (docs/auth.md): a member of an account, holding an
// OAuth access token, calls models paid from the account's member entitlement budget (funding
// pool "member"), never from pool-3. API keys are refused here (403 credential_family_mismatch),
// as OAuth tokens are refused on the open and compatibility routes: a credential never moves a
// call to another funding pool.

import { Router } from 'express';
import { MEMBER_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import { CURRENCY, SCALE } from '../../../lib/money';
import type { AccountStore } from '../accounts/store';
import type { OAuthVerifier } from '../auth/oauth';
import type { ChatDeps } from '../chat/prepare';
import { runChat } from '../chat/use-case';
import { anthropicWire, openAiWire } from '../chat/wires';
import { credentialAuth } from '../middleware/auth';
import { jsonBody } from '../middleware/json-body';
import { noQuery } from '../middleware/no-query';
import { chatInput } from '../http/chat-input';
import { respond } from '../http/respond';

export function memberRoutes(deps: ChatDeps, credentials: { accounts: AccountStore; oauth?: OAuthVerifier }): Router {
  const router = Router();
  const auth = credentialAuth(credentials, { accept: ['oauth'] });
  const body = jsonBody(deps.maxBodyBytes, deps.bodyBudget);
  router.get('/api/member/v1/entitlement', auth, async (req, res) => {
    const view = await deps.funds.of(req.caller.accountId, MEMBER_POOL).getBalance();
    res.json({ currency: CURRENCY, scale: SCALE, subject: req.caller.subject, ...view });
  });
  router.post('/api/member/v1/models/:id/chat', auth, noQuery, body, async (req, res) => {
    await respond(res, await runChat(deps, openAiWire, chatInput(req, req.params.id as string, MEMBER_POOL, res)));
  });
  router.post('/api/member/v1/models/:id/chat/anthropic', auth, noQuery, body, async (req, res) => {
    await respond(res, await runChat(deps, anthropicWire, chatInput(req, req.params.id as string, MEMBER_POOL, res)));
  });
  return router;
}
