// The legacy prototype routes (docs/sessions.md), kept out of the formal open navigation: not in
// the OpenAPI document, every answer marked with X-Payg-Prototype. API key only (pool-3 family).
//   POST /v1/sessions                        a session in one of the caller's workspaces
//   POST /v1/sessions/{session_id}/runs      a run: a billed model call, one at a time per session
//   GET  /v1/workspaces                      the caller's workspaces and their sessions
//   GET  /v1/sessions/{session_id}/events    the session's events (SSE), resumable by Last-Event-ID

import { Router } from 'express';
import { GatewayError } from '../../../lib/errors';
import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import type { AccountStore } from '../accounts/store';
import { requireBodyModel } from '../chat/request';
import { countedRequest, type RateAdmission } from '../limits/admission';
import { apiKeyAuth, apiKeyOwner } from '../middleware/auth';
import { jsonBody, type BodyBudget } from '../middleware/json-body';
import { markPrototype, PROTOTYPE_PREFIXES } from '../middleware/prototype';
import type { SessionService } from '../sessions/use-case';
import { chatInput } from '../http/chat-input';
import { clientGone, respond } from '../http/respond';
import { noQuery, onlyQuery } from '../middleware/no-query';

/** A session body is one small object. */
const SESSION_BODY_LIMIT = 4 * 1024;

/** The session event streams one account may have open at once on one gateway instance (GATEWAY_ACCOUNT_EVENT_STREAMS). */
export const DEFAULT_ACCOUNT_EVENT_STREAMS = 100;

export function sessionRoutes(sessions: SessionService, accounts: AccountStore, maxBodyBytes: number, bodyBudget?: BodyBudget, limits?: RateAdmission, streamsPerAccount = DEFAULT_ACCOUNT_EVENT_STREAMS): Router {
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
  // Open event streams per account: each polls its session until its client leaves, so their
  // number is bounded like any other resource a customer holds.
  const streaming = new Map<string, number>();
  router.get('/v1/sessions/:session_id/events', auth, onlyQuery('last_event_id'), async (req, res) => {
    const { accountId } = req.caller;
    const open = streaming.get(accountId) ?? 0;
    if (open >= streamsPerAccount) {
      throw new GatewayError('rate_limit_exceeded', `the account already has ${streamsPerAccount} session event streams open; close one, or try again later`, { param: 'event_streams', headers: { 'retry-after': '1', 'retry-after-ms': '1000' } });
    }
    streaming.set(accountId, open + 1);
    res.once('close', () => {
      const left = (streaming.get(accountId) ?? 1) - 1;
      if (left > 0) streaming.set(accountId, left);
      else streaming.delete(accountId);
    });
    const resume = { lastEventId: req.headers['last-event-id'], lastEventIdQuery: req.query.last_event_id };
    await respond(res, await sessions.events(req.params.session_id as string, apiKeyOwner(req.caller), resume, clientGone(res), req.recheckCredential));
  });
  return router;
}
