// The query parameters of the console's pages and exports, validated once for both the gateway
// (its edge) and the ledger app (its own API). Bad values are refused, never clamped; an unknown
// parameter is refused too, so nothing in a query can name another account or pool.

import { z } from 'zod';
import { GatewayError } from '../../lib/errors';

export const CONSOLE_KINDS = ['bills', 'usage'] as const;
export type ConsoleKind = (typeof CONSOLE_KINDS)[number];

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface PageQuery {
  page: number;
  size: number;
}

export interface ExportQuery {
  format: ExportFormat;
  /** Epoch ms, inclusive. */
  fromMs?: number;
  /** Epoch ms, exclusive. */
  toMs?: number;
}

const integer = (name: string, max: number) =>
  z.string({ error: `${name} must be given once, as an integer` })
    .regex(/^[0-9]+$/, `${name} must be an integer`)
    .transform(Number)
    .pipe(z.number().min(1, `${name} must be at least 1`).max(max, `${name} must be at most ${max}`));

const pageSchema = z.strictObject({
  page: integer('page', Number.MAX_SAFE_INTEGER).default(1),
  size: integer('size', MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
});

const instant = (name: string) =>
  z.string({ error: `${name} must be given once, as an RFC 3339 date-time` })
    .transform((value) => value.toUpperCase())
    .pipe(z.iso.datetime({ offset: true, error: `${name} must be an RFC 3339 date-time with a time zone, e.g. 2025-01-31T00:00:00Z` }))
    .transform(toEpochMs);

const exportSchema = z.strictObject({
  format: z.enum(EXPORT_FORMATS, { error: 'format must be csv or jsonl' }).default('csv'),
  from: instant('from').optional(),
  to: instant('to').optional(),
}).refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, { message: 'to must not be before from', path: ['to'] });

/** The longest span of days one spending read covers. */
export const MAX_SPENDING_DAYS = 366;
/** The span read when `from` is not given: the 30 days that end with `to`. */
export const DEFAULT_SPENDING_DAYS = 30;
const DAY_MS = 86_400_000;

const calendarDay = (name: string) =>
  z.string({ error: `${name} must be given once, as a UTC day YYYY-MM-DD` })
    .regex(/^\d{4}-\d{2}-\d{2}$/, `${name} must be a UTC day YYYY-MM-DD, e.g. 2025-01-31`)
    .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value), `${name} is not a calendar day`);

const spendingSchema = z.strictObject({ from: calendarDay('from').optional(), to: calendarDay('to').optional() });

export interface SpendingDaysQuery {
  /** UTC days, YYYY-MM-DD, both included. */
  from: string;
  to: string;
}

/** The days of a spending read: `to` defaults to today (UTC), `from` to 29 days before `to`; at most MAX_SPENDING_DAYS, `from` not after `to`. */
export function parseSpendingQuery(query: unknown, now = Date.now()): SpendingDaysQuery {
  const parsed = parse(spendingSchema, query);
  const to = parsed.to ?? new Date(now).toISOString().slice(0, 10);
  const from = parsed.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - (DEFAULT_SPENDING_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  if (from > to) throw new GatewayError('invalid_request', 'to must not be before from', { param: 'to' });
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (days > MAX_SPENDING_DAYS) throw new GatewayError('invalid_request', `from and to span ${days} days: at most ${MAX_SPENDING_DAYS}`, { param: 'from' });
  return { from, to };
}

export function spendingQueryString(query: SpendingDaysQuery): string {
  return new URLSearchParams({ from: query.from, to: query.to }).toString();
}

export function parsePageQuery(query: unknown): PageQuery {
  return parse(pageSchema, query);
}

export function parseExportQuery(query: unknown): ExportQuery {
  const { format, from, to } = parse(exportSchema, query);
  return { format, fromMs: from, toMs: to };
}

/** The query string that carries a parsed query to the ledger app. */
export function pageQueryString(query: PageQuery): string {
  return new URLSearchParams({ page: String(query.page), size: String(query.size) }).toString();
}

export function exportQueryString(query: ExportQuery): string {
  const params = new URLSearchParams({ format: query.format });
  if (query.fromMs !== undefined) params.set('from', new Date(query.fromMs).toISOString());
  if (query.toMs !== undefined) params.set('to', new Date(query.toMs).toISOString());
  return params.toString();
}

/**
 * Epoch milliseconds of a validated RFC 3339 instant, rounded up when it has digits below the
 * millisecond: rows carry whole milliseconds, so `at >= from` and `at < to` stay exact.
 */
function toEpochMs(value: string): number {
  const fraction = /\.(\d+)/.exec(value)?.[1] ?? '';
  const ms = Date.parse(value.replace(/\.\d+/, fraction ? `.${fraction.slice(0, 3).padEnd(3, '0')}` : ''));
  return /[1-9]/.test(fraction.slice(3)) ? ms + 1 : ms;
}

function parse<T>(schema: z.ZodType<T>, query: unknown): T {
  const result = schema.safeParse(query ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    throw new GatewayError('invalid_request', `unknown query parameter ${issue.keys[0]}`, { param: issue.keys[0] });
  }
  const param = issue.path.length > 0 ? String(issue.path[0]) : undefined;
  throw new GatewayError('invalid_request', issue.message, { param });
}
