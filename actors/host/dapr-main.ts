// Entry point of the actors app in the Dapr topology: registers every actor type with the
// @dapr/dapr actor runtime and serves daprd's calls to it (methods, reminders, deactivation,
// the actor config) on a bare node:http server (actor-server.ts); placement spreads the ids.

import '../../lib/node-version'; // first: stops on Node older than 24 with the way out
import { CommunicationProtocolEnum, DaprClient, LogLevel } from '@dapr/dapr';
import ActorRuntime from '@dapr/dapr/actors/runtime/ActorRuntime';
import { DEFAULT_PORTS, loadConfig } from '../../lib/config';
import type { EventEnvelope, Topic } from '../../lib/events';
import { DaprSidecar } from '../../lib/dapr-http';
import { createLogger } from '../../lib/logger';
import { runMain, stopOnSignals } from '../../lib/app-main';
import { startTracing } from '../../lib/tracing';
import { daprActorClass } from '../runtime/dapr-host';
import { idleScanMs } from '../runtime/kernel';
import { daprOutboxLedger } from '../runtime/dapr-outbox';
import { lingeringPublisher } from '../runtime/lingering-publisher';
import { startActorServer } from './actor-server';
import { ACTOR_CLASSES } from './registry';

export const PUBSUB_NAME = 'pubsub';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('actors', config.logLevel);
  startTracing('actors', { logger });
  const sidecar = new DaprSidecar(config.dapr.host, config.dapr.httpPort);
  // Events of one topic committed within the linger leave as one message (lingering-publisher.ts).
  const publish = lingeringPublisher((topic: Topic, events: readonly EventEnvelope[]) => sidecar.publishBatch(PUBSUB_NAME, topic, events), config.eventLingerMs);
  // The SDK's client is what its actors register reminders through.
  // Its actor options are the actor config daprd reads from this app (/dapr/config): an idle
  // activation is dropped after GATEWAY_ACTOR_IDLE_MS, as on the embedded host, not Dapr's hour.
  const client = new DaprClient({
    daprHost: config.dapr.host, daprPort: String(config.dapr.httpPort), communicationProtocol: CommunicationProtocolEnum.HTTP, logger: { level: LogLevel.Warn },
    actor: { actorIdleTimeout: `${config.actorIdleMs}ms`, actorScanInterval: `${idleScanMs(config.actorIdleMs)}ms` },
  });
  const runtime = ActorRuntime.getInstanceByDaprClient(client);
  // The outbox asks the ledger app (through this app's own sidecar) which events it has stored.
  const ledger = daprOutboxLedger(sidecar, config.dapr.ledgerAppId);
  for (const cls of ACTOR_CLASSES) runtime.registerActor(daprActorClass(cls, publish, sidecar, logger, ledger, config.outboxConfirmMs));
  const server = await startActorServer(runtime, '127.0.0.1', config.appPort ?? DEFAULT_PORTS.actors, logger);
  logger.info({ port: config.appPort, actorTypes: ACTOR_CLASSES.map((c) => c.actorType) }, 'actors app listening');
  stopOnSignals(server, () => Promise.allSettled([client.stop(), sidecar.close()]));
}

runMain(main);
