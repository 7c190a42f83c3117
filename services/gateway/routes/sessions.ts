// The legacy prototype routes (docs/sessions.md), kept out of the formal open navigation: not in
// the OpenAPI document, every answer marked with X-Payg-Prototype. API key only (pool-3 family).
//   POST /v1/sessions                        a session in one of the caller's workspaces
//   POST /v1/sessions/{session_id}/runs      a run: a billed model call, one at a time per session
//   GET  /v1/workspaces                      the caller's workspaces and their sessions
//   GET  /v1/sessions/{session_id}/events    the session's events (SSE), resumable by Last-Event-ID

import { Router } from 'express';
import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import type { AccountStore } from '../accounts/store';
import { requireBodyModel } from '../chat/request';
import type { AccountShare } from '../limits/account-share';
import type { BodyBudget } from '../limits/body-budget';
import { countedRequest, type RateAdmission } from '../limits/admission';
import { apiKeyAuth, apiKeyOwner } from '../middleware/auth';
import { jsonBody } from '../middleware/json-body';
import { markPrototype, PROTOTYPE_PREFIXES } from '../middleware/prototype';
import type { SessionService } from '../sessions/use-case';
import { chatInput } from '../http/chat-input';
import { clientGone, respond } from '../http/respond';
import { noQuery, onlyQuery } from '../middleware/no-query';

/** A session body is one small object. */
const SESSION_BODY_LIMIT = 4 * 1024;

/** `streams`: the event streams one account may have open at once (absent: not counted). */
export function sessionRoutes(sessions: SessionService, accounts: AccountStore, maxBodyBytes: number, bodyBudget?: BodyBudget, limits?: RateAdmission, streams?: AccountShare): Router {
  const router = Router();
  // Before authentication: the 401 of a prototype route is marked too.
  router.use([...PROTOTYPE_PREFIXES], markPrototype());
  const auth = apiKeyAuth(accounts);
  router.post('/v1/sessions', auth, noQuery, jsonBody(SESSION_BODY_LIMIT), async (req, res) => {
    // A request of the caller's requests_per_minute, as every call is.
    const { result, headers } = await countedRequest(limits, req.caller, () => sessions.create(apiKeyOwner(req.caller), req.body));
    res.set(headers).status(201).json(result);
  });
  router.post('/v1/sessions/:session_id/runs', auth, noQuery, jsonBody(maxBodyBytes, bodyBudget), async (req, res) => {
    const { accepted, headers } = await sessions.startRun(req.params.session_id as string, apiKeyOwner(req.caller), chatInput(req, requireBodyModel(req.body), DEFAULT_POOL));
    res.set(headers);
    if (accepted.capabilities.length > 0) res.setHeader('x-payg-capabilities', accepted.capabilities.join(', '));
    res.status(202).location(accepted.events_url).json(accepted);
  });
  router.get('/v1/workspaces', auth, noQuery, async (req, res) => {
    res.json(await sessions.workspaces(apiKeyOwner(req.caller).accountId));
  });
  router.get('/v1/sessions/:session_id/events', auth, onlyQuery('last_event_id'), async (req, res) => {
    // Each open stream polls its session until its client leaves: their number is bounded.
    if (streams) {
      const { accountId } = req.caller;
      if (!streams.take(accountId, 1)) throw streams.refusal(`the account already has ${streams.perAccount} session event streams open; close one, or try again later`);
      res.once('close', () => streams.give(accountId, 1));
    }
    const resume = { lastEventId: req.headers['last-event-id'], lastEventIdQuery: req.query.last_event_id };
    await respond(res, await sessions.events(req.params.session_id as string, apiKeyOwner(req.caller), resume, clientGone(res), req.recheckCredential));
  });
  return router;
}
