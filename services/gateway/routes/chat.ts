// The open pool-3 chat routes: POST /api/open/v1/models/{id}/chat (OpenAI chat-completions
// wire) and its Anthropic variant POST /api/open/v1/models/{id}/chat/anthropic (Messages
// wire; the API key may also come as x-api-key). Errors use the gateway's own shape.

import { Router, type Request } from 'express';
import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import { GatewayError } from '../../../lib/errors';
import { parseSimDirectives } from '../../../providers/simulated/chat';
import type { AccountStore } from '../accounts/store';
import { requestedCapabilities } from '../capabilities/gates';
import { runChat, type ChatDeps } from '../chat/use-case';
import { anthropicWire, openAiWire } from '../chat/wires';
import { apiKeyAuth } from '../middleware/auth';
import { jsonBody } from '../middleware/json-body';

export function directivesOf(req: Request) {
  const header = req.headers['x-sim-directive'];
  if (header === undefined) return undefined;
  try {
    return parseSimDirectives(Array.isArray(header) ? header.join(';') : header);
  } catch (error) {
    throw new GatewayError('invalid_request', (error as Error).message, { param: 'X-Sim-Directive' });
  }
}

/** The use case's input from a request whose credential and body middleware have run. */
export function chatInput(req: Request, modelId: string, pool: string) {
  return {
    modelId,
    body: req.body,
    bodyBytes: req.bodyBytes,
    caller: req.caller,
    requestId: req.requestId,
    pool,
    directives: directivesOf(req),
    capabilities: requestedCapabilities(req.headers['x-payg-capabilities']),
  };
}

export function chatRoutes(deps: ChatDeps, accounts: AccountStore): Router {
  const router = Router();
  const body = jsonBody(deps.maxBodyBytes);
  router.post('/api/open/v1/models/:id/chat', apiKeyAuth(accounts), body, async (req, res) => {
    await runChat(deps, openAiWire, chatInput(req, req.params.id as string, DEFAULT_POOL), res);
  });
  router.post('/api/open/v1/models/:id/chat/anthropic', apiKeyAuth(accounts, { allowXApiKey: true }), body, async (req, res) => {
    await runChat(deps, anthropicWire, chatInput(req, req.params.id as string, DEFAULT_POOL), res);
  });
  return router;
}
