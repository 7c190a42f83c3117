// The port plan of the local topology. With basePort 0 the fixed, documented defaults apply
// (docs/dapr-runtime.md); with basePort B every port is B + a fixed offset, so a test run can sit
// beside a user's instance. Everything listens on 127.0.0.1.

import { createServer } from 'node:net';
import { DEFAULT_PORTS } from '../lib/config';

export type AppName = 'gateway' | 'actors' | 'ledger';

export interface SidecarPorts {
  http: number;
  grpc: number;
  internalGrpc: number;
  publicHealth: number;
  metrics: number;
  /** The port the app behind this sidecar listens on. */
  app: number;
}

export interface PortPlan {
  redis: number;
  placement: number;
  placementRaft: number;
  placementHealthz: number;
  placementMetrics: number;
  scheduler: number;
  schedulerHealthz: number;
  schedulerMetrics: number;
  schedulerEtcdClient: number;
  schedulerEtcdPeer: number;
  actors: SidecarPorts;
  ledger: SidecarPorts;
  /** One per gateway instance; instance 1 first. */
  gateways: SidecarPorts[];
}

export interface PortPlanInput {
  basePort: number;
  gatewayPort?: number;
  gatewayInstances: number;
  redisPort?: number;
  env: NodeJS.ProcessEnv;
}

/** Offsets from basePort; gateway instance i (from 1) uses GATEWAY_BLOCK + 6 * (i - 1) + k. */
// Tests pick base ports below 32768: Linux hands out 32768–60999 to outgoing connections, and a
// port taken by one of them for a moment makes a topology's start refuse.
const OFFSET = {
  redis: 1,
  placement: 2,
  placementRaft: 3,
  placementHealthz: 4,
  placementMetrics: 5,
  scheduler: 6,
  schedulerHealthz: 7,
  schedulerMetrics: 8,
  schedulerEtcdClient: 9,
  schedulerEtcdPeer: 10,
  actors: 11, // 11..16
  ledger: 17, // 17..22
  gateways: 23, // 23.. (6 per instance)
} as const;

function sidecarAt(start: number): SidecarPorts {
  return { app: start, http: start + 1, grpc: start + 2, internalGrpc: start + 3, publicHealth: start + 4, metrics: start + 5 };
}

export function planPorts(input: PortPlanInput): PortPlan {
  const { basePort, gatewayInstances } = input;
  if (!Number.isInteger(gatewayInstances) || gatewayInstances < 1 || gatewayInstances > 8) {
    throw new Error(`gatewayInstances must be an integer from 1 to 8, got ${gatewayInstances}`);
  }
  let plan: PortPlan;
  if (basePort > 0) {
    const b = basePort;
    plan = {
      redis: b + OFFSET.redis,
      placement: b + OFFSET.placement,
      placementRaft: b + OFFSET.placementRaft,
      placementHealthz: b + OFFSET.placementHealthz,
      placementMetrics: b + OFFSET.placementMetrics,
      scheduler: b + OFFSET.scheduler,
      schedulerHealthz: b + OFFSET.schedulerHealthz,
      schedulerMetrics: b + OFFSET.schedulerMetrics,
      schedulerEtcdClient: b + OFFSET.schedulerEtcdClient,
      schedulerEtcdPeer: b + OFFSET.schedulerEtcdPeer,
      actors: sidecarAt(b + OFFSET.actors),
      ledger: sidecarAt(b + OFFSET.ledger),
      gateways: Array.from({ length: gatewayInstances }, (_, i) => sidecarAt(b + OFFSET.gateways + 6 * i)),
    };
    // The first gateway's public port is basePort itself, the easiest one to remember.
    plan.gateways[0]!.app = b;
  } else {
    const envPort = input.env.PORT ? Number(input.env.PORT) : DEFAULT_PORTS.gateway;
    if (!Number.isInteger(envPort) || envPort < 1 || envPort > 65535) throw new Error(`PORT must be a TCP port, got ${input.env.PORT}`);
    plan = {
      redis: 6379,
      placement: 50005,
      placementRaft: 50008,
      placementHealthz: 50009,
      placementMetrics: 50010,
      scheduler: 50006,
      schedulerHealthz: 50011,
      schedulerMetrics: 50012,
      schedulerEtcdClient: 50013,
      schedulerEtcdPeer: 50014,
      actors: { app: DEFAULT_PORTS.actors, http: 3501, grpc: 50002, internalGrpc: 50022, publicHealth: 3511, metrics: 9091 },
      ledger: { app: DEFAULT_PORTS.ledger, http: 3502, grpc: 50003, internalGrpc: 50023, publicHealth: 3512, metrics: 9092 },
      gateways: Array.from({ length: gatewayInstances }, (_, i) =>
        i === 0
          ? { app: envPort, http: 3500, grpc: 50001, internalGrpc: 50021, publicHealth: 3510, metrics: 9090 }
          : { app: envPort + i, http: 3520 + i, grpc: 50030 + i, internalGrpc: 50040 + i, publicHealth: 3530 + i, metrics: 9093 + i },
      ),
    };
  }
  if (input.gatewayPort !== undefined) plan.gateways[0]!.app = input.gatewayPort;
  if (input.redisPort !== undefined) plan.redis = input.redisPort;
  return plan;
}

/** Flat name → port view of the control plane and Redis. */
export function controlPlanePorts(plan: PortPlan): Record<string, number> {
  return {
    redis: plan.redis,
    placement: plan.placement,
    'placement-raft': plan.placementRaft,
    'placement-healthz': plan.placementHealthz,
    'placement-metrics': plan.placementMetrics,
    scheduler: plan.scheduler,
    'scheduler-healthz': plan.schedulerHealthz,
    'scheduler-metrics': plan.schedulerMetrics,
    'scheduler-etcd-client': plan.schedulerEtcdClient,
    'scheduler-etcd-peer': plan.schedulerEtcdPeer,
  };
}

/** Flat name → port view of one app instance (`name`: actors, ledger, gateway, gateway-2, …) and its sidecar. */
export function appPorts(name: string, p: SidecarPorts): Record<string, number> {
  return {
    [name]: p.app,
    [`daprd-${name}-http`]: p.http,
    [`daprd-${name}-grpc`]: p.grpc,
    [`daprd-${name}-internal-grpc`]: p.internalGrpc,
    [`daprd-${name}-public`]: p.publicHealth,
    [`daprd-${name}-metrics`]: p.metrics,
  };
}

/** Every app instance of a plan with its process name. */
export function appInstances(plan: PortPlan): Array<{ app: AppName; name: string; ports: SidecarPorts }> {
  return [
    { app: 'actors', name: 'actors', ports: plan.actors },
    { app: 'ledger', name: 'ledger', ports: plan.ledger },
    ...plan.gateways.map((ports, i) => ({ app: 'gateway' as const, name: gatewayProcessName(i), ports })),
  ];
}

/** Process name of gateway instance `index` (from 0): gateway, gateway-2, gateway-3, … */
export function gatewayProcessName(index: number): string {
  return index === 0 ? 'gateway' : `gateway-${index + 1}`;
}

/** Resolves to true when nothing listens on 127.0.0.1:port. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Fails with every busy port named, before anything is started. */
export async function assertPortsFree(ports: Record<string, number>): Promise<void> {
  const seen = new Map<number, string>();
  for (const [name, port] of Object.entries(ports)) {
    const other = seen.get(port);
    if (other) throw new Error(`port ${port} is planned twice (${other} and ${name})`);
    seen.set(port, name);
  }
  const checks = await Promise.all(Object.entries(ports).map(async ([name, port]) => ({ name, port, free: await portIsFree(port) })));
  const busy = checks.filter((c) => !c.free);
  if (busy.length > 0) {
    const list = busy.map((c) => `${c.name}=${c.port}`).join(', ');
    throw new Error(`ports already in use on 127.0.0.1: ${list} (stop the other instance or pass another basePort)`);
  }
}
