// Entry point of the actors app in the Dapr topology: registers every actor type with the
// @dapr/dapr server; daprd calls the methods and reminders, placement spreads the ids.

import '../../lib/node-version'; // first: stops on Node older than 24 with the way out
import { CommunicationProtocolEnum, DaprServer, LogLevel } from '@dapr/dapr';
import ActorRuntime from '@dapr/dapr/actors/runtime/ActorRuntime';
import express from 'express';
import { loadConfig } from '../../lib/config';
import type { EventEnvelope } from '../../lib/events';
import { DaprSidecar } from '../../lib/dapr-http';
import { createLogger } from '../../lib/logger';
import { serveMetrics } from '../../lib/metrics';
import { requestContext, startTracing, stopTracing } from '../../lib/tracing';
import { daprActorClass, decodeReminderData, REMIND_METHOD } from '../runtime/dapr-host';
import { daprOutboxLedger } from '../runtime/dapr-outbox';
import { ACTOR_CLASSES } from './registry';

export const PUBSUB_NAME = 'pubsub';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('actors', config.logLevel);
  if (startTracing('actors')) logger.info('trace export on (OTLP)');
  const sidecar = new DaprSidecar(config.dapr.host, config.dapr.httpPort);
  const publish = (event: EventEnvelope) => sidecar.publish(PUBSUB_NAME, event);
  // Reminders are routed here, before the SDK's own route, because the SDK hands the actor
  // neither the reminder's name nor intact data. daprd holds the actor's turn while it calls.
  const app = express();
  let server: DaprServer | undefined;
  // Before every route, the SDK's included: daprd forwards the caller's traceparent.
  app.use(requestContext());
  app.get('/metrics', serveMetrics);
  app.put('/actors/:type/:id/method/remind/:name', express.json({ type: () => true, limit: '1mb' }), async (req, res) => {
    const { type, id, name } = req.params;
    try {
      const runtime = ActorRuntime.getInstanceByDaprClient((server as DaprServer).client);
      const payload = { name, data: decodeReminderData((req.body as { data?: unknown } | undefined)?.data) };
      await runtime.invoke(type, id, REMIND_METHOD, Buffer.from(JSON.stringify(payload)));
      res.status(200).end();
    } catch (error) {
      logger.error({ err: (error as Error).message, type, id, name }, 'reminder failed');
      res.status(500).end();
    }
  });
  server = new DaprServer({
    serverHttp: app,
    serverHost: '127.0.0.1',
    serverPort: String(config.appPort ?? 3101),
    communicationProtocol: CommunicationProtocolEnum.HTTP,
    clientOptions: { daprHost: config.dapr.host, daprPort: String(config.dapr.httpPort), communicationProtocol: CommunicationProtocolEnum.HTTP },
    logger: { level: LogLevel.Warn },
  });
  await server.actor.init();
  // The outbox asks the ledger app (through this app's own sidecar) which events it has stored.
  const ledger = daprOutboxLedger(sidecar, config.dapr.ledgerAppId);
  for (const cls of ACTOR_CLASSES) server.actor.registerActor(daprActorClass(cls, publish, sidecar, logger, ledger, config.outboxConfirmMs));
  await server.start();
  logger.info({ port: config.appPort, actorTypes: ACTOR_CLASSES.map((c) => c.actorType) }, 'actors app listening');
  const stop = () => {
    void server.stop().then(stopTracing).finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
