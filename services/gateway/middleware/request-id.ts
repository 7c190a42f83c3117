// Gives every request an id (a sane incoming X-Request-Id is kept) and echoes it.

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
    next();
  };
}
