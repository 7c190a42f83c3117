// Entry point of the gateway: `npm start` (embedded default) or the gateway app of the Dapr topology.

import '../../lib/node-version'; // first: stops on Node older than 24 with the way out
import { DRAIN_HARD_EXIT_AFTER_MS, loadConfig } from '../../lib/config';
import { createLogger } from '../../lib/logger';
import { startTracing, stopTracing } from '../../lib/tracing';
import { createGateway, listenGateway } from './app';
import { compose } from './compose';
import { Drain } from './drain';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('gateway', config.logLevel);
  startTracing('gateway', { logger });
  if (config.testMode) logger.warn('GATEWAY_TEST_MODE is on: test-only settings are accepted');
  const drain = new Drain();
  const composition = await compose(config, logger, drain);
  const gateway = createGateway({ ...composition.deps, drain });
  // The catalog reloads without a restart: on SIGHUP (which would otherwise end the process) and
  // when its file changes (docs/money.md, "Reloading the catalog").
  const reloader = composition.catalogReloader;
  process.on('SIGHUP', () => reloader.reload('signal'));
  reloader.watch();
  logger.info({ file: config.catalogFile, version: composition.deps.catalog.loaded.version }, 'catalog loaded');
  const server = listenGateway(gateway, config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info({ url: `http://${config.host}:${port}`, node: process.version, actorHost: config.actorHost, dataDir: config.actorHost === 'embedded' ? config.dataDir : undefined }, 'gateway listening');
  }, config.requestTimeoutMs);
  server.keepAliveTimeout = 65_000;
  // A port already taken (or not ours to bind): said plainly, and the process ends.
  server.once('error', (error) => {
    logger.fatal({ err: error, host: config.host, port: config.port }, 'the gateway cannot listen');
    process.exit(1);
  });
  const stop = () => {
    if (drain.draining) return;
    drain.begin();
    reloader.close();
    logger.info({ inflight: drain.size, drainTimeoutMs: config.drainTimeoutMs }, 'stopping: draining in-flight requests');
    server.close(() => void drain.idle().then(() => composition.close()).then(stopTracing).finally(() => process.exit(0)));
    // Kept-alive connections go as soon as their last response is done, not at the client's whim.
    setInterval(() => server.closeIdleConnections(), 50).unref();
    // Calls still running at the drain timeout are aborted: each settles or releases its own
    // hold before its response ends, and the server closes once they have.
    setTimeout(() => {
      logger.warn({ inflight: drain.size }, 'drain timeout: aborting the calls still in flight');
      drain.abortAll();
    }, config.drainTimeoutMs).unref();
    setTimeout(() => process.exit(1), config.drainTimeoutMs + DRAIN_HARD_EXIT_AFTER_MS).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
