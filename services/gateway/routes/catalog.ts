// Anonymous catalog and readiness report.

import { Router } from 'express';
import { eligibility, publicEntry, reportedOperations, type Catalog } from '../../../catalog/catalog';
import { capabilityReadiness, type Capability } from '../capabilities/gates';
import { compatReadiness } from '../compat/gate';
import { openApiDocument } from '../openapi';
import { noQuery } from '../middleware/no-query';

export interface ReadinessInfo {
  actorHost: string;
  compatEnabled: boolean;
  providers: ReadonlySet<string>;
  acceptedDelivery: ReadonlySet<Capability>;
  oauthConfigured: boolean;
}

export function catalogRoutes(catalog: Catalog, info: ReadinessInfo): Router {
  const router = Router();
  router.get('/api/open/v1/catalog/models', noQuery, (_req, res) => {
    // One instant for the list: an effective date passing mid-answer cannot split it.
    const at = catalog.now();
    res.json({ object: 'list', data: catalog.models(at).map((model) => publicEntry(model, at)) });
  });
  router.get('/api/open/v1/openapi.json', noQuery, (_req, res) => {
    res.json(openApiDocument);
  });
  router.get('/api/open/v1/capabilities', noQuery, (_req, res) => {
    res.json({
      candidate_contract: true,
      notice: 'Readiness here is a candidate contract: it is not production enablement and does not replace real provider acceptance.',
      actor_host: info.actorHost,
      funding_pool: 'pool-3',
      routes: {
        chat: { path: '/api/open/v1/models/{id}/chat', ready: true },
        chat_anthropic: { path: '/api/open/v1/models/{id}/chat/anthropic', ready: true },
        member_chat: { path: '/api/member/v1/models/{id}/chat', ready: info.oauthConfigured, credential: 'OAuth member token', funding_pool: 'member' },
      },
      compatibility_gate: compatReadiness(info.compatEnabled, catalog.models()),
      capability_gates: capabilityReadiness(catalog, info.providers, info.acceptedDelivery),
      models: catalog.models().map((model) => ({
        id: model.id,
        operations: Object.fromEntries(reportedOperations(model).map((op) => {
          const result = eligibility(model, op);
          return [op, result.eligible ? { ready: true } : { ready: false, reason: result.reason }];
        })),
      })),
    });
  });
  return router;
}
