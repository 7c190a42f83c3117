// Command lines of the topology's processes. Everything binds to 127.0.0.1 and every server gets
// its own healthz and metrics port (docs/dapr-runtime.md: the traps of a loopback-only host).

import { join } from 'node:path';
import type { PortPlan, SidecarPorts } from './ports';

export interface Command {
  command: string;
  args: string[];
}

const LOOPBACK = '127.0.0.1';

export function redisCommand(port: number, dir: string): Command {
  return {
    command: 'redis-server',
    // AOF on, RDB snapshots off: every acknowledged write survives a restart of this Redis.
    args: ['--port', String(port), '--bind', LOOPBACK, '--dir', dir, '--appendonly', 'yes', '--save', '', '--daemonize', 'no'],
  };
}

export function placementCommand(binDir: string, plan: PortPlan): Command {
  return {
    command: join(binDir, 'placement'),
    args: [
      '--port', String(plan.placement),
      '--listen-address', LOOPBACK,
      '--initial-cluster', `dapr-placement-0=${LOOPBACK}:${plan.placementRaft}`,
      '--healthz-port', String(plan.placementHealthz),
      '--healthz-listen-address', LOOPBACK,
      '--metrics-port', String(plan.placementMetrics),
      '--metrics-listen-address', LOOPBACK,
      '--log-level', 'warn',
    ],
  };
}

export function schedulerCommand(binDir: string, plan: PortPlan, etcdDataDir: string): Command {
  return {
    command: join(binDir, 'scheduler'),
    args: [
      '--port', String(plan.scheduler),
      '--listen-address', LOOPBACK,
      // The address daprd is told to connect to; without it the scheduler may announce a non-loopback IP.
      '--override-broadcast-host-port', `${LOOPBACK}:${plan.scheduler}`,
      '--healthz-port', String(plan.schedulerHealthz),
      '--healthz-listen-address', LOOPBACK,
      '--metrics-port', String(plan.schedulerMetrics),
      '--metrics-listen-address', LOOPBACK,
      '--etcd-data-dir', etcdDataDir,
      '--etcd-client-port', String(plan.schedulerEtcdClient),
      '--etcd-client-listen-address', LOOPBACK,
      '--etcd-initial-cluster', `dapr-scheduler-server-0=http://${LOOPBACK}:${plan.schedulerEtcdPeer}`,
      '--log-level', 'warn',
    ],
  };
}

export interface SidecarInput {
  binDir: string;
  appId: string;
  ports: SidecarPorts;
  plan: PortPlan;
  resourcesDir: string;
  configFile: string;
}

/**
 * The sidecars' Go garbage collector target (GOGC): a sidecar's CPU under load is mostly JSON
 * decoding whose garbage is short-lived; at the default (100) a fifth of the actors' sidecar's CPU
 * was the collector. 400 lets the heap grow to five times what is live (tens of MB) and cuts the
 * sidecars' CPU per chat by about a fifth (docs/dapr-runtime.md). docker-compose.yml and the
 * Kubernetes manifests set the same (topology/manifests.test.ts); DAPR_SIDECAR_GOGC overrides it here.
 */
export const SIDECAR_GOGC = '400';

/**
 * The sidecars' Go scheduler threads (GOMAXPROCS): one. A sidecar's part of a call is a short
 * chain of goroutines (read the request, call on, write the answer); with one thread they hand off
 * on it, where at Go's default (a thread per core) each hand-off can wake a second thread. One
 * thread took about a sixth (12–19 %) off the sidecars' CPU per chat at c=32 (docs/dapr-runtime.md).
 * Go 1.25 and later derive the same from the Kubernetes manifests' sidecar limit of one CPU;
 * docker-compose.yml and the manifests also set it outright (topology/manifests.test.ts).
 * The runner gives placement and the scheduler the same; DAPR_SIDECAR_GOMAXPROCS overrides it
 * ('' for Go's default).
 */
export const SIDECAR_GOMAXPROCS = '1';

/**
 * The Go runtime settings the runner gives the Dapr processes: GOGC and GOMAXPROCS from
 * DAPR_SIDECAR_GOGC and DAPR_SIDECAR_GOMAXPROCS, else the defaults above. Go ignores a value it
 * cannot read without a word, so one that is neither a whole number (nor `off` for GOGC, nor
 * empty for Go's own default) stops the start here, with the variable named.
 */
export function sidecarGoEnv(env: NodeJS.ProcessEnv = process.env): { GOGC: string; GOMAXPROCS?: string } {
  const gogc = env.DAPR_SIDECAR_GOGC ?? SIDECAR_GOGC;
  if (!/^(\d+|off)$/.test(gogc)) throw new Error(`DAPR_SIDECAR_GOGC=${JSON.stringify(gogc)}: expected a whole number (a percentage) or "off"`);
  const procs = env.DAPR_SIDECAR_GOMAXPROCS ?? SIDECAR_GOMAXPROCS;
  if (procs !== '' && !/^[1-9]\d*$/.test(procs)) throw new Error(`DAPR_SIDECAR_GOMAXPROCS=${JSON.stringify(procs)}: expected a whole number of threads (1 or more), or empty for Go's default`);
  return procs === '' ? { GOGC: gogc } : { GOGC: gogc, GOMAXPROCS: procs };
}

export function daprdCommand({ binDir, appId, ports, plan, resourcesDir, configFile }: SidecarInput): Command {
  return {
    command: join(binDir, 'daprd'),
    args: [
      '--mode', 'standalone',
      '--app-id', appId,
      '--app-port', String(ports.app),
      '--app-protocol', 'http',
      '--app-channel-address', LOOPBACK,
      '--dapr-listen-addresses', LOOPBACK,
      '--dapr-http-port', String(ports.http),
      '--dapr-grpc-port', String(ports.grpc),
      '--dapr-internal-grpc-port', String(ports.internalGrpc),
      '--dapr-internal-grpc-listen-address', LOOPBACK,
      '--dapr-public-port', String(ports.publicHealth),
      '--dapr-public-listen-address', LOOPBACK,
      '--metrics-port', String(ports.metrics),
      '--metrics-listen-address', LOOPBACK,
      '--placement-host-address', `${LOOPBACK}:${plan.placement}`,
      '--scheduler-host-address', `${LOOPBACK}:${plan.scheduler}`,
      '--resources-path', resourcesDir,
      '--config', configFile,
      '--log-level', 'warn',
    ],
  };
}
