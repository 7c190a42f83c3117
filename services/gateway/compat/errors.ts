// Error bodies the official SDKs parse: the OpenAI shape on /v1/chat/completions (and
// /v1/models without anthropic-version), the Anthropic shape on /v1/messages (and /v1/models
// with it). The gateway's code stays in `code`, the request id in `request_id`.

import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { GatewayError } from '../../../lib/errors';
import { anthropicErrorType } from '../chat/wires';
import { asGatewayError } from '../middleware/errors';

export type CompatShape = 'openai' | 'anthropic';

function openAiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export function compatErrorBody(shape: CompatShape, error: GatewayError, requestId: string): Record<string, unknown> {
  const extra = error.extra ?? {};
  if (shape === 'anthropic') {
    return { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message, code: error.code, ...extra }, request_id: requestId };
  }
  return { error: { message: error.message, type: openAiErrorType(error.status), param: error.param ?? null, code: error.code, request_id: requestId, ...extra } };
}

/** The error middleware of a compatibility route: the shape is chosen per request. */
export function compatErrorHandler(logger: Logger, shapeOf: (req: Request) => CompatShape) {
  return function handleCompatError(error: unknown, req: Request, res: Response, _next: NextFunction): void {
    const gatewayError = asGatewayError(error);
    if (gatewayError.status >= 500) logger.error({ err: error, requestId: req.requestId }, 'request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(gatewayError.status).json(compatErrorBody(shapeOf(req), gatewayError, req.requestId ?? ''));
  };
}
