// The standard-compatibility routes, usable only once the shared gate passes (../compat/gate.ts):
//   GET  /v1/models            OpenAI list, or Anthropic's when the request carries anthropic-version
//   GET  /v1/models/{id}       one model of that list, in the same shape (404 model_not_found otherwise)
//   POST /v1/chat/completions  OpenAI chat-completions wire, model named in the body
//   POST /v1/messages          Anthropic Messages wire, model named in the body (x-api-key taken)
//   POST /v1/messages/count_tokens  the prompt's input tokens, free (../chat/count-tokens.ts)
//   POST /v1/embeddings        OpenAI embeddings wire, billed per prompt token (../embeddings/)
// Behind the gate they are the open chat routes: same limits, holds and pool-3 billing.
// Errors use the OpenAI and Anthropic shapes so the official SDKs raise their typed errors.

import { Router, type Request, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { errorResponder, type ErrorShape } from '../../../lib/error-responder';
import { GatewayError } from '../../../lib/errors';
import { DEFAULT_POOL } from '../../../actors/funds-hold/FundsHoldInterface';
import { CHAT_WIRES, eligibility, type Catalog, type CatalogModel } from '../../../catalog/catalog';
import type { AccountStore } from '../accounts/store';
import { servesEmbeddings, type CompatGate } from '../compat/gate';
import { prepareChat } from '../chat/prepare';
import { runPrepared } from '../chat/use-case';
import { countPromptTokens } from '../chat/count-tokens';
import { requireBodyModel } from '../chat/request';
import { anthropicWire, openAiWire, type InboundWire, type StreamPiece } from '../chat/wires';
import { prepareEmbeddings, runEmbeddings, type EmbeddingsDeps } from '../embeddings/use-case';
import { apiKeyAuth } from '../middleware/auth';
import { jsonBody } from '../middleware/json-body';
import { withRateHeaders } from '../limits/admission';
import { chatInput } from '../http/chat-input';
import type { DirectRoutes } from '../http/direct-routes';
import { respond } from '../http/respond';

/** The catalog has no publication date: the model lists carry the epoch (docs/compat.md). */
const CATALOG_EPOCH = 0;

const listShape = (req: Request): ErrorShape => (req.headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai');

/** The models a client of the list's shape can call: chat models, and for OpenAI's also embeddings models. */
function servedModels(catalog: Catalog, shape: ErrorShape): CatalogModel[] {
  const chats = (m: CatalogModel) => m.profiles.some((p) => (CHAT_WIRES as readonly string[]).includes(p.wire_format)) && eligibility(m, 'TEXT_OUTPUT').eligible;
  return catalog.models().filter((m) => chats(m) || (shape === 'openai' && servesEmbeddings(m)));
}

/** One model as the OpenAI or the Anthropic models API describes it. */
function modelEntry(m: CatalogModel, shape: ErrorShape) {
  return shape === 'anthropic'
    ? { type: 'model', id: m.id, display_name: m.display_name ?? m.id, created_at: new Date(CATALOG_EPOCH).toISOString() }
    : { id: m.id, object: 'model', created: CATALOG_EPOCH, owned_by: 'payg-gateway' };
}

function modelList(models: CatalogModel[], shape: ErrorShape) {
  const data = models.map((m) => modelEntry(m, shape));
  if (shape === 'anthropic') return { data, has_more: false, first_id: models[0]?.id ?? null, last_id: models.at(-1)?.id ?? null };
  return { object: 'list', data };
}

/** The chat and embeddings calls are registered on the router and served directly too (the gateway's hot path). */
export function compatRoutes(deps: EmbeddingsDeps & { gate: CompatGate }, accounts: AccountStore, logger: Logger, direct: DirectRoutes): Router {
  const router = Router();
  // x-api-key is a credential on the Anthropic wire's routes and on the model list both wires'
  // clients read; the OpenAI wire's routes take the Authorization header only (docs/auth.md).
  const auth = apiKeyAuth(accounts, { allowXApiKey: true });
  const bearerAuth = apiKeyAuth(accounts);
  const body = jsonBody(deps.maxBodyBytes, deps.bodyBudget);

  router.get('/v1/models', auth, async (req, res) => {
    deps.gate.admit(req.caller);
    await deps.gate.admitAccount(req.caller);
    res.json(modelList(servedModels(deps.catalog, listShape(req)), listShape(req)));
  });
  router.get('/v1/models/:id', auth, async (req, res) => {
    deps.gate.admit(req.caller);
    await deps.gate.admitAccount(req.caller);
    const model = servedModels(deps.catalog, listShape(req)).find((m) => m.id === req.params.id);
    if (!model) throw new GatewayError('model_not_found', `no model ${String(req.params.id)} behind the compatibility routes`);
    res.json(modelEntry(model, listShape(req)));
  });
  router.use('/v1/models', errorResponder({ logger, shapeOf: listShape }));

  // The gate's credential conditions are known before the body is read.
  const admitted: RequestHandler = (req, _res, next) => {
    deps.gate.admit(req.caller);
    next();
  };
  const handle = <R, P extends StreamPiece>(wire: InboundWire<R, P>): RequestHandler => async (req, res) => {
    const input = chatInput(req, requireBodyModel(req.body), DEFAULT_POOL, res);
    deps.gate.admitModel(deps.catalog.resolveChat(input.modelId, wire.wire).model);
    const chat = prepareChat(deps, wire, input);
    await deps.gate.admitAccount(req.caller);
    await respond(res, await runPrepared(deps, wire as unknown as InboundWire<unknown, StreamPiece>, chat, input));
  };
  // Each path's errors in its wire's shape, from the route served directly as from the router.
  const openAiErrors = errorResponder({ logger, shapeOf: () => 'openai' });
  const anthropicErrors = errorResponder({ logger, shapeOf: () => 'anthropic' });
  direct.post(router, '/v1/chat/completions', [bearerAuth, admitted, body, handle(openAiWire)], openAiErrors);
  router.use('/v1/chat/completions', openAiErrors);
  direct.post(router, '/v1/messages', [auth, admitted, body, handle(anthropicWire)], anthropicErrors);
  // Free: checked like a Messages call of the model, counted as one request under a rate limit, nothing held.
  router.post('/v1/messages/count_tokens', auth, admitted, body, async (req, res) => {
    const input = chatInput(req, requireBodyModel(req.body), DEFAULT_POOL);
    deps.gate.admitModel(deps.catalog.resolveChat(input.modelId, 'anthropic-messages').model);
    const chat = prepareChat(deps, anthropicWire, input);
    await deps.gate.admitAccount(req.caller);
    const rate = await deps.limits?.admit(req.caller, 0, 'anthropic');
    // Counted once admitted: a count the provider refuses or fails tells the window too.
    const inputTokens = await countPromptTokens(deps, chat).catch((error: unknown) => {
      throw rate ? withRateHeaders(error, rate.headers) : error;
    });
    res.set(rate?.headers ?? {}).json({ input_tokens: inputTokens });
  });
  router.use('/v1/messages', anthropicErrors);
  direct.post(router, '/v1/embeddings', [bearerAuth, admitted, body, async (req, res) => {
    const input = chatInput(req, requireBodyModel(req.body), DEFAULT_POOL, res);
    deps.gate.admitModel(deps.catalog.resolve(input.modelId, 'openai-embeddings').model, 'TEXT_INPUT');
    const prepared = prepareEmbeddings(deps, input);
    await deps.gate.admitAccount(req.caller);
    await respond(res, await runEmbeddings(deps, prepared, input));
  }], openAiErrors);
  router.use('/v1/embeddings', openAiErrors);
  return router;
}
