// The gateway's routes, in one table: each route with its family (the metrics label of every
// answer under it, docs/observability.md) and whether the OpenAPI document describes it. The
// families' path prefixes (for any path, a 404 too), the prototype marking and the route coverage
// test (route-table.test.ts: the table is what Express registers and what the document describes)
// all read it.

import type { RouteFamily } from '../../lib/metrics';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type RouteKey = `${Method} /${string}`;

export interface RouteInfo {
  family: Exclude<RouteFamily, 'other'>;
  /** In the OpenAPI document (every route but the probes, the metrics and the legacy prototypes). */
  documented: boolean;
}

const open = <F extends RouteInfo['family']>(family: F) => ({ family, documented: true }) as const;
const undocumented = <F extends RouteInfo['family']>(family: F) => ({ family, documented: false }) as const;

/** Every route the gateway registers, in Express's syntax (`:name` parameters). */
export const ROUTES = {
  'GET /healthz': undocumented('health'),
  'GET /readyz': undocumented('health'),
  'GET /metrics': undocumented('health'),

  'GET /api/open/v1/catalog/models': open('catalog'),
  'GET /api/open/v1/capabilities': open('catalog'),
  'GET /api/open/v1/openapi.json': open('catalog'),

  'POST /api/open/v1/models/:id/chat': open('open'),
  'POST /api/open/v1/models/:id/chat/anthropic': open('open'),
  'POST /api/open/v1/models/:id/images/generations': open('open'),
  'GET /api/open/v1/models/:id/images/tasks/:taskId': open('open'),

  'GET /v1/models': open('compat'),
  'GET /v1/models/:id': open('compat'),
  'POST /v1/chat/completions': open('compat'),
  'POST /v1/messages': open('compat'),
  'POST /v1/messages/count_tokens': open('compat'),
  'POST /v1/embeddings': open('compat'),

  'GET /api/member/v1/entitlement': open('member'),
  'POST /api/member/v1/models/:id/chat': open('member'),
  'POST /api/member/v1/models/:id/chat/anthropic': open('member'),

  'GET /api/distribution/api-credit/balance': open('console'),
  'GET /api/distribution/api-credit/limits': open('console'),
  'GET /api/distribution/api-credit/spending': open('console'),
  'GET /api/distribution/api-credit/bills/page': open('console'),
  'GET /api/distribution/api-credit/usage/page': open('console'),
  'GET /api/distribution/api-credit/bills/export': open('console'),
  'GET /api/distribution/api-credit/usage/export': open('console'),
  'POST /api/distribution/api-credit/bills/export': open('console'),
  'POST /api/distribution/api-credit/usage/export': open('console'),

  'POST /api/consumer/orders': open('orders'),
  'GET /api/consumer/orders/:orderId': open('orders'),
  'POST /api/consumer/checkout/callback': open('orders'),

  'POST /admin/v1/accounts': open('admin'),
  'GET /admin/v1/accounts': open('admin'),
  'GET /admin/v1/accounts/:accountId': open('admin'),
  'PATCH /admin/v1/accounts/:accountId': open('admin'),
  'POST /admin/v1/accounts/:accountId/suspend': open('admin'),
  'POST /admin/v1/accounts/:accountId/unsuspend': open('admin'),
  'POST /admin/v1/accounts/:accountId/debits': open('admin'),
  'GET /admin/v1/accounts/:accountId/api-keys': open('admin'),
  'POST /admin/v1/accounts/:accountId/api-keys': open('admin'),
  'DELETE /admin/v1/api-keys/:apiKeyId': open('admin'),
  'PATCH /admin/v1/api-keys/:apiKeyId': open('admin'),
  'POST /admin/v1/api-keys/:apiKeyId/rotate': open('admin'),
  'GET /admin/v1/audit': open('admin'),
  'POST /admin/v1/accounts/:accountId/credits': open('admin'),
  'POST /admin/v1/accounts/:accountId/orders': open('admin'),
  'GET /admin/v1/reconciliation': open('admin'),
  'POST /admin/v1/reconciliation/repair': open('admin'),

  // Legacy prototypes (docs/sessions.md): kept out of the open navigation and marked on every answer.
  // The web console (docs/console.md, "Web console"): a page and its assets, not API routes.
  'GET /console': undocumented('console_ui'),
  'GET /console/assets/:file': undocumented('console_ui'),

  'POST /v1/sessions': undocumented('prototype'),
  'POST /v1/sessions/:session_id/runs': undocumented('prototype'),
  'GET /v1/sessions/:session_id/events': undocumented('prototype'),
  'GET /v1/workspaces': undocumented('prototype'),
} as const satisfies Record<RouteKey, RouteInfo>;

type Table = typeof ROUTES;
/** `:name` → `{name}`: a path parameter as OpenAPI writes it. */
type OpenApiPathOf<P extends string> = P extends `${infer A}:${infer Name}/${infer Rest}`
  ? `${A}{${Name}}/${OpenApiPathOf<Rest>}`
  : P extends `${infer A}:${infer Name}` ? `${A}{${Name}}` : P;
type DocumentedKey = { [K in keyof Table]: Table[K]['documented'] extends true ? K : never }[keyof Table];
/**
 * What the OpenAPI document must describe, from the table: each documented path (OpenAPI syntax)
 * with its methods in lower case. openapi.ts ties its `paths` to it, so a documented route
 * without its operation, or an operation for a route the table lacks, does not compile.
 */
export type DocumentedOperations = {
  [K in DocumentedKey as K extends `${string} ${infer P}` ? OpenApiPathOf<P> : never]: K extends `${infer M} ${string}` ? Lowercase<M> : never;
};

/**
 * Each family's path prefixes: a path under one (whole segments, any case, as Express matches)
 * belongs to the family, a route or not. First match wins, so the catalog comes before the rest of
 * /api/open/v1. The coverage test checks that every route of the table falls in its own family.
 */
export const FAMILY_PREFIXES: readonly (readonly [string, RouteInfo['family']])[] = [
  ['/healthz', 'health'],
  ['/readyz', 'health'],
  ['/metrics', 'health'],
  ['/api/open/v1/catalog', 'catalog'],
  ['/api/open/v1/capabilities', 'catalog'],
  ['/api/open/v1/openapi.json', 'catalog'],
  ['/api/open/v1/models', 'open'],
  ['/v1/chat', 'compat'],
  ['/v1/messages', 'compat'],
  ['/v1/embeddings', 'compat'],
  ['/v1/models', 'compat'],
  ['/v1/sessions', 'prototype'],
  ['/v1/workspaces', 'prototype'],
  ['/api/member', 'member'],
  ['/api/distribution', 'console'],
  ['/api/consumer', 'orders'],
  ['/admin', 'admin'],
  ['/console', 'console_ui'],
];

/** Every path under these is a prototype route (and marked, including its 401, 404 and 400 answers). */
export const PROTOTYPE_PREFIXES = FAMILY_PREFIXES.filter(([, family]) => family === 'prototype').map(([prefix]) => prefix);

/** Each prefix with its trailing slash, made once: this runs on every request. */
const FAMILY_SEGMENTS = FAMILY_PREFIXES.map(([prefix, family]) => [prefix, `${prefix}/`, family] as const);

/** The route family of a request path (query string allowed); Express matches paths case-insensitively, so does this. */
export function routeFamily(url: string): RouteFamily {
  const query = url.indexOf('?');
  const path = (query < 0 ? url : url.slice(0, query)).toLowerCase();
  for (const [prefix, segment, family] of FAMILY_SEGMENTS) {
    // Whole segments only: /v1/modelsx is not /v1/models.
    if (path === prefix || path.startsWith(segment)) return family;
  }
  return 'other';
}

/** The table's routes as method, Express path and OpenAPI path (`{name}` parameters). */
export function routeList(): { key: RouteKey; method: Method; path: string; openApiPath: string; info: RouteInfo }[] {
  return Object.entries(ROUTES).map(([key, info]) => {
    const [method, path] = key.split(' ') as [Method, string];
    return { key: key as RouteKey, method, path, openApiPath: path.replace(/:([A-Za-z_]+)/g, '{$1}'), info };
  });
}
