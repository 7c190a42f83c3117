// The deployment descriptions agree with each other and with the code: the Kubernetes manifests
// (deploy/kubernetes, docs/kubernetes.md), docker-compose.yml and the local runner (topology/
// with components/ and dapr/). Every check runs once on the files as committed and once on a
// copy broken on purpose, which it must report: a check that cannot fail checks nothing.
// Reads files only; starts nothing.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTOR_CLASSES } from '../actors/host/registry';
import { loadConfig } from '../lib/config';
import { PUBSUB_NAME } from '../services/ledger/app';
import {
  composeApps,
  composeConfigFiles,
  composeResourceFiles,
  hostPort,
  K8S_DIR,
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
