// The composition root: builds the gateway's dependencies for either actor host.
// Embedded: actors, ledger and accounts in this process on the local database.
// Dapr: actors through the sidecar, accounts in the Dapr state store, ledger as its own app.

import pino, { type Logger } from 'pino';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import { ACTOR_CLASSES } from '../../actors/host/registry';
import { DaprActorInvoker } from '../../actors/runtime/dapr-invoker';
import { EmbeddedActorHost } from '../../actors/runtime/embedded-host';
import { loadCatalog } from '../../catalog/catalog';
import type { GatewayConfig } from '../../lib/config';
import type { EventEnvelope } from '../../lib/events';
import { DaprSidecar } from '../../lib/dapr-http';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { createProviders } from '../../providers/registry';
import { LmdbLedgerStore } from '../ledger/lmdb-store';
import { DaprStateKeyValueStore, LmdbKeyValueStore } from './accounts/kv';
import { AccountStore } from './accounts/store';
import type { GatewayDeps } from './app';

export interface Composition {
  deps: GatewayDeps;
  /** The embedded host and its stores, for tests and tools (undefined on Dapr). */
  embedded?: { host: EmbeddedActorHost; db: LocalDb; ledger: LmdbLedgerStore };
  close(): Promise<void>;
}

export async function compose(config: GatewayConfig, logger: Logger = pino({ level: config.logLevel })): Promise<Composition> {
  const catalog = loadCatalog(config.catalogFile);
  const providers = createProviders(catalog.file.providers);
  const closeProviders = () => Promise.allSettled([...providers.values()].map((p) => p.close?.()));
  const common = {
    catalog,
    providers,
    logger,
    actorHost: config.actorHost,
    adminToken: config.adminToken,
    maxBodyBytes: config.maxBodyBytes,
    providerTimeoutMs: config.providerTimeoutMs,
    holdTtlMs: config.holdTtlMs,
  };

  if (config.actorHost === 'dapr') {
    const sidecar = new DaprSidecar(config.dapr.host, config.dapr.httpPort);
    const deps: GatewayDeps = {
      ...common,
      funds: new FundsHoldClient(new DaprActorInvoker(sidecar)),
      accounts: new AccountStore(new DaprStateKeyValueStore(sidecar)),
      readiness: { sidecar: async () => (await sidecar.request('GET', '/v1.0/healthz')).status === 204 },
    };
    return { deps, close: async () => {
      await closeProviders();
      await sidecar.close();
    } };
  }

  const db = openLocalDb(config.dataDir, { fsync: config.fsync });
  const ledger = new LmdbLedgerStore(db);
  // The embedded pub/sub: events reach the ledger inside the actor's own state commit (one LMDB
  // transaction), so a change of funds and its ledger entry can never be apart.
  const deliver = (event: EventEnvelope) => void ledger.appendSync(event);
  const host = new EmbeddedActorHost({ db, publish: async (event) => deliver(event), deliverInCommit: deliver });
  for (const cls of ACTOR_CLASSES) host.register(cls);
  await host.start();
  const deps: GatewayDeps = {
    ...common,
    funds: new FundsHoldClient(host),
    accounts: new AccountStore(new LmdbKeyValueStore(db.accounts)),
    readiness: { database: async () => (db.root.get('__ping__'), true) },
  };
  return {
    deps,
    embedded: { host, db, ledger },
    close: async () => {
      await closeProviders();
      await host.close();
      await db.close();
    },
  };
}
