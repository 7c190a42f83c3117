// Entry point of the actors app in the Dapr topology: registers every actor type with the
// @dapr/dapr server; daprd calls the methods and reminders, placement spreads the ids.

import { CommunicationProtocolEnum, DaprServer, LogLevel } from '@dapr/dapr';
import pino from 'pino';
import { loadConfig } from '../../lib/config';
import { DaprSidecar } from '../../lib/dapr-http';
import { daprActorClass } from '../runtime/dapr-host';
import { ACTOR_CLASSES } from './registry';

export const PUBSUB_NAME = 'pubsub';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: config.logLevel, base: { service: 'actors' } });
  const sidecar = new DaprSidecar(config.dapr.host, config.dapr.httpPort);
  const publish = (event: { topic: string; traceparent?: string }) => sidecar.publish(PUBSUB_NAME, event.topic, event, event.traceparent);
  const server = new DaprServer({
    serverHost: '127.0.0.1',
    serverPort: String(config.appPort ?? 3101),
    communicationProtocol: CommunicationProtocolEnum.HTTP,
    clientOptions: { daprHost: config.dapr.host, daprPort: String(config.dapr.httpPort), communicationProtocol: CommunicationProtocolEnum.HTTP },
    logger: { level: LogLevel.Warn },
  });
  await server.actor.init();
  for (const cls of ACTOR_CLASSES) server.actor.registerActor(daprActorClass(cls, publish));
  await server.start();
  logger.info({ port: config.appPort, actorTypes: ACTOR_CLASSES.map((c) => c.actorType) }, 'actors app listening');
  const stop = () => {
    void server.stop().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
