// The prototype sessions suite against the real embedded process (`npm start`'s entry point):
// runs, their holds and the Session actors all live in that one process, so its kill -9 takes
// the actors down too, and the lease reminder fails the run when the process starts again.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { sessionsSuite } from '../contract/sessions.suite';
import { writeTestCatalog } from '../support/catalog';
import { startGateway, type GatewayProcess } from '../support/processes';
import { startUpstream } from '../support/upstream';

jest.setTimeout(60_000);

sessionsSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-sessions-'));
  const upstream = await startUpstream();
  const env = {
    GATEWAY_DATA_DIR: join(dir, 'data'),
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
    GATEWAY_CAPABILITY_DELIVERY: 'agent_run:session_events',
    GATEWAY_SESSION_RUN_LEASE_MS: '1500',
    GATEWAY_SESSION_POLL_MS: '100',
    // Far longer than the lease: a killed run's hold is released by the lease, not by its expiry.
    GATEWAY_HOLD_TTL_MS: '600000',
    GATEWAY_DRAIN_TIMEOUT_MS: '10000',
  };
  let gateway: GatewayProcess = await startGateway(env);
  let db: LocalDb | undefined;
  const deployment = {
    urls: [gateway.url],
    killGateway: async (whileDown?: () => Promise<void>) => {
      await gateway.kill();
      await whileDown?.();
      gateway = await startGateway(env, gateway.port);
    },
    restartGateway: async () => {
      await gateway.stop();
      gateway = await startGateway(env, gateway.port);
    },
    ledgerBalance: async (accountId: string) => {
      db ??= openLocalDb(env.GATEWAY_DATA_DIR);
      return (await new LmdbLedgerStore(db).account(accountId, 'pool-3')).balance;
    },
    close: async () => {
      await gateway.stop();
      await db?.close();
      await upstream.close();
    },
  };
  return deployment;
});
