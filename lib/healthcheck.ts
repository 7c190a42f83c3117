// The container image's HEALTHCHECK (Dockerfile): `node dist/lib/healthcheck.js` exits 0 when the
// app of this container answers GET /healthz with 200, else 1. The slim Node image has no curl,
// and one image runs three apps (its command chooses), so the app and its port are found as the app
// itself finds them: PID 1's command line names the entry point (also behind `docker run --init`),
// the gateway listens on PORT (default 8080) at HOST, the actors and ledger apps on APP_PORT
// (default 3101, 3102) at 127.0.0.1.

import { readFileSync } from 'node:fs';
import { DEFAULT_PORTS } from './config';

export type ContainerApp = 'gateway' | 'actors' | 'ledger';

const ENTRY_POINTS: Record<string, ContainerApp> = {
  'dist/services/gateway/main.js': 'gateway',
  'dist/actors/host/dapr-main.js': 'actors',
  'dist/services/ledger/main.js': 'ledger',
};
const DEFAULT_PORT: Record<ContainerApp, number> = DEFAULT_PORTS;
/** Addresses that mean "every interface": the check goes to loopback. */
const ANY = new Set(['0.0.0.0', '::', '[::]']);

/** The app a command line runs (gateway when none is recognised: the image's default command). */
export function appOf(args: string[]): ContainerApp {
  for (const arg of args) {
    const found = Object.entries(ENTRY_POINTS).find(([entry]) => arg === entry || arg.endsWith(`/${entry}`));
    if (found) return found[1];
  }
  return 'gateway';
}

export function healthUrl(app: ContainerApp, env: NodeJS.ProcessEnv): string {
  if (app !== 'gateway') return `http://127.0.0.1:${env.APP_PORT || DEFAULT_PORT[app]}/healthz`;
  const host = env.HOST && !ANY.has(env.HOST) ? env.HOST : '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${env.PORT || DEFAULT_PORT.gateway}/healthz`;
}

export async function healthy(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

function pid1Args(): string[] {
  try {
    return readFileSync('/proc/1/cmdline', 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

if (require.main === module) {
  const url = healthUrl(appOf(pid1Args()), process.env);
  void healthy(url).then((ok) => {
    if (!ok) process.stderr.write(`unhealthy: GET ${url} did not answer 200\n`);
    process.exit(ok ? 0 : 1);
  });
}
