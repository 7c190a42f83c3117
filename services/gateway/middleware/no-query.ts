// Routes that take no query parameter refuse any, naming it (400 invalid_request) as the pages
// refuse an unknown one: a parameter a client believes does something must not be silently ignored.
// The one way every such route does it (the balance, the limits, the operator's reads too).

import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../../../lib/errors';

export function noQuery(req: Request, _res: Response, next: NextFunction): void {
  const [param] = Object.keys(req.query ?? {});
  next(param === undefined ? undefined : new GatewayError('invalid_request', `unknown query parameter ${param}`, { param }));
}
