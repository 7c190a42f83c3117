// Smoke tests of the local Dapr topology runner (topology/topology.ts) against real processes:
// Redis, placement, scheduler and daprd sidecars. The first block uses the throwaway fixture apps
// in topology/fixtures (it checks the runner, not the product); the second starts the real app
// entrypoints (dist/actors/host/dapr-main.js, dist/services/{ledger,gateway}/main.js; npm run build).

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureApp } from '../support/processes';
import { SIDECAR_GOGC, SIDECAR_GOMAXPROCS } from '../../topology/commands';
import { portIsFree } from '../../topology/ports';
import { resolveDaprBinaries, startTopology, type RunningTopology } from '../../topology/topology';
import { eventually } from '../support/eventually';

// The first run on a machine may build the Dapr runtime from source (scripts/dapr-runtime.sh).
const BUILD_TIMEOUT_MS = 45 * 60_000;
jest.setTimeout(120_000);

async function daprPost(port: number, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

let binDir: string;
beforeAll(async () => {
  binDir = await resolveDaprBinaries();
}, BUILD_TIMEOUT_MS);

describe('topology runner with fixture apps', () => {
  let topology: RunningTopology;

  beforeAll(async () => {
    topology = await startTopology({
      basePort: 23000,
      dataDir: mkdtempSync(join(tmpdir(), 'topology-fixture-')),
      daprBinDir: binDir,
      gatewayInstances: 2,
      actorTypes: ['TopologyProbe'],
      apps: {
        actors: fixtureApp('probe-actors-app.js'),
        ledger: fixtureApp('probe-http-app.js'),
        gateway: fixtureApp('probe-http-app.js'),
      },
    });
  });
  afterAll(() => topology?.stop());

  test('when it has started, then an actor method called through a sidecar answers', async () => {
    const reply = await daprPost(topology.ports['daprd-gateway-http']!, '/v1.0/actors/TopologyProbe/smoke-1/method/ping');
    expect(reply).toEqual({ status: 200, text: 'pong from smoke-1' });
  });

  test('when a reminder is registered through the sidecar, then it fires via the scheduler', async () => {
    const sidecar = topology.ports['daprd-actors-http']!;
    const registered = await daprPost(sidecar, '/v1.0/actors/TopologyProbe/smoke-2/reminders/once', { dueTime: '1s' });
    expect(registered.status).toBe(204);
    const fired = await eventually(() => daprPost(sidecar, '/v1.0/actors/TopologyProbe/smoke-2/method/fired'), (r) => r.text === '1', 15_000);
    expect(fired.text).toBe('1');
  });

  test('when each gateway instance invokes the ledger by app id, then both reach it', async () => {
    expect(topology.gatewayUrls).toHaveLength(2);
    // Self-hosted name resolution (mDNS) may need a moment after the sidecars report healthy.
    for (const url of topology.gatewayUrls) {
      const res = await eventually(() => fetch(`${url}/call/ledger`), (r) => r.status === 200, 15_000);
      expect(res.status).toBe(200);
    }
  });

  test("when it has started, then every sidecar runs with the runner's Go collector target and one scheduler thread", () => {
    const environment = (pid: number | undefined) =>
      Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    for (const sidecar of ['daprd-actors', 'daprd-ledger', 'daprd-gateway', 'daprd-gateway-2'] as const) {
      const env = environment(topology.pid(sidecar));
      expect({ sidecar, GOGC: env.GOGC, GOMAXPROCS: env.GOMAXPROCS }).toEqual({ sidecar, GOGC: SIDECAR_GOGC, GOMAXPROCS: SIDECAR_GOMAXPROCS });
    }
  });

  test('when the actors sidecar is killed and restarted, then actor calls work again', async () => {
    await topology.kill('daprd-actors');
    await topology.restart('daprd-actors');
    const reply = await daprPost(topology.ports['daprd-actors-http']!, '/v1.0/actors/TopologyProbe/smoke-3/method/ping');
    expect(reply.status).toBe(200);
  });

  test('when it is stopped, then every port it used is free again', async () => {
    await topology.stop();
    const busy: string[] = [];
    for (const [name, port] of Object.entries(topology.ports)) if (!(await portIsFree(port))) busy.push(`${name}=${port}`);
    expect(busy).toEqual([]);
  });
});

describe('topology with the real app entrypoints', () => {
  let topology: RunningTopology;
  // Short, so that the test of idle actors sees daprd drop them.
  const IDLE_MS = 3000;

  beforeAll(async () => {
    topology = await startTopology({
      basePort: 23100,
      dataDir: mkdtempSync(join(tmpdir(), 'topology-real-')),
      daprBinDir: binDir,
      env: { GATEWAY_LOG_LEVEL: 'warn', GATEWAY_ACTOR_IDLE_MS: String(IDLE_MS) },
    });
  });

  const activeFundsHolds = async () => {
    const md = (await (await fetch(`http://127.0.0.1:${topology.ports['daprd-actors-http']}/v1.0/metadata`)).json()) as { actorRuntime: { activeActors: Array<{ type: string; count: number }> } };
    return md.actorRuntime.activeActors.find((a) => a.type === 'FundsHold')?.count ?? 0;
  };

  test('when actors go idle, then daprd drops their activations after GATEWAY_ACTOR_IDLE_MS, as the actors app configures it (not Dapr\'s hour)', async () => {
    const config = (await (await fetch(`http://127.0.0.1:${topology.ports.actors}/dapr/config`)).json()) as Record<string, unknown>;
    expect(config).toMatchObject({ actorIdleTimeout: `${IDLE_MS}ms`, actorScanInterval: `${IDLE_MS}ms` });
    // Made-up accounts: each call activates one FundsHold that holds nothing.
    for (let i = 0; i < 5; i++) {
      const reply = await daprPost(topology.ports['daprd-actors-http']!, `/v1.0/actors/FundsHold/idle-${i}:pool-3/method/getBalance`, {});
      expect(reply.status).toBe(200);
    }
    expect(await activeFundsHolds()).toBeGreaterThanOrEqual(5);
    expect(await eventually(activeFundsHolds, (n) => n === 0, 6 * IDLE_MS)).toBe(0);
  });
  afterAll(() => topology?.stop());

  test('when it has started, then the gateway answers /healthz', async () => {
    const res = await fetch(`${topology.gatewayUrls[0]}/healthz`);
    expect(res.status).toBe(200);
  });

  test('when it has started, then the actors sidecar hosts FundsHold with placement and scheduler connected', async () => {
    const res = await fetch(`http://127.0.0.1:${topology.ports['daprd-actors-http']}/v1.0/metadata`);
    const md = (await res.json()) as { actorRuntime: { placement: string; activeActors: Array<{ type: string }> }; scheduler?: { connected_addresses?: string[] } };
    expect(md.actorRuntime.placement).toBe('placement: connected');
    expect(md.actorRuntime.activeActors.map((a) => a.type)).toContain('FundsHold');
    expect(md.scheduler?.connected_addresses).toEqual([`127.0.0.1:${topology.ports.scheduler}`]);
  });
});
