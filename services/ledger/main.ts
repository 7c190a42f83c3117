// Entry point of the ledger app in the Dapr topology (Redis storage).

import '../../lib/node-version'; // first: stops on Node older than 24 with the way out
import { DEFAULT_PORTS, loadConfig } from '../../lib/config';
import { createLogger } from '../../lib/logger';
import { runMain, stopOnSignals } from '../../lib/app-main';
import { startTracing } from '../../lib/tracing';
import { createLedgerApp } from './app';
import { RedisLedgerStore } from './redis-store';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('ledger', config.logLevel);
  startTracing('ledger', { logger });
  const store = await RedisLedgerStore.connect(config.redisUrl);
  const app = createLedgerApp(store, { logger, ready: () => store.ping() });
  const port = config.appPort ?? DEFAULT_PORTS.ledger;
  const server = app.listen(port, '127.0.0.1', () => logger.info({ port }, 'ledger listening'));
  stopOnSignals(server, () => store.close());
}

runMain(main);
