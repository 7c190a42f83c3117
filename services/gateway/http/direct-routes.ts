// The billed calls' routes, served without walking Express's router: POST chat and embeddings,
// the gateway's hot path. Express matches a request against every layer before its route (the
// app's middleware, the health and catalog routes, each router's routes) and sets its request
// up on the way; skipping that gave the embedded gateway about 5 % more chats per second under
// load (docs/benchmarks.md, 2026-11-27, night). A direct route runs the same handlers as the
// route Express has, in the same order, with the request set up as Express would set it
// (prototypes, `req.params`, `req.route`), and its errors go to the error handlers Express would
// reach (route-table.test.ts holds each against Express's own). It is taken only for the route's
// canonical spelling (`POST` and the exact path, no query string); every other request, and
// every spelling Express also accepts (a trailing slash, other letter case), goes to Express,
// which has the same handlers registered. No router library: one (find-my-way and its kind)
// would match paths, and the cost here is not matching five paths but the layers before them.

import { IncomingMessage, ServerResponse, type ServerOptions } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { notFound } from '../../../lib/error-responder';

interface DirectRoute {
  /** The route's path as registered (`/a/:id/b`): `req.route.path`, which the access log and spans name. */
  path: string;
  /** Matches the whole request target: the path, no query string. */
  pattern: RegExp;
  params: readonly string[];
  /** The front middleware and the route's handlers, in the order they run. */
  chain: readonly RequestHandler[];
  /** Where Express sends an error from this route, in turn: the route's error handler, then the app's. */
  errors: readonly ErrorRequestHandler[];
}

/** `/a/:id/b` as a pattern over the request target; a parameter is one whole segment. */
function compile(path: string): { pattern: RegExp; params: string[] } {
  const params: string[] = [];
  const segments = path.split('/').slice(1).map((segment) => {
    if (segment.startsWith(':')) {
      const name = segment.slice(1);
      if (!/^\w+$/.test(name)) throw new TypeError(`direct route ${path}: a parameter is ':' and a name`);
      params.push(name);
      return '([^/?#]+)';
    }
    if (!/^[\w.-]+$/.test(segment)) throw new TypeError(`direct route ${path}: only literal segments and ':name' parameters`);
    return segment.replace(/\./g, '\\.');
  });
  return { pattern: new RegExp(`^/${segments.join('/')}$`), params };
}

/**
 * The request and response classes for the HTTP server (`createServer`'s options), their
 * instances born with Express's prototypes (`app.request`, `app.response`) in their chain: a
 * direct route then has no prototype to change on each call. Changing a live object's prototype
 * (`Object.setPrototypeOf`, as Express does on each request) cost 3.4 µs per chat on average
 * under load and up to 7 µs at c=1, timed in place (docs/benchmarks.md, 2026-11-28). Express
 * still sets its own prototypes on the requests it routes.
 */
export function serverClasses(app: Express): ServerOptions {
  class AppRequest extends IncomingMessage {}
  class AppResponse<R extends IncomingMessage = IncomingMessage> extends ServerResponse<R> {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  return { IncomingMessage: AppRequest, ServerResponse: AppResponse };
}

export class DirectRoutes {
  private readonly routes: DirectRoute[] = [];
  /** The app's last route (lib/error-responder.ts): what Express reaches when no route answered. */
  private readonly lastRoute = notFound();

  /**
   * @param front the app's first middleware (request id, observation), run first on a direct route too
   * @param errors the app's error handler: where a route's errors go unless the route names its own
   */
  constructor(private readonly front: readonly RequestHandler[], private readonly errors: ErrorRequestHandler) {}

  /**
   * `router.post(path, ...handlers)`, and the same route served directly. `errors` must be the
   * handler Express reaches from this route (a router-level one, registered by the caller).
   */
  post(router: Router, path: string, handlers: readonly RequestHandler[], errors: ErrorRequestHandler = this.errors): void {
    const compiled = compile(path);
    router.post(path, ...handlers);
    this.routes.push({ path, ...compiled, chain: [...this.front, ...handlers], errors: errors === this.errors ? [errors] : [errors, this.errors] });
  }

  /** Each route with the whole chain it runs and its error handler: what a test holds against Express's own. */
  described(): { path: string; chain: RequestHandler[]; errors: ErrorRequestHandler }[] {
    return this.routes.map((route) => ({ path: route.path, chain: [...route.chain], errors: route.errors[0] }));
  }

  /** The HTTP server's request listener: a direct route when the request names one, Express otherwise. */
  listener(app: Express): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      const found = req.method === 'POST' ? this.match(req.url ?? '') : undefined;
      if (!found) return void app(req as Request, res as Response);
      const request = req as Request;
      const response = res as Response;
      // What Express's app.handle and router do before a route's handlers run. A server made
      // with `serverClasses` has its request and response born with Express's prototypes.
      request.res = response;
      response.req = request;
      if (!Object.prototype.isPrototypeOf.call(app.request, request)) Object.setPrototypeOf(request, app.request);
      if (!Object.prototype.isPrototypeOf.call(app.response, response)) Object.setPrototypeOf(response, app.response);
      response.locals ??= Object.create(null) as Record<string, unknown>;
      request.originalUrl = request.url;
      request.baseUrl = '';
      request.params = found.params;
      request.route = { path: found.route.path };
      this.run(found.route, request, response);
    };
  }

  /** The route and its decoded parameters; undefined for anything Express should see (a parameter that is not valid percent-encoding too). */
  private match(url: string): { route: DirectRoute; params: Record<string, string> } | undefined {
    for (const route of this.routes) {
      const matched = route.pattern.exec(url);
      if (!matched) continue;
      const params: Record<string, string> = {};
      try {
        route.params.forEach((name, index) => {
          const raw = matched[index + 1];
          params[name] = raw.includes('%') ? decodeURIComponent(raw) : raw;
        });
      } catch {
        return undefined;
      }
      return { route, params };
    }
    return undefined;
  }

  /** The front middleware, then the route's handlers, as Express chains them (a rejected handler's promise is an error). */
  private run(route: DirectRoute, req: Request, res: Response): void {
    const fail = (error: unknown) => this.answerError(route.errors, 0, error, req, res);
    const step = (index: number): NextFunction => (error?: unknown) => {
      if (error === 'route' || error === 'router') return this.notFound(req, res);
      if (error) return fail(error);
      const handler = route.chain[index];
      if (!handler) return this.notFound(req, res);
      try {
        const result: unknown = handler(req, res, step(index + 1));
        if (result instanceof Promise) result.then(undefined, (reason: unknown) => fail(reason || new Error('Rejected promise')));
      } catch (thrown) {
        fail(thrown);
      }
    };
    step(0)();
  }

  /**
   * The error handlers in turn, as Express runs them: one that passes the error on (or throws)
   * hands it to the next. Past the last, what Express's final handler does: the status the error
   * names (else 500; 404 when a handler called next() without one) with no body, or the
   * connection cut once the answer has begun.
   */
  private answerError(handlers: readonly ErrorRequestHandler[], index: number, error: unknown, req: Request, res: Response): void {
    const handler = handlers[index];
    if (!handler) {
      if (res.headersSent) return void res.destroy();
      const status = error === undefined ? 404 : (error as { status?: unknown } | null)?.status;
      res.statusCode = typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
      return void res.end();
    }
    // next() without an error: handled, and Express goes on to the app's later layers (its 404).
    const handled = () => (handler === this.errors ? this.answerError([], 0, undefined, req, res) : this.notFound(req, res));
    try {
      handler(error, req, res, (next?: unknown) => (next ? this.answerError(handlers, index + 1, next, req, res) : handled()));
    } catch (thrown) {
      this.answerError(handlers, index + 1, thrown, req, res);
    }
  }

  /** Past a direct route, Express finds no other route for the request: the app's last route, its 404, answered by the app's error handler. */
  private notFound(req: Request, res: Response): void {
    void this.lastRoute(req, res, (error?: unknown) => this.answerError([this.errors], 0, error, req, res));
  }
}
