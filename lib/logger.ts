// The one way the apps make their pino logger: JSON lines that carry the request id and trace id
// of the request they belong to, and a redaction list as a safety net. The rule itself is that
// no credential, header or body is ever put into a log line; redaction only catches a mistake.

import pino, { type DestinationStream, type Level, type Logger, type LoggerOptions } from 'pino';
import { currentContext } from './request-context';

/** Wherever a credential could sit in a logged object (fast-redact paths, `*` is one level). */
export const REDACT_PATHS = [
  'authorization',
  'apiKey',
  'api_key',
  'token',
  'accessToken',
  'access_token',
  'secret',
  'password',
  'adminToken',
  'cookie',
  '*.authorization',
  '*["x-api-key"]',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.accessToken',
  '*.access_token',
  '*.secret',
  '*.password',
  '*.adminToken',
  '*.cookie',
  '*["set-cookie"]',
  '*["checkout-signature"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  '*.headers.cookie',
];

/** The request's ids on every line logged while it runs (pino calls this per line). */
export function requestMixin(): Record<string, string> {
  const context = currentContext();
  return context ? { requestId: context.requestId, traceId: context.traceId } : {};
}

export function loggerOptions(service: string, level: Level | 'silent'): LoggerOptions {
  return {
    level,
    base: { service },
    mixin: requestMixin,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
}

export function createLogger(service: string, level: Level | 'silent', destination?: DestinationStream): Logger {
  return destination ? pino(loggerOptions(service, level), destination) : pino(loggerOptions(service, level));
}
