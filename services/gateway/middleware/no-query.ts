// Routes that take no query parameter refuse any, naming it (400 invalid_request), as the
// console's routes do: a parameter a client believes does something must not be silently ignored.

import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../../../lib/errors';

export function noQuery(req: Request, _res: Response, next: NextFunction): void {
  const [param] = Object.keys(req.query ?? {});
  next(param === undefined ? undefined : new GatewayError('invalid_request', `unknown query parameter ${param}: this route takes none`, { param }));
}
