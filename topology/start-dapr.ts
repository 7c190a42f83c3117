// `npm run start:dapr`: Redis (if none answers), placement, scheduler and every app with its daprd
// sidecar on 127.0.0.1; a process that crashes is started again after a backoff while the others
// keep serving; Ctrl-C or SIGTERM stops them all. Settings (environment):
//   PORT                    public port of the gateway (default 8080)
//   GATEWAY_DATA_DIR        topology data: Redis AOF, scheduler etcd, logs (default ./data/dapr)
//   GATEWAY_DAPR_BASE_PORT  run every port at base + offset instead of the defaults
//   DAPR_OTEL_ENDPOINT      OTLP/gRPC collector (host:port) the sidecars export traces to
//   GATEWAY_DRAIN_TIMEOUT_MS  a stopping gateway's drain; the stop waits for it (plus a margin)
//   GATEWAY_TEST_LEAVE_ORPHANS=true  (test only, with GATEWAY_TEST_MODE=true) children do not die
//                           with this process, to show that the next start stops them (docs/testing.md)
// Every other variable (GATEWAY_ADMIN_TOKEN, …) reaches the apps unchanged.

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { repoRoot } from './binaries';
import { planPorts } from './ports';
import { redisPing } from './readiness';
import { resolveDaprBinaries, startTopology, type RunningTopology } from './topology';

const APP_PREFIX = /^\[(gateway(-\d+)?|actors|ledger|supervisor)\] /;
const INFRA_PROBLEM = /level=(error|fatal)|"level":"(error|fatal)"|# (Fatal|Failed)/;
/** Set once stopping starts: the control plane logs errors about its peers going away. */
let stopping = false;

/** App output in full; infrastructure output only when it reports an error (all of it is in the logs). */
function consoleLine(line: string): void {
  if (APP_PREFIX.test(line) || (!stopping && INFRA_PROBLEM.test(line))) process.stdout.write(line + '\n');
}

function commandExists(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

async function ensureRedis(port: number): Promise<void> {
  const answering = await redisPing(port).then(
    (reply) => reply === '+PONG',
    () => false,
  );
  if (answering || commandExists('redis-server')) return;
  console.log('redis-server is not installed; running scripts/ensure-redis.sh');
  const result = spawnSync('bash', [join(repoRoot(), 'scripts', 'ensure-redis.sh')], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error('could not install redis-server (scripts/ensure-redis.sh failed); install Redis and retry');
}

function testOnlyLeaveOrphans(env: NodeJS.ProcessEnv): boolean {
  const on = (v: string | undefined) => v === 'true' || v === '1';
  if (!on(env.GATEWAY_TEST_LEAVE_ORPHANS)) return false;
  if (!on(env.GATEWAY_TEST_MODE)) throw new Error('GATEWAY_TEST_LEAVE_ORPHANS lets children outlive a killed runner; it is accepted only with GATEWAY_TEST_MODE=true');
  return true;
}

async function main(): Promise<void> {
  const basePort = process.env.GATEWAY_DAPR_BASE_PORT ? Number(process.env.GATEWAY_DAPR_BASE_PORT) : 0;
  if (!Number.isInteger(basePort) || basePort < 0 || basePort > 65000) throw new Error(`GATEWAY_DAPR_BASE_PORT must be a port number, got ${process.env.GATEWAY_DAPR_BASE_PORT}`);
  const dataDir = resolve(process.env.GATEWAY_DATA_DIR ?? './data/dapr');
  const leaveOrphans = testOnlyLeaveOrphans(process.env);
  await ensureRedis(planPorts({ basePort, gatewayInstances: 1, env: process.env }).redis);
  const daprBinDir = await resolveDaprBinaries();

  let topology: RunningTopology | undefined;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('stopping the Dapr topology…');
    await topology?.stop();
    process.exit(code);
  };
  // Registered before start so a Ctrl-C during start-up still stops what has started.
  let interruptedDuringStart = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (topology) return void shutdown(0);
      // A second interrupt during start-up exits at once; the exit hook kills what was started.
      if (interruptedDuringStart) process.exit(130);
      interruptedDuringStart = true;
      console.log('stopping once start-up has finished (interrupt again to kill now)');
    });
  }

  const started = Date.now();
  topology = await startTopology({
    basePort,
    dataDir,
    daprBinDir,
    log: consoleLine,
    restartOnCrash: true,
    childrenDieWithSupervisor: !leaveOrphans,
    onUnexpectedExit: (name, status, lastOutput, restartInMs) => {
      console.error(`${name} exited unexpectedly (code ${status.code}, signal ${status.signal}); restarting it in ${((restartInMs ?? 0) / 1000).toFixed(1)} s; last output:\n${lastOutput}`);
    },
  });
  if (interruptedDuringStart) return shutdown(0);
  console.log(`Dapr topology up in ${((Date.now() - started) / 1000).toFixed(1)} s on Node ${process.version}; logs in ${join(dataDir, 'logs')}`);
  for (const url of topology.gatewayUrls) console.log(`gateway listening on ${url}`);
  console.log('press Ctrl-C to stop');
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
