// The one error middleware: every failure leaves as {"error":{code,message,param?,request_id,...}}.

import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { GatewayError, toGatewayError } from '../../../lib/errors';

/** Maps body-parser failures (they carry `type`) to our codes; anything else goes through toGatewayError. */
function fromParserError(error: unknown): GatewayError | undefined {
  const type = (error as { type?: unknown })?.type;
  if (type === 'entity.too.large') return new GatewayError('payload_too_large', 'request body exceeds the effective limit');
  if (type === 'entity.parse.failed') return new GatewayError('invalid_json', 'request body is not valid JSON');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new GatewayError('unsupported_media_type', 'unsupported body encoding');
  if (type === 'request.aborted' || type === 'request.size.invalid') return new GatewayError('invalid_request', 'request body was not received whole');
  return undefined;
}

export function errorBody(error: GatewayError, requestId: string) {
  return { error: { code: error.code, message: error.message, ...(error.param ? { param: error.param } : {}), request_id: requestId, ...(error.extra ?? {}) } };
}

export function errorHandler(logger: Logger) {
  return function handleError(error: unknown, req: Request, res: Response, _next: NextFunction): void {
    const gatewayError = fromParserError(error) ?? toGatewayError(error);
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
