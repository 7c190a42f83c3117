// docker-compose.yml read into plain objects for topology/manifests.test.ts: its apps (each a
// service with a daprd sidecar in its network namespace), and the repository files it mounts into
// the sidecars (resources, configuration). Only reads.

import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { repoRoot, type Doc } from './manifest-model';

/**
 * An app of docker-compose.yml: a service and its daprd sidecar in one network namespace, the
 * sidecar's in the app's (`network_mode: service:<app>`: compose stops the sidecar first, as an
 * actor host or a subscriber wants) or the app's in the sidecar's (`network_mode:
 * service:<sidecar>`: the app stops first, as the gateway wants, whose drain calls its sidecar).
 */
export interface ComposeApp {
  id: string;
  port: number;
  service: string;
  /** The sidecar's service. */
  sidecar: string;
  /** The service that owns the network namespace (and publishes its ports). */
  networkOwner: string;
  command: string[];
  env: Record<string, unknown>;
}

const argAfter = (args: string[], flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};

const networkOf = (svc: Doc): string | undefined => {
  const mode = String(svc.network_mode ?? '');
  return mode.startsWith('service:') ? mode.slice('service:'.length) : undefined;
};

export function composeApps(compose: Doc): ComposeApp[] {
  const services: Record<string, Doc> = compose.services ?? {};
  return Object.entries(services)
    .filter(([, sidecar]) => Array.isArray(sidecar.command) && String(sidecar.command[0]).endsWith('daprd'))
    .map(([sidecarName, sidecar]) => {
      const args: string[] = sidecar.command.map(String);
      // The app whose network the sidecar joins, else the app that joins the sidecar's.
      const joined = networkOf(sidecar);
      const service = joined ?? Object.entries(services).find(([, svc]) => networkOf(svc) === sidecarName)?.[0] ?? '';
      const app = services[service] ?? {};
      return {
        id: argAfter(args, '--app-id') ?? '',
        port: Number(argAfter(args, '--app-port')),
        service,
        sidecar: sidecarName,
        networkOwner: joined ? service : sidecarName,
        command: (app.command ?? []).map(String),
        env: app.environment ?? {},
      };
    });
}

/** Volume `host:container[:mode]` strings of a compose service as [host, container] pairs. */
function volumeMounts(service: Doc): Array<[string, string]> {
  return (service.volumes ?? []).map((v: string) => String(v).split(':').slice(0, 2) as [string, string]);
}

/** Maps a path inside a compose container to the repository path it is bind-mounted from. */
function hostPath(service: Doc, inContainer: string): string | undefined {
  for (const [host, target] of volumeMounts(service)) {
    if (!host.startsWith('./')) continue;
    if (inContainer === target) return posix.normalize(host);
    if (inContainer.startsWith(`${target}/`)) return posix.normalize(host + inContainer.slice(target.length));
  }
  return undefined;
}

/**
 * The repository files docker-compose.yml copies into the sidecars' resources volume: the
 * `/src/...` paths (globs allowed) of the one-shot step that writes `/resources`.
 */
export function composeResourceFiles(compose: Doc, root = repoRoot): string[] {
  const step = Object.values<Doc>(compose.services ?? {}).find((svc) => volumeMounts(svc).some(([, target]) => target === '/resources'));
  if (!step) return [];
  const script = (step.command ?? []).map(String).join(' ');
  const files: string[] = [];
  for (const path of script.match(/\/src\/[^\s;"]+/g) ?? []) {
    const host = hostPath(step, path);
    if (!host) continue;
    const base = posix.basename(host);
    if (!base.includes('*')) {
      files.push(host);
      continue;
    }
    const pattern = new RegExp(`^${base.replace(/\./g, '\\.').replace(/\*/g, '.*')}$`);
    const dir = posix.dirname(host);
    files.push(...readdirSync(join(root, dir)).filter((n) => pattern.test(n)).sort().map((n) => posix.join(dir, n)));
  }
  return files;
}

/** The repository file every compose sidecar reads as its Dapr Configuration (`--config`). */
export function composeConfigFiles(compose: Doc): string[] {
  const services: Record<string, Doc> = compose.services ?? {};
  return Object.values(services)
    .filter((svc) => Array.isArray(svc.command) && String(svc.command[0]).endsWith('daprd'))
    .map((svc) => {
      const inContainer = argAfter(svc.command.map(String), '--config');
      return (inContainer && hostPath(svc, inContainer)) ?? `(no --config mount in ${svc.network_mode ?? svc.command.join(' ')})`;
    });
}
