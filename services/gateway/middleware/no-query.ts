// Routes that take no query parameter refuse any, naming it (400 invalid_request) as the pages
// refuse an unknown one: a parameter a client believes does something must not be silently ignored
// (`?pool=member` on a credit would otherwise credit pool-3). The one way every such route does it:
// the reads that take none, and every write but the compatibility routes (the vendors' SDKs add
// their own, e.g. Anthropic's `?beta=true`) and the payment provider's callback (docs/api.md).

import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../../../lib/errors';

/** Refuses any query parameter but those named. */
export function onlyQuery(...allowed: string[]): (req: Request, res: Response, next: NextFunction) => void {
  return function onlyQuery(req, _res, next) {
    // Most requests have no query: nothing to parse (the chat routes are the hot path).
    const mark = req.url.indexOf('?');
    if (mark < 0 || mark === req.url.length - 1) return next();
    const param = Object.keys(req.query ?? {}).find((name) => !allowed.includes(name));
    next(param === undefined ? undefined : new GatewayError('invalid_request', `unknown query parameter ${param}`, { param }));
  };
}

export const noQuery = onlyQuery();

/** For a router's writes (a read checks its own query): every method but GET refuses a query parameter. */
export function writesTakeNoQuery(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'GET') next();
  else noQuery(req, res, next);
}
