// The legacy prototype routes (docs/sessions.md: sessions, runs, workspaces, their events) are kept
// out of the formal open navigation: absent from the OpenAPI document, and every answer under
// their paths, errors included, says so in a header.

import type { NextFunction, Request, Response } from 'express';

export const PROTOTYPE_HEADER = 'X-Payg-Prototype';
export const PROTOTYPE_HEADER_VALUE = 'legacy; excluded-from=open-navigation';
/** Every path under these is a prototype route (and marked, including its 401, 404 and 400 answers). */
export const PROTOTYPE_PREFIXES = ['/v1/sessions', '/v1/workspaces'] as const;

export function markPrototype() {
  return function markPrototypeResponse(_req: Request, res: Response, next: NextFunction): void {
    res.setHeader(PROTOTYPE_HEADER, PROTOTYPE_HEADER_VALUE);
    next();
  };
}
