// Real processes for end-to-end tests: the gateway as `npm start` runs it (built dist/).

import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { repoRoot } from '../../topology/binaries';
import { NODE_FLAGS } from '../../lib/node-flags';

export const ROOT = repoRoot(__dirname);

/** A throwaway app of topology/fixtures (built to dist/), as the topology runner starts an app in its place. */
export function fixtureApp(name: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [join(ROOT, 'dist', 'topology', 'fixtures', name)] };
}
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function waitFor(url: string, timeoutMs = 30_000, child?: ChildProcess, output?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before ${url} answered:\n${output?.() ?? ''}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${url}:\n${output?.() ?? ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a gateway that is expected to exit (a start refused): its exit code and what it printed. */
export async function startRefusedGateway(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/services/gateway/main.js')], {
    cwd: ROOT,
    env: { ...process.env, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', ...env, PORT: String(await freePort()), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, output };
}

export interface GatewayProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
}

export async function startGateway(env: Record<string, string>, port?: number): Promise<GatewayProcess> {
  const chosen = port ?? (await freePort());
  let output = '';
  // With the V8 flags `npm start` gives it, unless the test names its own (command-line flags would win over them).
  const flags = env.NODE_OPTIONS === undefined ? NODE_FLAGS : [];
  const child = spawn(process.execPath, [...flags, join(ROOT, 'dist/services/gateway/main.js')], {
    cwd: ROOT,
    env: { ...process.env, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', ...env, PORT: String(chosen), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${chosen}`;
  await waitFor(`${url}/healthz`, 30_000, child, () => output);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url,
    port: chosen,
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    kill: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
