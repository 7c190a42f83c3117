// Gives every request an id (a sane incoming X-Request-Id is kept) and echoes it: as x-request-id,
// and as request-id too to a client of Anthropic's API.

import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

export function requestId() {
  return function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
    const incoming = req.headers['x-request-id'];
    req.requestId = typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', req.requestId);
    // Anthropic's clients (every request of its SDKs carries anthropic-version) read the id from
    // request-id: message._request_id, an error's requestID.
    if (req.headers['anthropic-version'] !== undefined) res.setHeader('request-id', req.requestId);
    next();
  };
}
