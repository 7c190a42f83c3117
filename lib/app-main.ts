// How an app of the topology (ledger, actors) runs and stops: its main's failure ends the process
// with the reason; SIGTERM or SIGINT closes its server (calls in flight finish first, idle
// connections close at once), then its resources, then exits; five seconds is the hard limit.

import type { Server } from 'node:http';
import { stopTracing } from './tracing';

const HARD_EXIT_MS = 5000;

export function runMain(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error instanceof Error ? error.stack ?? error.message : error);
    process.exit(1);
  });
}

/** On SIGTERM or SIGINT: the server closes, then `close`, then the trace export; then the process exits. */
export function stopOnSignals(server: Server, close: () => Promise<unknown>): void {
  const stop = () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    void closed.then(close).then(stopTracing).finally(() => process.exit(0));
    setTimeout(() => process.exit(0), HARD_EXIT_MS).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
