// Each request of the gateway, observed: its trace context (continued from `traceparent` or
// started here, and answered in `traceparent`), one context for every log line it causes, one
// access log line and its metrics when the answer has ended (or the client has left).

import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { metrics } from '../../../lib/metrics';
import { routeFamily } from '../route-table';
import { contextFromHeaders, runRequest, traceparentOf, type RequestContext } from '../../../lib/request-context';
import { endSpan, incomingContext, SpanKind, tracingEnabled, untracedPath } from '../../../lib/tracing';

/** Not an HTTP status: the client went away before an answer began (nginx's convention). */
const CLIENT_CLOSED = 499;

/**
 * The access line's route when no route answered (a path or method the gateway does not have,
 * OPTIONS, a refusal before routing): one fixed value, never the path, which a client chooses.
 */
export const NO_ROUTE = '(none)';
/** Method and route of a request the HTTP parser refused: neither was read. */
export const UNPARSED = '(unparsed)';

interface AccessFields {
  method: string;
  family: string;
  route: string;
  status: number;
  durationMs?: number;
  aborted?: true;
}

/**
 * The one access line of a request. Only these fields: never headers, query strings or bodies,
 * which can carry credentials. The ids are given explicitly: the line may be written outside the
 * request's context ('finish', the parser's error).
 */
function logAccess(logger: Logger, context: RequestContext, fields: AccessFields): void {
  logger.info({ requestId: context.requestId, traceId: context.traceId, ...fields }, 'request completed');
}

/**
 * A request Node's HTTP parser refused, before any middleware saw it: its ids (a new trace,
 * sampled, as every request's), its access line and its count, with no method or route read
 * from it. Not timed: when it began is unknown.
 */
export function observeUnparsed(logger: Logger, status: number): RequestContext {
  const context = contextFromHeaders({});
  metrics.httpRequest('other', undefined, status, undefined);
  logAccess(logger, context, { method: UNPARSED, family: 'other', route: UNPARSED, status });
  return context;
}

function tracedContext(req: Request, family: string): RequestContext {
  const path = req.originalUrl.split('?')[0];
  return incomingContext(req.headers, req.method, {
    kind: SpanKind.SERVER,
    // The path only: a query string can carry anything.
    attributes: { 'http.request.method': req.method, 'url.path': path, 'payg.route_family': family },
  }, req.requestId, !untracedPath(path));
}

/** Runs after requestId(), whose id it takes. */
export function observeRequests(logger: Logger) {
  return function observeRequest(req: Request, res: Response, next: NextFunction): void {
    const started = performance.now();
    // Taken now: routers rewrite req.url while they run.
    const family = routeFamily(req.originalUrl);
    // Untraced (the default), the span's name and attributes are not made at all.
    const context = tracingEnabled() ? tracedContext(req, family) : contextFromHeaders(req.headers, req.requestId);
    res.setHeader('traceparent', traceparentOf(context));
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      const status = res.headersSent ? res.statusCode : CLIENT_CLOSED;
      const durationMs = performance.now() - started;
      const route: unknown = req.route?.path;
      metrics.httpRequest(family, req.method, status, durationMs / 1000);
      if (context.span) {
        // The route's own path, as on the access line: every router is mounted at the root, so it
        // is the whole pattern. req.baseUrl is no part of it: an error handler mounted at a path
        // (the compatibility routes' wire-shaped errors) leaves its path there when it answers.
        if (typeof route === 'string') context.span.updateName(`${req.method} ${route}`);
        endSpan(context.span, status >= 500 ? `status ${status}` : undefined, {
          'http.response.status_code': status,
          ...(typeof route === 'string' ? { 'http.route': route } : {}),
          // The client closed the connection before the answer was whole (499 when before it began).
          ...(res.writableFinished ? {} : { 'payg.client_closed': true }),
        });
      }
      if (!logger.isLevelEnabled('info')) return;
      logAccess(logger, context, {
        method: req.method,
        family,
        route: typeof route === 'string' ? route : NO_ROUTE,
        status,
        durationMs: Math.round(durationMs * 10) / 10,
        ...(res.writableFinished ? {} : { aborted: true as const }),
      });
    };
    res.once('finish', record);
    res.once('close', record);
    runRequest(req, context, next);
  };
}
