// The composition root: builds the gateway's dependencies for either actor host.
// Embedded: actors, ledger and accounts in this process on the local database.
// Dapr: actors through the sidecar, accounts in the Dapr state store, ledger as its own app.

import { metrics } from '../../lib/metrics';
import { UpstreamHealth } from './routing/health';
import pino, { type Logger } from 'pino';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import { ImageTaskClient } from '../../actors/image-task/client';
import { ACTOR_CLASSES } from '../../actors/host/registry';
import { DaprActorInvoker } from '../../actors/runtime/dapr-invoker';
import { ActorOutboxClient } from '../../actors/runtime/outbox-client';
import { EmbeddedActorHost } from '../../actors/runtime/embedded-host';
import { loadCatalog } from '../../catalog/catalog';
import type { GatewayConfig } from '../../lib/config';
import type { EventEnvelope } from '../../lib/events';
import { DaprSidecar } from '../../lib/dapr-http';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { lockDataDir } from '../../lib/data-dir-lock';
import { deliverInProcess } from '../../lib/tracing';
import { createProviders } from '../../providers/registry';
import { CatalogReloader, checkProfilesServed } from './catalog-reload';
import { OAuthVerifier } from './auth/oauth';
import { parseDeliveryConfig } from './capabilities/gates';
import { LmdbLedgerStore } from '../ledger/lmdb-store';
import { ExportRowReader } from '../ledger/row-reader';
import { AccountShare } from './limits/account-share';
import { daprLedgerReader } from './ledger/dapr-reader';
import { storeLedgerReader } from './ledger/reader';
import { DaprStateKeyValueStore, LmdbKeyValueStore } from './accounts/kv';
import { AccountStore } from './accounts/store';
import { AccountOperator } from './accounts/operator';
import { AuditLog } from './accounts/audit';
import { RateAdmission } from './limits/admission';
import { AccountClient } from '../../actors/account/client';
import { JournalClient } from '../../actors/journal/client';
import type { LedgerReader } from './ledger/reader';
import type { GatewayDeps } from './app';
import { ImageService } from './images/use-case';
import { PendingSettlements } from './chat/pending-settlements';
import { LeasedFunds } from './funds/leased-funds';
import { OrderClient } from '../../actors/order/client';
import { OrderService } from './orders/use-case';
import type { ActorInvoker } from '../../actors/runtime/port';
import { SessionClient } from '../../actors/session/client';
import { WorkspaceIndexClient } from '../../actors/workspace-index/client';
import type { Drain } from './drain';

export interface Composition {
  deps: GatewayDeps;
  /** The embedded host and its stores, for tests and tools (undefined on Dapr). */
  embedded?: { host: EmbeddedActorHost; db: LocalDb; ledger: LmdbLedgerStore };
  /** Reloads the catalog file into `deps.catalog` (main arms it on SIGHUP and file changes). */
  catalogReloader: CatalogReloader;
  close(): Promise<void>;
}

const READINESS_CHECK = { timeoutMs: 2_000 };

/**
 * Whether the sidecar can place actor calls: its actor runtime runs and holds a live connection
 * to placement (daprd's metadata says `placement: disconnected` from the moment the stream to
 * placement breaks until the table is disseminated again; calls wait meanwhile).
 */
export function actorsPlaceable(metadata: unknown): boolean {
  const runtime = (metadata as { actorRuntime?: { runtimeStatus?: string; placement?: string } } | undefined)?.actorRuntime;
  return runtime?.runtimeStatus === 'RUNNING' && runtime.placement === 'placement: connected';
}

/**
 * How long a failed commit of the database keeps the embedded gateway unready. A failure that
 * lmdb-js reports with its errno or LMDB code (a full disk, an I/O error) stops the gateway at
 * once instead (openLocalDb's onWriteFailure below); this is for any other failure of a commit:
 * longer than a pending settle's retry interval, so one that keeps failing keeps the gateway
 * unready; once nothing fails for this long (or a commit succeeds), it is ready again.
 */
const STORAGE_FAILURE_UNREADY_MS = 10_000;

/** Readiness of the local database: a write commits, and no actor turn failed in the database just now. */
function databaseWritable(db: LocalDb, host: EmbeddedActorHost): boolean {
  db.root.transactionSync(() => db.root.putSync('__ping__', Date.now()));
  return !host.storageFailing(STORAGE_FAILURE_UNREADY_MS);
}

export async function compose(config: GatewayConfig, logger: Logger = pino({ level: config.logLevel }), drain?: Drain): Promise<Composition> {
  const catalog = loadCatalog(config.catalogFile);
  const providers = createProviders(catalog.file.providers);
  checkProfilesServed(catalog, providers);
  const catalogReloader = new CatalogReloader({ catalog, path: config.catalogFile, providers, logger });
  const closeProviders = () => Promise.allSettled([...providers.values()].map((p) => p.close()));
  // Each upstream's circuit as this instance sees it (docs/providers.md, "Routing").
  const health = new UpstreamHealth(config.routing.circuit);
  metrics.watchCircuits(() => health.states(providers.keys()));
  // Closed last but one: a settle still pending is given up to the drain timeout to land.
  const settlements = new PendingSettlements(logger);
  const settled = () => settlements.idle(config.drainTimeoutMs);
  const leasedFunds = (funds: FundsHoldClient) => (config.fundsLease.enabled ? new LeasedFunds(funds, { ttlMs: config.holdTtlMs, idleMs: config.fundsLease.idleMs, maxAmount: config.fundsLease.maxAmount }) : undefined);
  // After the settles: leases without carved holds are returned (what is left expires by itself).
  const returnLeases = (leases: LeasedFunds | undefined) => leases?.close(5000);
  // The model calls each account has running on this instance: chats, embeddings, image calls and session runs alike.
  const callsRunning = new AccountShare(config.accountCalls, 'calls_in_flight');
  const common = {
    catalog,
    providers,
    compatEnabled: config.compatEnabled,
    capabilityGates: { providers: new Set(providers.keys()), accepted: parseDeliveryConfig(config.capabilityDelivery) },
    oauth: config.oauth ? new OAuthVerifier(config.oauth) : undefined,
    logger,
    actorHost: config.actorHost,
    adminToken: config.adminToken,
    maxBodyBytes: config.maxBodyBytes,
    accountBodyBytes: config.accountBodyBytes,
    bodyBytesInFlight: config.bodyBytesInFlight,
    accountEventStreams: config.accountEventStreams,
    callsRunning,
    providerTimeoutMs: config.providerTimeoutMs,
    holdTtlMs: config.holdTtlMs,
    holdProgress: config.holdProgress,
    settlements,
    routing: { health, attemptTimeoutMs: config.routing.attemptTimeoutMs },
    upstreams: () => health.view(providers.keys()),
  };
  /** Rate admission by each caller's Account actor (stateless: one per actor invoker). */
  const rateAdmission = (actors: ActorInvoker) => new RateAdmission(new AccountClient(actors), (error) => logger.warn({ err: error }, 'a rate window token correction failed; the window keeps the bound'));
  const imageService = (actors: ActorInvoker, ledgerHas: (eventId: string) => Promise<boolean>) => new ImageService({
    callsRunning,
    limits: rateAdmission(actors),
    catalog,
    providers: new Map([...providers].flatMap(([name, p]) => (p.images ? [[name, p.images] as const] : []))),
    tasks: new ImageTaskClient(actors),
    ledgerHas,
    maxBodyBytes: config.maxBodyBytes,
    providerTimeoutMs: config.providerTimeoutMs,
    images: config.images,
    logger,
    drain,
    health,
  });

  /**
   * What both hosts build alike on their actor invoker: the funds and their leases, the outbox,
   * images, orders and sessions; and its close, before the host's own.
   */
  const onActors = (actors: ActorInvoker, ledgerHas: (eventId: string) => Promise<boolean>) => {
    const images = imageService(actors, ledgerHas);
    const funds = new FundsHoldClient(actors);
    const leases = leasedFunds(funds);
    const built = {
      funds,
      leases,
      outbox: new ActorOutboxClient(actors),
      images,
      orders: new OrderService({ orders: new OrderClient(actors), checkout: config.checkout, logger, daily: { accounts: new AccountClient(actors), perDay: config.ordersPerDay } }),
      sessions: { sessions: new SessionClient(actors), workspaces: new WorkspaceIndexClient(actors), runLeaseMs: config.sessions.runLeaseMs, pollMs: config.sessions.pollMs },
    };
    const close = async () => {
      await settled();
      await returnLeases(leases);
      await images.close();
      await closeProviders();
    };
    return { built, close };
  };

  /** The operator's use cases and the audit log; keys made before keys were listed are recorded at their first use. */
  const operatorOf = (actors: ActorInvoker, accounts: AccountStore, funds: FundsHoldClient, ledger: LedgerReader) => {
    const journals = new JournalClient(actors);
    const audit = new AuditLog(journals);
    const operator = new AccountOperator({ accounts, accountActors: new AccountClient(actors), journals, funds, ledger, audit });
    accounts.unlisted = (apiKey, record) => operator.recordUnlisted(apiKey, record);
    return { operator, audit, limits: rateAdmission(actors) };
  };

  if (config.actorHost === 'dapr') {
    const sidecar = new DaprSidecar(config.dapr.host, config.dapr.httpPort);
    const actors = new DaprActorInvoker(sidecar, { callTimeoutMs: config.dapr.actorCallTimeoutMs });
    // The ledger app answers whether it has appended an event (service invocation).
    const ledgerHas = async (eventId: string) => {
      const { status } = await sidecar.request('GET', `/v1.0/invoke/${config.dapr.ledgerAppId}/method/events/${encodeURIComponent(eventId)}`);
      if (status !== 200 && status !== 404) throw new Error(`ledger lookup failed with ${status}`);
      return status === 200;
    };
    const { built, close } = onActors(actors, ledgerHas);
    const ledger = daprLedgerReader(sidecar, config.dapr.ledgerAppId);
    const accounts = new AccountStore(new DaprStateKeyValueStore(sidecar), config.apiKeyCacheMs);
    const deps: GatewayDeps = {
      ...common,
      ...built,
      ...operatorOf(actors, accounts, built.funds, ledger),
      accounts,
      // Ready when what a call needs answers: the sidecar, the state store through it (accounts,
      // keys), actor calls can be placed, and the ledger app (its own readiness includes the Redis
      // its pub/sub runs on). Each check is bounded: a hanging dependency is a missing one.
      readiness: {
        sidecar: async () => (await sidecar.request('GET', '/v1.0/healthz', undefined, {}, READINESS_CHECK)).status === 204,
        statestore: async () => [200, 204].includes((await sidecar.request('GET', '/v1.0/state/statestore/__readyz__', undefined, {}, READINESS_CHECK)).status),
        actors: async () => actorsPlaceable((await sidecar.request('GET', '/v1.0/metadata', undefined, {}, READINESS_CHECK)).json),
        ledger: async () => (await sidecar.request('GET', `/v1.0/invoke/${config.dapr.ledgerAppId}/method/readyz`, undefined, {}, READINESS_CHECK)).status === 200,
      },
      ledger,
    };
    return { deps, catalogReloader, close: async () => {
      await close();
      await sidecar.close();
    } };
  }

  // One gateway per data directory: a second one would overwrite this one's actor state. Should
  // another process take the directory all the same (this one stalled past the lock's heartbeat),
  // this one stops at once rather than write beside it.
  const unlock = lockDataDir(config.dataDir, {
    onLost: (holder) => {
      logger.fatal({ dataDir: config.dataDir, holder }, 'the data directory was taken by another process: stopping');
      process.exit(1);
    },
  });
  let db: LocalDb;
  try {
    // A write the disk refused leaves lmdb-js's memory unsound (lib/local-db.ts): the gateway stops
    // at once, as a kill would stop it, and loses no more than a kill does (docs/durability.md).
    db = openLocalDb(config.dataDir, {
      fsync: config.fsync,
      onWriteFailure: (error) => {
        logger.fatal({ dataDir: config.dataDir, err: error }, 'the local database could not write (a full disk, a file size limit, an I/O error): stopping');
        process.exit(1);
      },
    });
  } catch (error) {
    unlock();
    throw error;
  }
  const ledger = new LmdbLedgerStore(db);
  // The embedded pub/sub: events reach the ledger inside the actor's own state commit (one LMDB
  // transaction), so a change of funds and its ledger entry can never be apart.
  // In the commit, the turn's events are written in its transaction (one span pair each when traced).
  const deliverInCommit = (events: readonly EventEnvelope[]) => {
    const writer = ledger.writer();
    for (const event of events) deliverInProcess(event, () => void writer.append(event));
    writer.finish();
  };
  const publish = async (event: EventEnvelope) => deliverInProcess(event, () => void ledger.appendSync(event));
  const host = new EmbeddedActorHost({ db, publish, deliverInCommit, idleMs: config.actorIdleMs, held: unlock.held });
  for (const cls of ACTOR_CLASSES) host.register(cls);
  await host.start();
  const { built, close } = onActors(host, (eventId) => ledger.has(eventId));
  const accounts = new AccountStore(new LmdbKeyValueStore(db.accounts), config.apiKeyCacheMs);
  // Exports read their rows in a child process: the ledger pages they read are mapped there, not here.
  const exportRows = new ExportRowReader(config.dataDir, ledger, { rssBoundMb: config.exportReaderRssMb, onFallback: (reason) => logger.warn({ reason }, 'an export read its rows in the gateway') });
  const ledgerReader = storeLedgerReader(ledger, exportRows);
  const deps: GatewayDeps = {
    ...common,
    ...built,
    ...operatorOf(host, accounts, built.funds, ledgerReader),
    accounts,
    readiness: { database: async () => databaseWritable(db, host) },
    ledger: ledgerReader,
  };
  return {
    deps,
    embedded: { host, db, ledger },
    catalogReloader,
    close: async () => {
      await close();
      await exportRows.close();
      await host.close();
      await db.close();
      unlock();
    },
  };
}
