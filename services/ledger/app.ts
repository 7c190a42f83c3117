// The ledger service as a Dapr app: subscriptions for the billing and usage topics, and the
// reads the gateway makes through service invocation.

import express from 'express';
import type { Logger } from 'pino';
import { TOPICS } from '../../lib/events';
import type { LedgerStore } from './entries';
import { createEventHandler } from './subscriber';

export const PUBSUB_NAME = 'pubsub';

export function createLedgerApp(store: LedgerStore, options: { logger?: Logger; ready?: () => Promise<boolean> } = {}) {
  const app = express();
  const handleEvent = createEventHandler(store, options.logger);
  app.use(express.json({ limit: '1mb', type: ['application/json', 'application/cloudevents+json'] }));

  app.get('/dapr/subscribe', (_req, res) => {
    res.json(TOPICS.map((topic) => ({ pubsubname: PUBSUB_NAME, topic, route: `/events/${topic}` })));
  });

  app.post('/events/:topic', async (req, res) => {
    // Dapr wraps our envelope in a CloudEvent; its `data` is the envelope.
    const body = req.body as { data?: unknown } | undefined;
    const status = await handleEvent(body && typeof body === 'object' && 'data' in body ? body.data : body);
    res.status(200).json({ status });
  });

  // Whether an event has been appended: the acknowledgment a late image artifact waits for.
  app.get('/events/:eventId', async (req, res) => {
    const found = await store.has(req.params.eventId);
    res.status(found ? 200 : 404).json({ id: req.params.eventId, appended: found });
  });

  app.get('/accounts/:accountId/pools/:pool', async (req, res) => {
    res.json(await store.account(req.params.accountId, req.params.pool));
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/readyz', async (_req, res) => {
    const ready = options.ready ? await options.ready().catch(() => false) : true;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready' });
  });

  return app;
}
