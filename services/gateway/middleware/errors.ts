// The one error middleware: every failure leaves as {"error":{code,message,param?,request_id,...}}.

import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { GatewayError, toGatewayError } from '../../../lib/errors';

export function errorBody(error: GatewayError, requestId: string) {
  return { error: { code: error.code, message: error.message, ...(error.param ? { param: error.param } : {}), request_id: requestId, ...(error.extra ?? {}) } };
}

/**
 * Express itself refuses some requests before any route runs, with an http-errors style error
 * (a `status` in 4xx): a path segment that is not valid percent-encoding is the one known case.
 * That is the client's input, never a 5xx.
 */
function fromExpress(error: unknown): GatewayError | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  return new GatewayError('invalid_request', error instanceof URIError ? 'the request path is not valid percent-encoding' : 'the request is malformed');
}

/** Anything a route or Express threw, as the GatewayError it answers with. */
export function asGatewayError(error: unknown): GatewayError {
  // A GatewayError has a `status` too: it must not be mistaken for Express's own.
  return error instanceof GatewayError ? error : fromExpress(error) ?? toGatewayError(error);
}

export function errorHandler(logger: Logger) {
  return function handleError(error: unknown, req: Request, res: Response, _next: NextFunction): void {
    const gatewayError = asGatewayError(error);
    if (gatewayError.status >= 500) logger.error({ err: error, requestId: req.requestId }, 'request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(gatewayError.status).json(errorBody(gatewayError, req.requestId ?? ''));
  };
}

export function notFound() {
  return function routeNotFound(req: Request, _res: Response, next: NextFunction): void {
    next(new GatewayError('not_found', `no route ${req.method} ${req.path}`));
  };
}
