import pino from 'pino';
import { createGateway, type GatewayDeps } from './app';
import { openApiDocument } from './openapi';
import { FAMILY_PREFIXES, routeFamily, routeList } from './route-table';
import { loadCatalog } from '../../catalog/catalog';
import { join } from 'node:path';
import type { RouteFamily } from '../../lib/metrics';

type Handle = ((...args: never[]) => unknown) & { stack?: Layer[] };
interface Layer { route?: { path: string; methods: Record<string, boolean>; stack: Layer[] }; handle: Handle; method?: string; match(path: string): boolean }

/** The gateway, built for a look at its routes. */
function gateway() {
  // Building the app only registers routes: no collaborator is called, so none is needed.
  const unused = {} as never;
  const deps = {
    catalog: loadCatalog(join(__dirname, '../../catalog/default-catalog.json')), providers: new Map(), funds: unused, outbox: unused, images: unused,
    accounts: unused, logger: pino({ level: 'silent' }), actorHost: 'embedded', adminToken: 'x', maxBodyBytes: 1024, providerTimeoutMs: 1000,
    holdTtlMs: 20_000, holdProgress: { everyTokens: 1, everyMs: 1 }, settlements: unused, readiness: {}, ledger: unused, orders: unused,
    compatEnabled: false, capabilityGates: { providers: new Set(), accepted: new Set() },
    sessions: { sessions: unused, workspaces: unused, runLeaseMs: 1000, pollMs: 100 },
  } satisfies Partial<GatewayDeps> as unknown as GatewayDeps;
  return createGateway(deps);
}

const stackOf = (app: unknown) => (app as { router: { stack: Layer[] } }).router.stack;

/** Every route Express registers in the gateway app, as "METHOD path", read from its router (no request sent). */
function registeredRoutes(): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) for (const method of Object.keys(layer.route.methods)) found.push(`${method.toUpperCase()} ${layer.route.path}`);
      else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk(stackOf(gateway().app));
  return found.sort();
}

/**
 * What Express runs for a POST to `path` (routers mounted at the root, as the gateway's are):
 * the middleware and the first POST route's handlers in order, the error handlers met before that
 * route, and the first one after it (where the route's errors go).
 */
function expressChain(stack: Layer[], path: string) {
  const found = { handlers: [] as Handle[], errorsBefore: [] as Handle[], errorsAfter: undefined as Handle | undefined, routed: false };
  const walk = (layers: Layer[]) => {
    for (const layer of layers) {
      if (!layer.match(path)) continue;
      if (layer.route) {
        if (!found.routed && layer.route.methods.post) {
          found.routed = true;
          found.handlers.push(...layer.route.stack.filter((inner) => inner.method === 'post').map((inner) => inner.handle));
        }
      } else if (layer.handle.stack) walk(layer.handle.stack);
      else if (layer.handle.length === 4) {
        if (!found.routed) found.errorsBefore.push(layer.handle);
        else found.errorsAfter ??= layer.handle;
      } else if (!found.routed) found.handlers.push(layer.handle);
    }
  };
  walk(stack);
  return found;
}

describe('the route table', () => {
  it('when the gateway app is built, then it registers exactly the routes of the table, each once', () => {
    expect(registeredRoutes()).toEqual(routeList().map(({ key }) => key).sort());
  });

  it('when a billed call is served directly, then it runs what Express runs for it: the same handlers in order, errors to the same handler', () => {
    const built = gateway();
    const direct = built.direct.described();
    expect(direct.map(({ path }) => path)).toEqual(['/api/open/v1/models/:id/chat', '/api/open/v1/models/:id/chat/anthropic', '/v1/chat/completions', '/v1/messages', '/v1/embeddings']);
    for (const { path, chain, errors } of direct) {
      const express = expressChain(stackOf(built.app), path.replace(/:\w+/g, 'x'));
      expect({ path, routed: express.routed, errorsBefore: express.errorsBefore.length }).toEqual({ path, routed: true, errorsBefore: 0 });
      expect(express.handlers).toEqual(chain);
      expect(express.errorsAfter).toBe(errors);
    }
  });

  it('when the OpenAPI document is read, then it describes exactly the documented routes of the table', () => {
    const described = Object.entries(openApiDocument.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    const documented = routeList().filter(({ info }) => info.documented).map(({ method, openApiPath }) => `${method} ${openApiPath}`);
    expect(described.sort()).toEqual(documented.sort());
  });

  it('when a route of the table is requested, then its path falls in its own family (the metrics label)', () => {
    const wrong = routeList()
      .map(({ key, path, info }) => ({ key, expected: info.family, actual: routeFamily(path.replace(/:[A-Za-z_]+/g, 'x')) }))
      .filter(({ expected, actual }) => expected !== actual);
    expect(wrong).toEqual([]);
  });

  it('when the prototype routes are listed, then none is documented and each is under a prototype prefix', () => {
    const prototypes = routeList().filter(({ info }) => info.family === 'prototype');
    expect(prototypes.map(({ key }) => key)).toEqual(['POST /v1/sessions', 'POST /v1/sessions/:session_id/runs', 'GET /v1/sessions/:session_id/events', 'GET /v1/workspaces']);
    for (const { info } of prototypes) expect(info.documented).toBe(false);
    expect(JSON.stringify(openApiDocument)).not.toMatch(/\/v1\/(sessions|workspaces)/);
    expect(FAMILY_PREFIXES.filter(([, family]) => family === 'prototype').map(([prefix]) => prefix)).toEqual(['/v1/sessions', '/v1/workspaces']);
  });
});

describe('routeFamily', () => {
  const cases: [string, RouteFamily][] = [
    ['/api/open/v1/models/sim-chat/chat', 'open'],
    ['/api/open/v1/models/sim-chat/chat/anthropic', 'open'],
    ['/api/open/v1/models/sim-image/images/generations', 'open'],
    ['/api/open/v1/models/sim-image/images/tasks/0b0c6a8e-1111-4a4a-8a8a-000000000000', 'open'],
    ['/v1/chat/completions', 'compat'],
    ['/v1/messages', 'compat'],
    ['/v1/models', 'compat'],
    ['/api/member/v1/entitlement', 'member'],
    ['/api/member/v1/models/sim-chat/chat', 'member'],
    ['/api/distribution/api-credit/balance', 'console'],
    ['/api/distribution/api-credit/bills/export?format=csv&from=2025-01-01T00:00:00Z', 'console'],
    ['/api/consumer/orders', 'orders'],
    ['/api/consumer/checkout/callback', 'orders'],
    ['/admin/v1/accounts', 'admin'],
    ['/admin/v1/reconciliation', 'admin'],
    ['/api/open/v1/catalog/models', 'catalog'],
    ['/api/open/v1/capabilities', 'catalog'],
    ['/api/open/v1/openapi.json', 'catalog'],
    ['/v1/sessions', 'prototype'],
    ['/v1/sessions/abc/events', 'prototype'],
    ['/v1/workspaces', 'prototype'],
    ['/console', 'console_ui'],
    ['/console/assets/main-ABCDEFGH.js', 'console_ui'],
    ['/consoles', 'other'],
    ['/healthz', 'health'],
    ['/readyz', 'health'],
    ['/metrics', 'health'],
    ['/metrics?name=x', 'health'],
    ['/', 'other'],
    ['/v1/modelsx', 'other'],
    ['/healthzz', 'other'],
    ['/api/open/v2/models/x/chat', 'other'],
  ];

  it.each(cases)('when the path is %s, then the family is %s', (path, family) => {
    expect(routeFamily(path)).toBe(family);
  });

  it('when the path differs only in case, then the family is the same, as Express routes it the same', () => {
    expect(routeFamily('/API/Open/V1/Models/sim-chat/chat')).toBe('open');
    expect(routeFamily('/V1/Chat/Completions')).toBe('compat');
  });
});
