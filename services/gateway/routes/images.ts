// POST /api/open/v1/models/{id}/images/generations — one image, Idempotency-Key required.
// GET  /api/open/v1/models/{id}/images/tasks/{taskId} — recovery, original owner and API key only.

import { Router, type Response } from 'express';
import type { AccountStore } from '../accounts/store';
import type { ImageReply } from '../images/answer';
import type { ImageService } from '../images/use-case';
import { apiKeyAuth, apiKeyOwner } from '../middleware/auth';
import type { BodyBudget } from '../limits/body-budget';
import { jsonBody } from '../middleware/json-body';
import { directivesOf } from '../http/chat-input';
import { noQuery } from '../middleware/no-query';

function send(res: Response, reply: ImageReply): void {
  res.set(reply.headers).json(reply.body);
}

export function imageRoutes(images: ImageService, accounts: AccountStore, maxBodyBytes: number, bodyBudget?: BodyBudget): Router {
  const router = Router();
  router.post('/api/open/v1/models/:id/images/generations', apiKeyAuth(accounts), noQuery, jsonBody(maxBodyBytes, bodyBudget), async (req, res) => {
    send(res, await images.generate({
      modelId: req.params.id as string,
      body: req.body,
      bodyBytes: req.bodyBytes,
      caller: apiKeyOwner(req.caller),
      limited: req.caller,
      requestId: req.requestId,
      idempotencyKey: req.headers['idempotency-key'],
      directives: directivesOf(req),
    }));
  });
  router.get('/api/open/v1/models/:id/images/tasks/:taskId', apiKeyAuth(accounts), noQuery, async (req, res) => {
    send(res, await images.recover({ modelId: req.params.id as string, taskId: req.params.taskId as string, caller: apiKeyOwner(req.caller) }));
  });
  return router;
}
