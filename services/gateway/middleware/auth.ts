// Credentials. Open pool-3 routes take an API key (Authorization: Bearer <key>; the Anthropic
// wire also x-api-key). A JWT on these routes is the OAuth family: refused, never re-routed.

import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../../../lib/errors';
import type { AccountStore } from '../accounts/store';

export interface Caller {
  accountId: string;
  apiKeyId: string;
}

declare module 'express-serve-static-core' {
  interface Request {
    caller: Caller;
  }
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function bearer(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

export function apiKeyAuth(accounts: AccountStore, options: { allowXApiKey?: boolean } = {}) {
  return async function authenticateApiKey(req: Request, _res: Response, next: NextFunction): Promise<void> {
    const xApiKey = options.allowXApiKey ? req.headers['x-api-key'] : undefined;
    const token = bearer(req) ?? (typeof xApiKey === 'string' ? xApiKey.trim() : undefined);
    if (!token) return next(new GatewayError('unauthorized', 'an API key is required (Authorization: Bearer <key>)'));
    if (JWT_SHAPE.test(token)) {
      return next(new GatewayError('credential_family_mismatch', 'OAuth tokens are not accepted on open pool-3 routes; use an API key'));
    }
    try {
      const record = await accounts.findApiKey(token);
      if (!record) return next(new GatewayError('unauthorized', 'unknown API key'));
      req.caller = { accountId: record.accountId, apiKeyId: record.apiKeyId };
      next();
    } catch (error) {
      next(error);
    }
  };
}

export function adminAuth(adminToken: string | undefined) {
  const expected = adminToken ? Buffer.from(adminToken) : undefined;
  return function authenticateAdmin(req: Request, _res: Response, next: NextFunction): void {
    if (!expected) return next(new GatewayError('admin_disabled', 'the operator API is off (GATEWAY_ADMIN_TOKEN is not set)'));
    const token = bearer(req);
    const given = token ? Buffer.from(token) : Buffer.alloc(0);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return next(new GatewayError('unauthorized', 'operator token required (Authorization: Bearer $GATEWAY_ADMIN_TOKEN)'));
    }
    next();
  };
}
