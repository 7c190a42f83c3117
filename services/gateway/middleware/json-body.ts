// JSON bodies up to the service/proxy limit (the upstream's is checked once the model is known).
// Records the body's size for the effective-limit check and the reservation estimate.

import express, { type NextFunction, type Request, type Response } from 'express';
import { GatewayError } from '../../../lib/errors';

declare module 'express-serve-static-core' {
  interface Request {
    bodyBytes: number;
  }
}

export function jsonBody(limitBytes: number) {
  const parse = express.json({
    limit: limitBytes,
    strict: false,
    type: () => true,
    verify: (req, _res, buf) => {
      (req as Request).bodyBytes = buf.length;
    },
  });
  return function parseJsonBody(req: Request, res: Response, next: NextFunction): void {
    const type = req.headers['content-type'];
    if (type !== undefined && !/^application\/(.+\+)?json\b/i.test(type)) {
      return next(new GatewayError('unsupported_media_type', 'the request body must be application/json'));
    }
    req.bodyBytes = 0;
    parse(req, res, next);
  };
}
