// POST /api/open/v1/models/{id}/chat — PAYG text chat on the OpenAI chat-completions wire.

import { Router, type Request } from 'express';
import { GatewayError } from '../../../lib/errors';
import { parseSimDirectives } from '../../../providers/simulated/chat';
import type { AccountStore } from '../accounts/store';
import { apiKeyAuth } from '../middleware/auth';
import { jsonBody } from '../middleware/json-body';
import { runChat, type ChatDeps } from '../chat/use-case';

export function directivesOf(req: Request) {
  const header = req.headers['x-sim-directive'];
  if (header === undefined) return undefined;
  try {
    return parseSimDirectives(Array.isArray(header) ? header.join(';') : header);
  } catch (error) {
    throw new GatewayError('invalid_request', (error as Error).message, { param: 'X-Sim-Directive' });
  }
}

export function chatRoutes(deps: ChatDeps, accounts: AccountStore): Router {
  const router = Router();
  router.post('/api/open/v1/models/:id/chat', apiKeyAuth(accounts), jsonBody(deps.maxBodyBytes), async (req, res) => {
    await runChat(deps, { modelId: req.params.id as string, body: req.body, bodyBytes: req.bodyBytes, caller: req.caller, requestId: req.requestId, directives: directivesOf(req) }, res);
  });
  return router;
}
