// The local Dapr topology: Redis (unless one already answers), placement, scheduler, and the
// actors, ledger and gateway apps, each with its own daprd sidecar, all on 127.0.0.1.
// Ports: topology/ports.ts; command lines: topology/commands.ts; operations: docs/dapr-runtime.md.

import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot, resolveDaprBinaries } from './binaries';
import { daprdCommand, placementCommand, redisCommand, schedulerCommand, sidecarGoEnv, type Command } from './commands';
import { CrashRestarts } from './crash-restarts';
import { ManagedProcess, type ExitStatus } from './managed-process';
import { appInstances, appPorts, assertPortsFree, controlPlanePorts, planPorts, type AppName, type SidecarPorts } from './ports';
import { actorRuntimeProbe, allOf, httpProbe, redisNeedsStarting, redisProbe, startupError, tcpProbe, waitUntil, type Probe } from './readiness';
import { writeResources } from './resources';
import { RunRecord } from './run-record';
import { DEFAULT_RESTART_POLICY, type RestartPolicy } from './restart-policy';
import { ACTOR_CLASSES } from '../actors/host/registry';
import { gatewayStopGraceMs } from '../lib/config';
import { NODE_FLAGS } from '../lib/node-flags';

export { resolveDaprBinaries } from './binaries';

/** How to run one app instead of its real entrypoint (fixtures), or `false` to leave it (and its sidecar) out. */
export interface AppOverride {
  command: string;
  args: string[];
}

export interface TopologyOptions {
  /** 0 (default): the fixed default ports; B > 0: every port is B + a fixed offset. */
  basePort?: number;
  dataDir: string;
  /** Public port of the first gateway instance (default: B, or PORT, or 8080). */
  gatewayPort?: number;
  gatewayInstances?: number;
  /** Passed to every app (after the runner's defaults, before its port wiring). */
  env?: Record<string, string>;
  log?: (line: string) => void;
  redisPort?: number;
  /** Actor types the actors sidecar must report before the topology counts as up. */
  actorTypes?: string[];
  /** Directory of daprd, placement and scheduler; default: resolveDaprBinaries(). */
  daprBinDir?: string;
  apps?: Partial<Record<AppName, AppOverride | false>>;
  /** OTLP/gRPC endpoint (host:port) the sidecars export traces to; default DAPR_OTEL_ENDPOINT, or none. */
  otelEndpoint?: string;
  startupTimeoutMs?: number;
  stopTimeoutMs?: number;
  /**
   * Called when a process of a running topology exits without stop/kill/restart asking it to;
   * `restartInMs` is set when restartOnCrash will start it again after that delay.
   */
  onUnexpectedExit?: (name: string, status: ExitStatus, lastOutput: string, restartInMs?: number) => void;
  /**
   * Start a crashed process again after a backoff while the others keep serving (true: the
   * default policy, 0.5 s doubling to 30 s). Off by default: a test sees the crash and decides.
   */
  restartOnCrash?: boolean | RestartPolicy;
  /**
   * Default true: every child gets SIGKILL when the process running the topology dies, even by
   * SIGKILL (orphan-guard.ts). false only for tests that show what the run record cleans up.
   */
  childrenDieWithSupervisor?: boolean;
}

export type ProcessName =
  | 'gateway' | `gateway-${number}` | 'actors' | 'ledger'
  | 'daprd-gateway' | `daprd-gateway-${number}` | 'daprd-actors' | 'daprd-ledger'
  | 'placement' | 'scheduler' | 'redis';

export interface RunningTopology {
  gatewayUrls: string[];
  redisUrl: string;
  ports: Record<string, number>;
  /** Process names in start order (what kill and restart accept). */
  processes: string[];
  stop(): Promise<void>;
  /** Signals one process (default SIGKILL) and waits for it to exit (stop signals excepted). */
  kill(app: ProcessName, signal?: NodeJS.Signals): Promise<void>;
  /** Stops one process if it runs, starts it again and waits until it is ready. */
  restart(app: ProcessName): Promise<void>;
  /** The operating-system process id of a running process (for measurements), else undefined. */
  pid(name: ProcessName): number | undefined;
}

/**
 * Stop order (start order is the reverse, the first three tiers together): the gateway apps stop
 * taking traffic and drain their calls in flight (each gets its GATEWAY_DRAIN_TIMEOUT_MS and its
 * hard-exit margin before SIGKILL, so a cut stream is charged before it exits); the sidecars drain (daprd finishes in-flight actor calls, deactivates actors
 * through the app, ends its subscriptions); then the actors and ledger apps, which the draining
 * sidecars still call; then placement and scheduler; then Redis.
 */
enum Tier {
  Edge = 0,
  Sidecar = 1,
  Backend = 2,
  ControlPlane = 3,
  Redis = 4,
}
const STOP_ORDER = [Tier.Edge, Tier.Sidecar, Tier.Backend, Tier.ControlPlane, Tier.Redis];

interface Entry {
  proc: ManagedProcess;
  tier: Tier;
  /** Waits until the process is usable. */
  ready: (timeoutMs: number) => Promise<void>;
}

const DEFAULT_ACTOR_TYPES = ACTOR_CLASSES.map((cls) => cls.actorType);
/** The built entry point of each app (also what docker-compose.yml, Kubernetes and dapr.yaml run). */
export const APP_ENTRYPOINTS: Record<AppName, string> = {
  actors: 'dist/actors/host/dapr-main.js',
  ledger: 'dist/services/ledger/main.js',
  gateway: 'dist/services/gateway/main.js',
};

export async function startTopology(options: TopologyOptions): Promise<RunningTopology> {
  const root = repoRoot();
  // Checked before anything starts: a bad value stops the run with the variable named.
  const goEnv = sidecarGoEnv();
  const dataDir = resolve(options.dataDir);
  const logDir = join(dataDir, 'logs');
  for (const dir of [logDir, join(dataDir, 'run'), join(dataDir, 'redis'), join(dataDir, 'scheduler'), join(dataDir, 'apps')]) mkdirSync(dir, { recursive: true });
  const startupTimeoutMs = options.startupTimeoutMs ?? 60_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  // A gateway drains its calls in flight before it exits: SIGKILL waits for the drain it was given.
  const gatewayStopMs = Math.max(stopTimeoutMs, gatewayStopGraceMs({ ...process.env, ...options.env }));
  const stopTimeoutOf = (e: Entry) => (e.tier === Tier.Edge ? gatewayStopMs : stopTimeoutMs);
  const log = options.log;
  // First, before the ports are checked: what a dead run on this data directory left is stopped.
  const runRecord = await RunRecord.claim(join(dataDir, 'run'), log);
  const plan = planPorts({
    basePort: options.basePort ?? 0,
    gatewayPort: options.gatewayPort,
    gatewayInstances: options.gatewayInstances ?? 1,
    redisPort: options.redisPort,
    env: process.env,
  });
  const appSpec = (app: AppName): AppOverride | false =>
    options.apps?.[app] ?? { command: process.execPath, args: [...NODE_FLAGS, join(root, APP_ENTRYPOINTS[app])] };
  const instances = appInstances(plan).filter((i) => appSpec(i.app) !== false);
  const missing = [...new Set(instances.map((i) => i.app))].filter((app) => !options.apps?.[app] && !existsSync(join(root, APP_ENTRYPOINTS[app])));
  if (missing.length > 0) {
    throw new Error(`app entrypoints not built: ${missing.map((a) => APP_ENTRYPOINTS[a]).join(', ')} (run npm run build)`);
  }
  const ports: Record<string, number> = controlPlanePorts(plan);
  for (const i of instances) Object.assign(ports, appPorts(i.name, i.ports));

  const ownRedis = await redisNeedsStarting(plan.redis);
  await assertPortsFree(Object.fromEntries(Object.entries(ports).filter(([name]) => ownRedis || name !== 'redis')));

  const binDir = options.daprBinDir ?? (await resolveDaprBinaries({ log: log ?? ((l) => process.stderr.write(l + '\n')) }));
  const resourcesDir = writeResources(root, join(dataDir, 'run', 'resources'), plan.redis);
  const configFile = join(root, 'dapr', 'config.yaml');
  const entries = new Map<string, Entry>();
  const processOf = (name: string, cmd: Command, env: NodeJS.ProcessEnv, cwd = root) =>
    new ManagedProcess({ name, command: cmd.command, args: cmd.args, env, cwd, logDir, log, dieWithParent: options.childrenDieWithSupervisor });
  const add = (name: string, tier: Tier, proc: ManagedProcess, probe: Probe, what: string, deps: ManagedProcess[] = []) => {
    entries.set(name, {
      proc,
      tier,
      ready: (timeoutMs) => waitUntil(what, probe, { timeoutMs, processes: [...deps, proc] }),
    });
  };

  const sidecarEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DAPR_HOST_IP: '127.0.0.1',
    // dapr/config.yaml reads it; empty means "no trace exporter" (spans are still propagated).
    DAPR_OTEL_ENDPOINT: options.otelEndpoint ?? process.env.DAPR_OTEL_ENDPOINT ?? '',
    ...goEnv,
  };
  const redisUrl = `redis://127.0.0.1:${plan.redis}`;

  if (ownRedis) {
    add('redis', Tier.Redis, processOf('redis', redisCommand(plan.redis, join(dataDir, 'redis')), { PATH: process.env.PATH }), redisProbe(plan.redis), `Redis PING on port ${plan.redis}`);
  }
  add('placement', Tier.ControlPlane, processOf('placement', placementCommand(binDir, plan), sidecarEnv),
    httpProbe(`http://127.0.0.1:${plan.placementHealthz}/healthz`), 'placement healthz');
  add('scheduler', Tier.ControlPlane, processOf('scheduler', schedulerCommand(binDir, plan, join(dataDir, 'scheduler')), sidecarEnv),
    httpProbe(`http://127.0.0.1:${plan.schedulerHealthz}/healthz`), 'scheduler healthz');

  const appEnv = (app: AppName, name: string, p: SidecarPorts): NodeJS.ProcessEnv => ({
    ...process.env,
    GATEWAY_DATA_DIR: join(dataDir, 'apps', name),
    ...options.env,
    APP_ID: app,
    DAPR_HOST: '127.0.0.1',
    DAPR_HTTP_PORT: String(p.http),
    DAPR_GRPC_PORT: String(p.grpc),
    REDIS_URL: redisUrl,
    ...(app === 'gateway'
      ? { PORT: String(p.app), HOST: '127.0.0.1', GATEWAY_ACTOR_HOST: 'dapr', LEDGER_APP_ID: 'ledger' }
      : { APP_PORT: String(p.app), DAPR_SERVER_PORT: String(p.app) }),
  });
  const actorTypes = options.actorTypes ?? DEFAULT_ACTOR_TYPES;
  for (const { app, name, ports: p } of instances) {
    const spec = appSpec(app);
    if (spec === false) continue;
    const appProc = processOf(name, spec, appEnv(app, name, p));
    // Every gateway instance shares the app id `gateway`: replicas of one app, so they share its
    // state-store key prefix (account and API-key records).
    const sidecar = processOf(`daprd-${name}`, daprdCommand({ binDir, appId: app, ports: p, plan, resourcesDir, configFile }), sidecarEnv);
    const appProbe = app === 'gateway' ? httpProbe(`http://127.0.0.1:${p.app}/healthz`) : tcpProbe(p.app);
    add(name, app === 'gateway' ? Tier.Edge : Tier.Backend, appProc, appProbe, app === 'gateway' ? `${name} GET /healthz` : `${name} listening on port ${p.app}`);
    const sidecarProbes: Probe[] = [httpProbe(`http://127.0.0.1:${p.http}/v1.0/healthz`)];
    if (app === 'actors') sidecarProbes.push(actorRuntimeProbe(p.http, actorTypes));
    // A gateway's first calls go to the ledger through its sidecar: up only once that way works
    // (name resolution can lag its sidecar's health by a moment; an account's first call then failed).
    const viaLedger = app === 'gateway' && appSpec('ledger') !== false;
    if (viaLedger) sidecarProbes.push(httpProbe(`http://127.0.0.1:${p.http}/v1.0/invoke/ledger/method/healthz`));
    add(`daprd-${name}`, Tier.Sidecar, sidecar, allOf(sidecarProbes), app === 'actors' ? `daprd-actors healthz and actor types ${actorTypes.join(', ')}` : `daprd-${name} healthz${viaLedger ? ' and the ledger through it' : ''}`, [appProc]);
  }

  let up = false;
  let stopping = false;
  const restartPolicy = options.restartOnCrash === true ? DEFAULT_RESTART_POLICY : options.restartOnCrash || undefined;
  const crashRestarts = restartPolicy && new CrashRestarts(restartPolicy, (name) => relaunchAfterCrash(name));
  const launch = (name: string, e: Entry) => {
    e.proc.start();
    const pid = e.proc.pid;
    runRecord.started(name, pid);
    const startedAt = Date.now();
    void e.proc.exited.then((status) => {
      runRecord.exited(name, pid);
      if (!up || stopping || e.proc.exitWasRequested) return;
      const restartInMs = crashRestarts?.schedule(name, Date.now() - startedAt);
      options.onUnexpectedExit?.(name, status, e.proc.tail(), restartInMs);
    });
  };
  // The others keep running: a restarted app is found again by its sidecar (same port), a
  // restarted sidecar or control-plane process by whoever connects to it (they retry).
  const relaunchAfterCrash = (name: string) => {
    const e = entries.get(name);
    if (!e || stopping || e.proc.running) return;
    launch(name, e);
    log?.(`[supervisor] ${name} restarted (pid ${e.proc.pid})`);
    e.ready(startupTimeoutMs).then(
      () => log?.(`[supervisor] ${name} is ready again`),
      (err: unknown) => log?.(`[supervisor] ${name} not ready after its restart: ${(err as Error).message}`),
    );
  };
  const startTier = async (tiers: Tier[]) => {
    const batch = [...entries].filter(([, e]) => tiers.includes(e.tier));
    for (const [name, e] of batch) launch(name, e);
    await Promise.all(batch.map(([, e]) => e.ready(startupTimeoutMs)));
  };
  const stopAll = async () => {
    stopping = true;
    crashRestarts?.close();
    for (const tier of STOP_ORDER) {
      await Promise.all([...entries.values()].filter((e) => e.tier === tier).map((e) => e.proc.stop(stopTimeoutOf(e))));
    }
    runRecord.release();
  };

  const started = Date.now();
  try {
    await startTier([Tier.Redis]);
    await startTier([Tier.ControlPlane]);
    await startTier([Tier.Edge, Tier.Sidecar, Tier.Backend]);
  } catch (err) {
    await stopAll();
    throw startupError(err);
  }
  up = true;
  log?.(`[topology] up in ${Date.now() - started} ms`);

  const entry = (name: string): Entry => {
    const e = entries.get(name);
    if (!e) throw new Error(`no process named ${name} in this topology (have: ${[...entries.keys()].join(', ')})`);
    return e;
  };
  return {
    gatewayUrls: instances.filter((i) => i.app === 'gateway').map((i) => `http://127.0.0.1:${i.ports.app}`),
    redisUrl,
    ports,
    processes: [...entries.keys()],
    stop: stopAll,
    async kill(name, signal = 'SIGKILL') {
      const { proc } = entry(name);
      crashRestarts?.cancel(name);
      if (signal === 'SIGSTOP' || signal === 'SIGCONT' || signal === 'SIGTSTP') proc.killGroupNow(signal);
      else await proc.kill(signal);
    },
    pid(name) {
      return entry(name).proc.pid;
    },
    async restart(name) {
      const e = entry(name);
      crashRestarts?.cancel(name);
      await e.proc.stop(stopTimeoutOf(e));
      launch(name, e);
      try {
        await e.ready(startupTimeoutMs);
      } catch (err) {
        throw startupError(err);
      }
    },
  };
}
