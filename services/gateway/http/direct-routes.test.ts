import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { Router, type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { GatewayError } from '../../../lib/errors';
import { DirectRoutes, serverClasses } from './direct-routes';

/** A small app shaped like the gateway's: front middleware, a GET route, a router with direct routes, a 404 and an error handler. */
function build() {
  const app = express();
  const seen: string[] = [];
  const front: RequestHandler[] = [
    (req, res, next) => {
      seen.push('front');
      res.setHeader('x-front', '1');
      next();
    },
  ];
  const appErrors: ErrorRequestHandler = (error, _req, res, _next) => {
    const status = error instanceof GatewayError ? error.status : ((error as { status?: number }).status ?? 500);
    res.status(status).json({ by: 'app', message: (error as Error).message });
  };
  const routeErrors: ErrorRequestHandler = (error, _req, res, _next) => {
    res.status(418).json({ by: 'route', message: (error as Error).message });
  };
  const direct = new DirectRoutes(front, appErrors);
  for (const middleware of front) app.use(middleware);
  app.get('/ping', (_req, res) => void res.json({ pong: true }));
  const router = Router();
  const answer: RequestHandler = (req, res) => {
    seen.push('answer');
    // `set`: the request and response had their prototypes set to Express's (not born with them).
    const app = req.app as Express;
    const set = Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response;
    res.json({ params: req.params, route: req.route?.path, originalUrl: req.originalUrl, baseUrl: req.baseUrl, path: req.path, viaProto: typeof res.status, set });
  };
  direct.post(router, '/m/:id/chat', [answer]);
  direct.post(router, '/fails/:how', [(req, _res, next) => {
    const how = req.params.how;
    if (how === 'next') return next(new Error('passed to next'));
    if (how === 'throw') throw new Error('thrown');
    if (how === 'passes') return next();
    if (how === 'route') return next('route');
    return Promise.reject(new Error('rejected'));
  }], routeErrors);
  router.use('/fails', routeErrors);
  // An error handler that fails in turn, passes the error on, or calls it handled.
  const unsure: ErrorRequestHandler = (error, req, _res, next) => {
    if (req.originalUrl.startsWith('/errs/throws')) throw new Error('the handler broke');
    if (req.originalUrl.startsWith('/errs/passes')) return next(error);
    next();
  };
  direct.post(router, '/errs/:how', [(_req, _res, next) => next(new Error('first'))], unsure);
  router.use('/errs', unsure);
  app.use(router);
  app.use((req, _res, next) => next(new GatewayError('not_found', `no route ${req.method} ${req.path}`)));
  app.use(appErrors);
  return { app, direct, seen };
}

let server: Server;
let base: string;
let built: ReturnType<typeof build>;
let expressCalls = 0;

beforeAll(async () => {
  built = build();
  // Counts what reaches Express's own handling (app.request and app.response stay the app's).
  const counted = Object.assign((req: express.Request, res: express.Response) => {
    expressCalls++;
    built.app(req, res);
  }, { request: built.app.request, response: built.app.response }) as unknown as Express;
  server = createServer(built.direct.listener(counted)).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

async function post(path: string, method = 'POST') {
  const before = expressCalls;
  const response = await fetch(`${base}${path}`, { method, ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}) });
  return { status: response.status, front: response.headers.get('x-front'), body: await response.json() as Record<string, unknown>, viaExpress: expressCalls > before };
}

describe('DirectRoutes', () => {
  it('when a POST names a direct route exactly, then its handlers run after the front middleware, set up as Express sets them, without Express', async () => {
    built.seen.length = 0;
    const answer = await post('/m/a%20b/chat');
    expect(answer).toEqual({
      status: 200,
      front: '1',
      viaExpress: false,
      body: { params: { id: 'a b' }, route: '/m/:id/chat', originalUrl: '/m/a%20b/chat', baseUrl: '', path: '/m/a%20b/chat', viaProto: 'function', set: true },
    });
    expect(built.seen).toEqual(['front', 'answer']);
  });

  it('when the server is made with serverClasses, then a direct route\'s request and response are born with Express\'s prototypes, none set, and Express still serves the rest', async () => {
    const app = built.app;
    const classed = createServer(serverClasses(app), built.direct.listener(app)).listen(0, '127.0.0.1');
    await new Promise((resolve) => classed.once('listening', resolve));
    try {
      const origin = `http://127.0.0.1:${(classed.address() as AddressInfo).port}`;
      const direct = await fetch(`${origin}/m/plain/chat`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(direct.status).toBe(200);
      expect(await direct.json()).toEqual({ params: { id: 'plain' }, route: '/m/:id/chat', originalUrl: '/m/plain/chat', baseUrl: '', path: '/m/plain/chat', viaProto: 'function', set: false });
      // Through Express (a trailing slash): Express sets its own prototypes, as on any server.
      const routed = await fetch(`${origin}/m/plain/chat/`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(await routed.json()).toMatchObject({ params: { id: 'plain' }, set: true });
      expect(await (await fetch(`${origin}/ping`)).json()).toEqual({ pong: true });
    } finally {
      await new Promise((resolve) => classed.close(resolve));
    }
  });

  it.each([
    ['a trailing slash', '/m/x/chat/'],
    ['other letter case', '/M/x/Chat'],
    ['a query string', '/m/x/chat?a=1'],
  ])('when the path has %s, then Express serves it, with the same handlers', async (_case, path) => {
    const answer = await post(path);
    expect(answer.viaExpress).toBe(true);
    expect(answer.status).toBe(200);
    expect(answer.front).toBe('1');
    expect(answer.body.params).toEqual({ id: 'x' });
    expect(answer.body.route).toBe('/m/:id/chat');
  });

  it('when a parameter is not valid percent-encoding, then Express answers it (its own 400), not the direct route', async () => {
    const answer = await post('/m/%E0%A4%A/chat');
    expect(answer.viaExpress).toBe(true);
    expect(answer.status).toBe(400);
  });

  it('when the method is not POST, then Express answers (here its 404)', async () => {
    const answer = await post('/m/x/chat', 'GET');
    expect(answer).toMatchObject({ viaExpress: true, status: 404, body: { by: 'app' } });
  });

  it.each([
    ['next', 'passed to next'],
    ['throw', 'thrown'],
    ['reject', 'rejected'],
  ])('when a handler fails by %s, then the route\'s error handler answers, as from Express', async (how, message) => {
    const direct = await post(`/fails/${how}`);
    const viaExpress = await post(`/fails/${how}/`);
    expect(direct).toEqual({ status: 418, front: '1', viaExpress: false, body: { by: 'route', message } });
    expect(viaExpress).toEqual({ ...direct, viaExpress: true });
  });

  it.each(['passes', 'route'])('when the last handler %s on, then the app\'s 404 answers, as from Express', async (how) => {
    const direct = await post(`/fails/${how}`);
    const viaExpress = await post(`/fails/${how}/`);
    expect(direct).toEqual({ status: 404, front: '1', viaExpress: false, body: { by: 'app', message: `no route POST /fails/${how}` } });
    expect(viaExpress).toEqual({ ...direct, viaExpress: true, body: { by: 'app', message: `no route POST /fails/${how}/` } });
  });

  it.each([
    ['throws', 500, 'the handler broke'],
    ['passes', 500, 'first'],
  ])('when the route\'s error handler %s, then the app\'s error handler answers, as from Express', async (how, status, message) => {
    const direct = await post(`/errs/${how}`);
    const viaExpress = await post(`/errs/${how}/`);
    expect(direct).toEqual({ status, front: '1', viaExpress: false, body: { by: 'app', message } });
    expect(viaExpress).toEqual({ ...direct, viaExpress: true });
  });

  it('when the route\'s error handler calls the error handled, then the app\'s 404 answers, as from Express', async () => {
    const direct = await post('/errs/handled');
    const viaExpress = await post('/errs/handled/');
    expect(direct).toEqual({ status: 404, front: '1', viaExpress: false, body: { by: 'app', message: 'no route POST /errs/handled' } });
    expect(viaExpress).toEqual({ ...direct, viaExpress: true, body: { by: 'app', message: 'no route POST /errs/handled/' } });
  });

  it('when a route is registered with anything but literal segments and :name parameters, then it is refused', () => {
    const direct = new DirectRoutes([], () => undefined);
    expect(() => direct.post(Router(), '/a/*rest', [])).toThrow(/only literal segments/);
    expect(() => direct.post(Router(), '/a/:id?', [])).toThrow(/a parameter is ':' and a name/);
  });
});
