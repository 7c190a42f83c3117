// The gateway's HTTP edge: route families, request id and observation middleware, one error handler,
// and the billed calls' routes also served directly (./http/direct-routes.ts).

import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { routeFamily } from './route-table';
import { PROTOTYPE_HEADER, PROTOTYPE_HEADER_VALUE } from './middleware/prototype';
import express from 'express';
import type { Logger } from 'pino';
import { serveMetrics } from '../../lib/metrics';
import { errorResponder, notFound } from '../../lib/error-responder';
import { traceparentOf } from '../../lib/request-context';
import type { FundsHoldClient } from '../../actors/funds-hold/client';
import type { ActorOutboxClient } from '../../actors/runtime/outbox-client';
import type { Catalog } from '../../catalog/catalog';
import type { OAuthVerifier } from './auth/oauth';
import type { Capability } from './capabilities/gates';
import { CompatGate } from './compat/gate';
import type { Drain } from './drain';
import type { AccountStore } from './accounts/store';
import type { AccountOperator } from './accounts/operator';
import type { AuditLog } from './accounts/audit';
import type { RateAdmission } from './limits/admission';
import { observeRequests, observeUnparsed } from './middleware/observe';
import { requestId } from './middleware/request-id';
import { AccountShare } from './limits/account-share';
import { InstanceBytes } from './limits/body-budget';
import { adminRoutes } from './routes/admin';
import { catalogRoutes } from './routes/catalog';
import { chatRoutes } from './routes/chat';
import { compatRoutes } from './routes/compat';
import { DirectRoutes, serverClasses } from './http/direct-routes';
import type { EmbeddingsAdapters } from './embeddings/use-case';
import { memberRoutes } from './routes/member';
import { consoleRoutes } from './routes/console';
import { consoleUiRoutes } from './routes/console-ui';
import { imageRoutes } from './routes/images';
import type { ImageService } from './images/use-case';
import type { LedgerReader } from './ledger/reader';
import type { OrderService } from './orders/use-case';
import { orderRoutes } from './routes/orders';
import { sessionRoutes } from './routes/sessions';
import { SessionService } from './sessions/use-case';
import { SessionWakeups } from './sessions/wakeups';
import type { PendingSettlements } from './chat/pending-settlements';
import type { Routing } from './chat/provider-call';
import type { CircuitView } from './routing/health';
import type { LeasedFunds } from './funds/leased-funds';
import type { SessionClient } from '../../actors/session/client';
import type { WorkspaceIndexClient } from '../../actors/workspace-index/client';

export interface GatewayDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, EmbeddingsAdapters>;
  funds: FundsHoldClient;
  /** Funds leases for the chat path (GATEWAY_FUNDS_LEASE); undefined: per-request holds. */
  leases?: LeasedFunds;
  /** Every actor's host-level outbox methods: reconciliation's missing events and its repair. */
  outbox: ActorOutboxClient;
  images: ImageService;
  accounts: AccountStore;
  /** The operator's use cases on accounts and keys, and the audit log (docs/auth.md). */
  operator: AccountOperator;
  audit: AuditLog;
  /** Admission of callers under a rate limit (limits/admission.ts). */
  limits?: RateAdmission;
  logger: Logger;
  actorHost: 'embedded' | 'dapr';
  adminToken?: string;
  maxBodyBytes: number;
  /** The request bodies one account may have on the way at once, bytes (GATEWAY_ACCOUNT_BODY_BYTES); absent: not counted. */
  accountBodyBytes?: number;
  /** The bytes of request bodies this instance's calls in progress may hold, all accounts together (the next refused 503 gateway_busy). */
  bodyBytesInFlight?: number;
  /** The session event streams one account may have open at once (GATEWAY_ACCOUNT_EVENT_STREAMS). */
  accountEventStreams?: number;
  /** The model calls each account has running at once (GATEWAY_ACCOUNT_CALLS), shared with the image service. */
  callsRunning?: AccountShare;
  providerTimeoutMs: number;
  holdTtlMs: number;
  /** How often a call records its progress on its hold (and renews it). */
  holdProgress: { everyTokens: number; everyMs: number };
  /** Settles that did not land at once, retried until they do; a shutdown waits for them. */
  settlements: PendingSettlements;
  /** How a profile's upstreams are tried (chat/provider-call.ts); absent: the process's defaults. */
  routing?: Routing;
  /** Each provider entry's circuit, for /readyz (routing/health.ts). */
  upstreams?: () => Record<string, CircuitView>;
  /** Calls in flight, for a graceful shutdown; /readyz answers 503 while it drains. */
  drain?: Drain;
  /** Dependencies of /readyz: each answers whether it is reachable. */
  readiness: Record<string, () => Promise<boolean>>;
  /** The ledger's reads: console pages and exports, reconciliation. */
  ledger: LedgerReader;
  /** Top-up orders and their checkout callbacks. */
  orders: OrderService;
  /** The deployment condition of the compatibility gate. */
  compatEnabled: boolean;
  /** Deployment state of the capability gates: configured providers and accepted delivery channels. */
  capabilityGates: { providers: ReadonlySet<string>; accepted: ReadonlySet<Capability> };
  /** OAuth member tokens; undefined when the member family is not configured. */
  oauth?: OAuthVerifier;
  /** The prototype sessions' actors and settings (docs/sessions.md). */
  sessions: { sessions: SessionClient; workspaces: WorkspaceIndexClient; runLeaseMs: number; pollMs: number };
}

export interface Gateway {
  /** Every route of the gateway. */
  app: express.Express;
  /** The HTTP server's request listener: the billed calls' direct routes, the app for the rest. */
  listener: RequestListener;
  /** The routes the listener serves without the app's router (each also registered in the app). */
  direct: DirectRoutes;
  /** The server's 'clientError' handler: the answer to a request the HTTP parser refused. */
  answerUnparsed: (error: Error & { code?: string }, socket: Duplex) => void;
}

export function createGateway(deps: GatewayDeps): Gateway {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // No route answers OPTIONS (no CORS: the console is served from the gateway's own origin), so
  // it is answered as a route the gateway does not have, never with Express's automatic Allow list.
  const unknownRoute = notFound();
  const noOptions: express.RequestHandler = (req, res, next) => {
    if (req.method !== 'OPTIONS') return next();
    // Under the prototypes' paths every answer is marked, this one too (docs/sessions.md).
    if (routeFamily(req.url) === 'prototype') res.setHeader(PROTOTYPE_HEADER, PROTOTYPE_HEADER_VALUE);
    unknownRoute(req, res, next);
  };
  const front = [requestId(), observeRequests(deps.logger), noOptions];
  const errors = errorResponder({ logger: deps.logger });
  const direct = new DirectRoutes(front, errors);
  for (const middleware of front) app.use(middleware);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (deps.drain?.draining) {
      res.status(503).json({ status: 'draining', checks: {} });
      return;
    }
    const checks: Record<string, boolean> = {};
    await Promise.all(Object.entries(deps.readiness).map(async ([name, check]) => {
      checks[name] = await check().catch(() => false);
    }));
    const ready = Object.values(checks).every(Boolean);
    // Which catalog file is in force: what an operator reads after a reload (or a refused one).
    const { version, loadedAt } = deps.catalog.loaded;
    // Each upstream's circuit: shown, never a reason to be unready (an open circuit is still tried last).
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks, catalog: { version, loaded_at: loadedAt.toISOString() }, upstreams: deps.upstreams?.() ?? {} });
  });
  app.get('/metrics', serveMetrics);

  app.use(catalogRoutes(deps.catalog, {
    actorHost: deps.actorHost,
    compatEnabled: deps.compatEnabled,
    providers: deps.capabilityGates.providers,
    acceptedDelivery: deps.capabilityGates.accepted,
    oauthConfigured: deps.oauth !== undefined,
  }));
  const bodyBudget = deps.accountBodyBytes !== undefined
    ? { perAccount: new AccountShare(deps.accountBodyBytes, 'body_bytes_in_flight'), ...(deps.bodyBytesInFlight !== undefined ? { instance: new InstanceBytes(deps.bodyBytesInFlight) } : {}) }
    : undefined;
  const eventStreams = deps.accountEventStreams !== undefined ? new AccountShare(deps.accountEventStreams, 'event_streams') : undefined;
  const chat = {
    bodyBudget,
    ...(deps.callsRunning !== undefined ? { callsRunning: deps.callsRunning } : {}),
    catalog: deps.catalog,
    providers: deps.providers,
    funds: deps.funds,
    leases: deps.leases,
    maxBodyBytes: deps.maxBodyBytes,
    providerTimeoutMs: deps.providerTimeoutMs,
    holdTtlMs: deps.holdTtlMs,
    holdProgress: deps.holdProgress,
    settlements: deps.settlements,
    logger: deps.logger,
    capabilityGates: deps.capabilityGates,
    drain: deps.drain,
    limits: deps.limits,
    routing: deps.routing,
  };
  const credentials = { accounts: deps.accounts, oauth: deps.oauth };
  app.use(chatRoutes(chat, deps.accounts, direct));
  app.use(compatRoutes({ ...chat, gate: new CompatGate(deps.compatEnabled, deps.funds) }, deps.accounts, deps.logger, direct));
  app.use(memberRoutes(chat, credentials));
  app.use(imageRoutes(deps.images, deps.accounts, deps.maxBodyBytes, bodyBudget));
  app.use(consoleRoutes({ credentials, funds: deps.funds, ledger: deps.ledger, limits: deps.limits }));
  app.use(consoleUiRoutes());
  app.use(adminRoutes({ adminToken: deps.adminToken, accounts: deps.accounts, operator: deps.operator, audit: deps.audit, funds: deps.funds, outbox: deps.outbox, ledger: deps.ledger, orders: deps.orders }));
  app.use(orderRoutes(deps.orders, credentials, deps.limits));
  const sessions = new SessionService({ ...deps.sessions, chat, leaseMs: deps.sessions.runLeaseMs, wakeups: new SessionWakeups() });
  app.use(sessionRoutes(sessions, deps.accounts, deps.maxBodyBytes, bodyBudget, deps.limits, eventStreams));
  app.use(notFound());
  app.use(errors);
  const answerUnparsed = unparsedAnswerer(deps.logger);
  return { app, listener: onlyHttp1(direct.listener(app), answerUnparsed), direct, answerUnparsed };
}

/**
 * Node's parser takes a request line that says HTTP/0.9 or HTTP/2.0 and reads it as HTTP/1.x
 * (headers, body and all); only other versions does it refuse. The gateway serves HTTP/1.0 and
 * HTTP/1.1: any other version is answered 400 as a request the parser refused, before any route.
 */
function onlyHttp1(listener: RequestListener, answerUnparsed: Gateway['answerUnparsed']): RequestListener {
  return (req, res) => {
    if (req.httpVersionMajor === 1) return listener(req, res);
    answerUnparsed(Object.assign(new Error(`HTTP/${req.httpVersion} is not served`), { code: 'HPE_INVALID_VERSION' }), req.socket);
  };
}

/** The gateway's HTTP server, listening; `ready` once it is (a failure to listen is the server's 'error'). */
export function listenGateway(gateway: Gateway, port: number, host: string, ready?: () => void, requestTimeoutMs = 60_000): Server {
  // A request not received whole within requestTimeoutMs (a body sent slowly, holding its bytes
  // in memory) is answered 408 and its connection closed; Node looks every quarter of it (≤ 30 s).
  const timeouts = { requestTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(requestTimeoutMs / 4))) };
  const server = createServer({ ...serverClasses(gateway.app), ...timeouts }, gateway.listener);
  server.on('clientError', gateway.answerUnparsed);
  return server.listen(port, host, ready);
}

/**
 * A request Node's parser refused before the app saw it (its line and headers above Node's 16 KiB
 * limit: 431; anything else it cannot parse: 400) is answered in the gateway's error shape with a
 * request id and a traceparent, as every answer is, logged and counted as every request is
 * (observeUnparsed), then the connection is closed.
 */
function unparsedAnswerer(logger: Logger): Gateway['answerUnparsed'] {
  return (error, socket) => {
    // Not a request: the connection broke, and nothing can be answered. Nor can anything be
    // written once an answer on this connection has begun (it would corrupt that answer).
    const answering = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (!socket.writable || answering?.headersSent || (error.code !== undefined && ['ECONNRESET', 'EPIPE'].includes(error.code))) {
      socket.destroy();
      return;
    }
    // A request whose body did not arrive in time is one the app already has (its headers were
    // parsed): answered through its own response, so it is logged, counted and traced once, as
    // itself (its route, its request id and trace), not as a second, unparsed request. (A request
    // in progress that was received whole is not the one that timed out: a pipelined one behind it.)
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && answering && !answering.req.complete) {
      answerTimedOut(answering);
      letGo(socket);
      return;
    }
    const [status, message] = error.code === 'HPE_HEADER_OVERFLOW'
      ? ['431 Request Header Fields Too Large', 'the request line and headers are larger than 16 KiB']
      // A request (a body sent slowly) not received whole within GATEWAY_REQUEST_TIMEOUT_MS.
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? ['408 Request Timeout', 'the request was not received whole in time']
        : ['400 Bad Request', 'the request is not valid HTTP/1.1'];
    const context = observeUnparsed(logger, Number(status.slice(0, 3)));
    const body = JSON.stringify({ error: { code: 'invalid_request', message, request_id: context.requestId } });
    socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${context.requestId}\r\ntraceparent: ${traceparentOf(context)}\r\nconnection: close\r\n\r\n${body}`);
    letGo(socket);
  };
}

/**
 * 408 through the request's own response, which already carries its x-request-id and traceparent.
 * Once it is written the request is destroyed: a finished response takes its request off the
 * connection, whose close would then never reach it, and its body's bytes must leave the
 * account's budget now (json-body.ts gives them back on the request's close).
 */
function answerTimedOut(res: ServerResponse): void {
  const body = JSON.stringify({ error: { code: 'invalid_request', message: 'the request was not received whole in time', request_id: res.getHeader('x-request-id') } });
  res.once('finish', () => res.req.destroy());
  res.writeHead(408, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

/**
 * The answer written, the connection only half-closed: a client that keeps its side open (still
 * sending a timed-out body) would keep the request, and the bytes its body counts in the account's
 * and the instance's budgets, until it chose to close. It is given a moment to read the answer, then let go.
 */
function letGo(socket: Duplex): void {
  const linger = setTimeout(() => socket.destroy(), 1000);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}
