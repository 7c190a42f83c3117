// Anonymous catalog and readiness report.

import { Router } from 'express';
import { eligibility, publicEntry, type Catalog } from '../../../catalog/catalog';
import { PRICED_OPERATIONS } from '../../../catalog/schema';
import { openApiDocument } from '../openapi';

export function catalogRoutes(catalog: Catalog, info: { actorHost: string }): Router {
  const router = Router();
  router.get('/api/open/v1/catalog/models', (_req, res) => {
    res.json({ object: 'list', data: catalog.models().map(publicEntry) });
  });
  router.get('/api/open/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  router.get('/api/open/v1/capabilities', (_req, res) => {
    res.json({
      candidate_contract: true,
      notice: 'Readiness here is a candidate contract: it is not production enablement and does not replace real provider acceptance.',
      actor_host: info.actorHost,
      funding_pool: 'pool-3',
      routes: {
        chat: { path: '/api/open/v1/models/{id}/chat', ready: true },
      },
      models: catalog.models().map((model) => ({
        id: model.id,
        operations: Object.fromEntries(PRICED_OPERATIONS.map((op) => {
          const result = eligibility(model, op);
          return [op, result.eligible ? { ready: true } : { ready: false, reason: result.reason }];
        })),
      })),
    });
  });
  return router;
}
