// The two actor hosts an actor contract runs on, with the real ledger behind each:
// the embedded host on a real local database (restart = host and database closed and opened
// again), and the actors app behind a real daprd sidecar (restart = the actors app and its sidecar).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACTOR_CLASSES } from '../../actors/host/registry';
import { DaprActorInvoker } from '../../actors/runtime/dapr-invoker';
import { EmbeddedActorHost } from '../../actors/runtime/embedded-host';
import type { ActorInvoker } from '../../actors/runtime/port';
import { DaprSidecar } from '../../lib/dapr-http';
import type { EventEnvelope } from '../../lib/events';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import type { AccountLedgerView } from '../../services/ledger/entries';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { exportItems, readPage, type ConsolePage } from '../../services/ledger/console';
import { exportStream } from '../../services/ledger/export-format';
import { startTopology, type ProcessName, type RunningTopology } from '../../topology/topology';
import { ADMIN_TOKEN } from './processes';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ActorHostUnderTest {
  readonly invoker: ActorInvoker;
  /** Restarts the host; returns the invoker to use after. */
  restart(): Promise<ActorInvoker>;
  /**
   * Kills the host (the process; on Dapr the actors app, with its sidecar when `sidecar`), keeps
   * it down for `ms`, starts it again; returns the invoker to use after.
   */
  outage(ms: number, options?: { sidecar?: boolean }): Promise<ActorInvoker>;
  /** The ledger's view of an account's pool-3 (after its events were delivered). */
  ledger(accountId: string): Promise<AccountLedgerView>;
  ledgerHas(eventId: string): Promise<boolean>;
  /**
   * An account's pool-3 usage as the console shows it: the first page (size 100) and both exports,
   * by the console implementation the deployment runs (embedded: the gateway's own, on this
   * LMDB store; Dapr: the ledger app's, by service invocation through the gateway's sidecar).
   */
  consoleUsage(accountId: string): Promise<ConsoleUsage>;
  /** The Prometheus exposition of the process running the actors (Dapr: the actors app). */
  metrics?(): Promise<string>;
  close(): Promise<void>;
}

export interface ConsoleUsage {
  page: ConsolePage;
  csv: string;
  jsonl: string;
}

async function text(stream: AsyncIterable<Buffer | string>): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk.toString();
  return out;
}

/**
 * deliverInCommit (default true): the ledger is written in each turn's own commit, as `npm start`
 * does; false: events go through the outbox and the publisher instead. now: the actors' clock.
 */
export async function startEmbeddedActors(prefix: string, options: { deliverInCommit?: boolean; now?: () => number } = {}): Promise<ActorHostUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let db: LocalDb;
  let host: EmbeddedActorHost;
  let ledger: LmdbLedgerStore;
  const open = async () => {
    db = openLocalDb(dir);
    ledger = new LmdbLedgerStore(db);
    host = new EmbeddedActorHost({
      db,
      publish: async (event) => void ledger.appendSync(event),
      ...(options.deliverInCommit === false ? {} : { deliverInCommit: (events: readonly EventEnvelope[]) => void ledger.appendInTransaction(events) }),
      ...(options.now ? { now: options.now } : {}),
    });
    for (const cls of ACTOR_CLASSES) host.register(cls);
    await host.start();
    return host;
  };
  const close = async () => {
    await host.close();
    await db.close();
  };
  await open();
  return {
    get invoker() {
      return host;
    },
    restart: async () => {
      await close();
      return open();
    },
    outage: async (ms) => {
      await close();
      await sleep(ms);
      return open();
    },
    ledger: (accountId) => ledger.account(accountId, 'pool-3'),
    ledgerHas: (eventId) => ledger.has(eventId),
    consoleUsage: async (accountId) => ({
      page: await readPage(ledger, 'usage', accountId, 'pool-3', { page: 1, size: 100 }),
      csv: await text(exportStream('usage', 'csv', exportItems(ledger, 'usage', accountId, 'pool-3', {}))),
      jsonl: await text(exportStream('usage', 'jsonl', exportItems(ledger, 'usage', accountId, 'pool-3', {}))),
    }),
    close,
  };
}

/** restart: the processes a restart restarts, in order (default: the actors app and its sidecar). */
/** env: added to every app's environment (e.g. test-only fault points). */
export async function startDaprActors(prefix: string, basePort: number, options: { restart?: ProcessName[]; env?: Record<string, string> } = {}): Promise<ActorHostUnderTest & { topology: RunningTopology }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const topology = await startTopology({ basePort, dataDir: join(dir, 'topology'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', ...options.env } });
  const sidecar = new DaprSidecar('127.0.0.1', topology.ports['daprd-gateway-http']);
  const ledger = await RedisLedgerStore.connect(topology.redisUrl);
  const invoker = new DaprActorInvoker(sidecar);
  return {
    topology,
    invoker,
    restart: async () => {
      for (const name of options.restart ?? ['actors', 'daprd-actors']) await topology.restart(name);
      return invoker;
    },
    outage: async (ms, outageOptions = {}) => {
      const down: ProcessName[] = outageOptions.sidecar ? ['actors', 'daprd-actors'] : ['actors'];
      for (const name of down) await topology.kill(name);
      await sleep(ms);
      for (const name of down) await topology.restart(name);
      return invoker;
    },
    ledger: (accountId) => ledger.account(accountId, 'pool-3'),
    ledgerHas: (eventId) => ledger.has(eventId),
    consoleUsage: async (accountId) => {
      const method = (path: string) => `http://127.0.0.1:${topology.ports['daprd-gateway-http']}/v1.0/invoke/ledger/method/accounts/${encodeURIComponent(accountId)}/pools/pool-3/usage/${path}`;
      const read = async (path: string) => {
        const response = await fetch(method(path));
        if (response.status !== 200) throw new Error(`ledger ${path}: ${response.status} ${await response.text()}`);
        return response.text();
      };
      return { page: JSON.parse(await read('page?page=1&size=100')) as ConsolePage, csv: await read('export?format=csv'), jsonl: await read('export?format=jsonl') };
    },
    metrics: async () => (await fetch(`http://127.0.0.1:${topology.ports.actors}/metrics`)).text(),
    close: async () => {
      await sidecar.close();
      await ledger.close();
      await topology.stop();
    },
  };
}
