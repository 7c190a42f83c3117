// The open pool-3 chat routes: POST /api/open/v1/models/{id}/chat (OpenAI chat-completions
// wire) and its Anthropic variant POST /api/open/v1/models/{id}/chat/anthropic (Messages
// wire; the API key may also come as x-api-key). Errors use the gateway's own shape.

import { Router } from 'express';
import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import type { AccountStore } from '../accounts/store';
import type { ChatDeps } from '../chat/prepare';
import { runChat } from '../chat/use-case';
import { anthropicWire, openAiWire } from '../chat/wires';
import { chatInput } from '../http/chat-input';
import type { DirectRoutes } from '../http/direct-routes';
import { respond } from '../http/respond';
import { apiKeyAuth } from '../middleware/auth';
import { jsonBody } from '../middleware/json-body';
import { noQuery } from '../middleware/no-query';

/** Registered on the router and served directly too (the gateway's hot path). */
export function chatRoutes(deps: ChatDeps, accounts: AccountStore, direct: DirectRoutes): Router {
  const router = Router();
  const body = jsonBody(deps.maxBodyBytes, deps.bodyBudget);
  direct.post(router, '/api/open/v1/models/:id/chat', [apiKeyAuth(accounts), noQuery, body, async (req, res) => {
    await respond(res, await runChat(deps, openAiWire, chatInput(req, req.params.id as string, DEFAULT_POOL, res)));
  }]);
  direct.post(router, '/api/open/v1/models/:id/chat/anthropic', [apiKeyAuth(accounts, { allowXApiKey: true }), noQuery, body, async (req, res) => {
    await respond(res, await runChat(deps, anthropicWire, chatInput(req, req.params.id as string, DEFAULT_POOL, res)));
  }]);
  return router;
}
