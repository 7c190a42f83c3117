// docker-compose.yml read into plain objects for topology/manifests.test.ts: its apps (each a
// service with a daprd sidecar in one network namespace), and the repository files it mounts into
// the sidecars (resources, configuration). Only reads.

import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { repoRoot, type Doc } from './manifest-model';

/**
 * An app of docker-compose.yml: a service and its daprd sidecar in one network namespace: the
 * app's or the sidecar's (`network_mode: service:<the other>`), or, as this repository's file has
 * it, a third service's that only holds it (`network_mode: service:<holder>` on both, as a
 * Kubernetes pod's pause container), so that either can restart without the other losing its
 * network. Which of the two compose stops first follows `depends_on`: the one started after the
 * other.
 */
export interface ComposeApp {
  id: string;
  port: number;
  service: string;
  /** The sidecar's service. */
  sidecar: string;
  /** The service that owns the network namespace (and publishes its ports). */
  networkOwner: string;
  /** The service whose namespace the app joins, and the sidecar. */
  appNetwork: string;
  sidecarNetwork: string;
  /** Whether the app waits for its sidecar to start (so compose stops the app first), and the other way round. */
  appAfterSidecar: boolean;
  sidecarAfterApp: boolean;
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

const dependsOn = (svc: Doc | undefined, other: string): boolean => {
  const deps = svc?.depends_on;
  return Array.isArray(deps) ? deps.includes(other) : deps !== undefined && deps !== null && other in deps;
};

export function composeApps(compose: Doc): ComposeApp[] {
  const services: Record<string, Doc> = compose.services ?? {};
  const isSidecar = (svc: Doc) => Array.isArray(svc.command) && String(svc.command[0]).endsWith('daprd');
  return Object.entries(services)
    .filter(([, sidecar]) => isSidecar(sidecar))
    .map(([sidecarName, sidecar]) => {
      const args: string[] = sidecar.command.map(String);
      const joined = networkOf(sidecar);
      // The app in the sidecar's namespace: one that joins the sidecar's, else one that joins the
      // namespace the sidecar joins (a holder's), else the one whose namespace the sidecar joins.
      const others = Object.entries(services).filter(([name, svc]) => name !== sidecarName && !isSidecar(svc));
      const service = others.find(([, svc]) => networkOf(svc) === sidecarName)?.[0]
        ?? (joined === undefined ? undefined : others.find(([, svc]) => networkOf(svc) === joined)?.[0])
        ?? joined
        ?? '';
      const app = services[service] ?? {};
      const appNetwork = networkOf(app) ?? service;
      const sidecarNetwork = joined ?? sidecarName;
      return {
        id: argAfter(args, '--app-id') ?? '',
        port: Number(argAfter(args, '--app-port')),
        service,
        sidecar: sidecarName,
        networkOwner: sidecarNetwork,
        appNetwork,
        sidecarNetwork,
        appAfterSidecar: dependsOn(app, sidecarName),
        sidecarAfterApp: dependsOn(sidecar, service),
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
