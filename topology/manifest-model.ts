// Reads the descriptions of the Dapr deployment — the Kubernetes manifests (deploy/kubernetes),
// docker-compose.yml, the Dapr CLI run file dapr.yaml and the local runner (topology/) with its
// components/ and dapr/ files — and the apps' image (Dockerfile, .dockerignore) into plain objects
// that topology/manifests.test.ts checks and compares.
// Only reads: nothing here starts a process or opens a port.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { parseDockerfile, type Stage } from './dockerfile-model';
import { appInstances, planPorts, type PortPlan } from './ports';
import { writeResources } from './resources';

/** A parsed YAML document; manifests are open-ended, so their fields are read loosely. */
export type Doc = Record<string, any>;

export interface Manifest {
  /** Path relative to the repository root. */
  file: string;
  doc: Doc;
}

export interface Sources {
  /** Every YAML file read, by path relative to the repository root. */
  texts: Record<string, string>;
  /** File names in deploy/kubernetes. */
  k8sFiles: string[];
  /** The Kubernetes resources of deploy/kubernetes (kustomization and secret template apart). */
  k8s: Manifest[];
  kustomization: Doc;
  /** The documents of deploy/kubernetes/secrets.example.yaml. */
  secretTemplate: Manifest[];
  /** components/*.yaml. */
  components: Manifest[];
  /** The Dapr resources of dapr/ (config.yaml, resiliency.yaml). */
  dapr: Manifest[];
  compose: Doc;
  /** The Dapr resources the local runner hands every daprd (topology/resources.ts). */
  topologyResources: Manifest[];
  /** App id → app port of the local runner's default port plan (topology/ports.ts). */
  topologyApps: Record<string, number>;
  /** The local runner's default port plan. */
  topologyPlan: PortPlan;
  /** dapr.yaml: the Dapr CLI multi-app run file. */
  runFile: Doc;
  /** The Dockerfile's stages, and what could not be parsed. */
  dockerfile: { stages: Stage[]; errors: string[] };
  /** The patterns of .dockerignore. */
  dockerignore: string[];
  /** The scripts of package.json. */
  scripts: Record<string, string>;
  /** package-lock.json. */
  lock: Doc;
  /** The source directories scripts/build.mjs compiles into dist/ (its `roots`). */
  buildRoots: string[];
}

export const K8S_DIR = 'deploy/kubernetes';
export const KUSTOMIZATION = 'kustomization.yaml';
export const SECRET_TEMPLATE = 'secrets.example.yaml';
export const NAMESPACE = 'payg';

export const repoRoot = resolve(__dirname, '..');

export function parseYaml(text: string): { docs: Doc[]; errors: string[] } {
  // merge: docker-compose.yml builds its services from `<<: *anchor` merge keys.
  const parsed = parseAllDocuments(text, { merge: true });
  const documents = Array.isArray(parsed) ? parsed : [];
  const errors = documents.flatMap((d) => d.errors.map((e) => e.message));
  const docs = documents.map((d) => d.toJS() as Doc | null).filter((d): d is Doc => d !== null && typeof d === 'object');
  return { docs, errors };
}

function yamlNames(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.endsWith('.yaml') || n.endsWith('.yml')).sort();
}

export function loadSources(root = repoRoot): Sources {
  const texts: Record<string, string> = {};
  const read = (file: string): Manifest[] => {
    texts[file] = readFileSync(join(root, file), 'utf8');
    return parseYaml(texts[file]!).docs.map((doc) => ({ file, doc }));
  };
  const k8sFiles = yamlNames(join(root, K8S_DIR));
  const k8s: Manifest[] = [];
  let kustomization: Doc = {};
  let secretTemplate: Manifest[] = [];
  for (const name of k8sFiles) {
    const docs = read(posix.join(K8S_DIR, name));
    if (name === KUSTOMIZATION) kustomization = docs[0]?.doc ?? {};
    else if (name === SECRET_TEMPLATE) secretTemplate = docs;
    else k8s.push(...docs);
  }
  const components = yamlNames(join(root, 'components')).flatMap((n) => read(`components/${n}`));
  const dapr = yamlNames(join(root, 'dapr'))
    .flatMap((n) => read(`dapr/${n}`))
    .filter((m) => String(m.doc.apiVersion ?? '').startsWith('dapr.io/'));
  const compose = read('docker-compose.yml')[0]?.doc ?? {};

  const scratch = mkdtempSync(join(tmpdir(), 'manifests-test-'));
  let topologyResources: Manifest[];
  try {
    const dir = writeResources(root, join(scratch, 'resources'), 6379);
    topologyResources = yamlNames(dir).flatMap((n) =>
      parseYaml(readFileSync(join(dir, n), 'utf8')).docs.map((doc) => ({ file: `(local runner) ${n}`, doc })),
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const topologyPlan = planPorts({ basePort: 0, gatewayInstances: 1, env: {} });
  const topologyApps: Record<string, number> = {};
  for (const i of appInstances(topologyPlan)) topologyApps[i.app] = i.ports.app;
  const runFile = read('dapr.yaml')[0]?.doc ?? {};

  const dockerfile = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  const dockerignore = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const scripts: Record<string, string> = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts ?? {};
  const rootsList = /const roots = \[([^\]]*)\]/.exec(readFileSync(join(root, 'scripts/build.mjs'), 'utf8'))?.[1] ?? '';
  const buildRoots = [...rootsList.matchAll(/'([^']+)'/g)].map((m) => m[1]!);

  return {
    texts, k8sFiles, k8s, kustomization, secretTemplate, components, dapr, compose, topologyResources, topologyApps,
    topologyPlan, runFile, dockerfile, dockerignore, scripts, buildRoots,
    lock: JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')),
  };
}

/**
 * The optional dependencies of locked packages that the lock file itself lacks: `npm ci` refuses
 * such a lock file ("Missing: … from lock file"), `npm install` skips them.
 */
export function lockMissingOptionals(lock: Doc): string[] {
  const packages: Record<string, Doc> = lock.packages ?? {};
  const missing = new Set<string>();
  for (const [path, pkg] of Object.entries(packages)) {
    for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
      if (!packages[`${path ? `${path}/` : ''}node_modules/${name}`] && !packages[`node_modules/${name}`]) missing.add(name);
    }
  }
  return [...missing].sort();
}

/**
 * Every TypeScript source of the repository that `entries` (repository paths of .ts files) load,
 * following relative `import`/`export … from`/`require` specifiers; entries themselves included.
 */
export function importClosure(entries: string[], root = repoRoot): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(root, file), 'utf8');
    const specifiers = [...text.matchAll(/(?:from\s+|import\s+|require\()'(\.[^']+)'/g)].map((m) => m[1]!);
    for (const spec of specifiers) {
      const base = join(root, dirname(file), spec);
      const found = [`${base}.ts`, join(base, 'index.ts'), base].find((f) => existsSync(f) && statSync(f).isFile());
      if (found && found.endsWith('.ts')) visit(relative(root, found));
    }
  };
  for (const entry of entries) if (existsSync(join(root, entry))) visit(entry);
  return [...seen].sort();
}

export const kindOf = (ms: Manifest[], kind: string): Manifest[] => ms.filter((m) => m.doc.kind === kind);

export const where = (m: Manifest): string => `${m.file}: ${m.doc.kind ?? '?'} ${m.doc.metadata?.name ?? '?'}`;

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Doc;
}

/** A Deployment annotated for the Dapr sidecar injector. */
export interface K8sApp {
  id: string;
  port: number;
  deployment: Manifest;
  annotations: Record<string, string>;
  /** The container the sidecar calls: the one exposing the app port (else the first). */
  container: Doc;
  env: EnvVar[];
}

export function k8sApps(s: Sources): K8sApp[] {
  return kindOf(s.k8s, 'Deployment')
    .filter((m) => m.doc.spec?.template?.metadata?.annotations?.['dapr.io/enabled'] === 'true')
    .map((deployment) => {
      const annotations: Record<string, string> = deployment.doc.spec.template.metadata.annotations;
      const port = Number(annotations['dapr.io/app-port']);
      const containers: Doc[] = deployment.doc.spec.template.spec?.containers ?? [];
      const container = containers.find((c) => (c.ports ?? []).some((p: Doc) => p.containerPort === port)) ?? containers[0] ?? {};
      return { id: annotations['dapr.io/app-id'] ?? '', port, deployment, annotations, container, env: container.env ?? [] };
    });
}

/**
 * The environment a container sees: literal values, `$(VAR)` references to earlier variables
 * expanded as the kubelet does, and every secretKeyRef replaced by `secretValue(ref)`.
 */
export function resolveEnv(env: EnvVar[], secretValue: (ref: Doc) => string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of env) {
    if (v.valueFrom?.secretKeyRef) out[v.name] = secretValue(v.valueFrom.secretKeyRef);
    else if (v.value !== undefined) out[v.name] = String(v.value).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, name: string) => out[name] ?? all);
  }
  return out;
}

/** `host:port` → [host, port]. */
export function hostPort(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i), Number(address.slice(i + 1))];
}

/** The Service a cluster-local host name (`svc`, `svc.ns`, `svc.ns.svc[.cluster.local]`) names, if in our namespace. */
export function serviceOfHost(host: string): string | undefined {
  const [name, namespace = NAMESPACE, ...rest] = host.split('.');
  if (namespace !== NAMESPACE) return undefined;
  if (rest.length > 0 && rest.join('.') !== 'svc' && rest.join('.') !== 'svc.cluster.local') return undefined;
  return name;
}
