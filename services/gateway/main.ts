// Entry point of the gateway: `npm start` (embedded default) or the gateway app of the Dapr topology.

import { loadConfig } from '../../lib/config';
import { createLogger } from '../../lib/logger';
import { createGatewayApp } from './app';
import { compose } from './compose';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('gateway', config.logLevel);
  if (config.testMode) logger.warn('GATEWAY_TEST_MODE is on: test-only settings are accepted');
  const composition = await compose(config, logger);
  const app = createGatewayApp(composition.deps);
  const server = app.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info({ url: `http://${config.host}:${port}`, actorHost: config.actorHost, dataDir: config.actorHost === 'embedded' ? config.dataDir : undefined }, 'gateway listening');
  });
  server.keepAliveTimeout = 65_000;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping: draining in-flight requests');
    server.close(() => void composition.close().finally(() => process.exit(0)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
