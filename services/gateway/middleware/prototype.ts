// The legacy prototype routes (docs/sessions.md: sessions, runs, workspaces, their events) are kept
// out of the formal open navigation: absent from the OpenAPI document, and every answer under
// their paths, errors included, says so in a header.

import type { NextFunction, Request, Response } from 'express';

export const PROTOTYPE_HEADER = 'X-Payg-Prototype';
export const PROTOTYPE_HEADER_VALUE = 'legacy; excluded-from=open-navigation';
export { PROTOTYPE_PREFIXES } from '../route-table';

export function markPrototype() {
  return function markPrototypeResponse(_req: Request, res: Response, next: NextFunction): void {
    res.setHeader(PROTOTYPE_HEADER, PROTOTYPE_HEADER_VALUE);
    next();
  };
}
