// The one error middleware: every failure leaves as {"error":{code,message,param?,request_id,...}}.

import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { GatewayError, toGatewayError } from '../../../lib/errors';

export function errorBody(error: GatewayError, requestId: string) {
  return { error: { code: error.code, message: error.message, ...(error.param ? { param: error.param } : {}), request_id: requestId, ...(error.extra ?? {}) } };
}

export function errorHandler(logger: Logger) {
  return function handleError(error: unknown, req: Request, res: Response, _next: NextFunction): void {
    const gatewayError = toGatewayError(error);
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
