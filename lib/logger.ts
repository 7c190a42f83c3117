// The one way the apps make their pino logger: JSON lines that carry the request id and trace id
// of the request they belong to, and a redaction list as a safety net. The rule itself is that
// no credential, header or body is ever put into a log line; redaction only catches a mistake.

import pino, { type DestinationStream, type Level, type Logger, type LoggerOptions } from 'pino';
import { currentContext } from './request-context';

/** Headers that carry a credential, or a signature a forger could replay. */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'cookie', 'set-cookie', 'checkout-signature'];
/** Field names code gives a credential. */
const CREDENTIAL_FIELDS = ['apiKey', 'api_key', 'token', 'accessToken', 'access_token', 'secret', 'password', 'adminToken'];

/**
 * Wherever a credential could sit in a logged object (fast-redact paths; `*` is one level, and
 * brackets take names with a dash): each name at the top level and one level down, and each
 * header under any `headers` one level down (`req.headers`, `res.headers`, `err.headers`).
 */
export const REDACT_PATHS = [
  ...[...CREDENTIAL_HEADERS, ...CREDENTIAL_FIELDS].flatMap((name) => [`["${name}"]`, `*["${name}"]`]),
  ...CREDENTIAL_HEADERS.map((name) => `*.headers["${name}"]`),
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
