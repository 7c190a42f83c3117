// The query parameters of the console's pages and exports, validated once for both the gateway
// (its edge) and the ledger app (its own API). Bad values are refused, never clamped; an unknown
// parameter is refused too, so nothing in a query can name another account or pool.

import { z } from 'zod';
import { GatewayError } from '../../lib/errors';
import { BILLING_KINDS, type BillingKind } from '../../lib/events';
import { unknownKeyRefusal } from '../../lib/zod-refusal';

export const CONSOLE_KINDS = ['bills', 'usage'] as const;
export type ConsoleKind = (typeof CONSOLE_KINDS)[number];

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The longest model id a filter takes. */
export const MAX_MODEL_FILTER_LENGTH = 256;

/** Which items a page or an export lists: each filter given narrows it (all of them hold). */
export interface ItemFilter {
  /** Epoch ms, inclusive (the item's occurredAt). */
  fromMs?: number;
  /** Epoch ms, exclusive. */
  toMs?: number;
  /** The item's model, exactly. */
  model?: string;
  /** Bills only: the bill's kind. */
  kind?: BillingKind;
  /** True: only the items of image tasks (those with a taskId); false: none of them. */
  images?: boolean;
  /**
   * The list as it was when the account had this many rows (a page's `through`): rows recorded
   * later are left out, so the pages of one list neither repeat nor skip a row while new ones
   * arrive. Not a filter of the items (a page with only this is still read by position).
   */
  through?: number;
}

export interface PageQuery extends ItemFilter {
  page: number;
  size: number;
}

export interface ExportQuery extends ItemFilter {
  format: ExportFormat;
}

const integer = (name: string, max: number) =>
  z.string({ error: `${name} must be given once, as an integer` })
    .regex(/^[0-9]+$/, `${name} must be an integer`)
    .transform(Number)
    .pipe(z.number().min(1, `${name} must be at least 1`).max(max, `${name} must be at most ${max}`));

/** An RFC 3339 instant with its time zone, as epoch ms (rounded up below the millisecond). */
export const instant = (name: string) =>
  z.string({ error: `${name} must be given once, as an RFC 3339 date-time` })
    // An offset's + sent unencoded reaches the query as a space (form encoding): say so.
    .refine((value) => !/^[^ ]+ \d{2}:\d{2}$/.test(value), `${name} has a space where its time zone's + belongs: in a query string + reads as a space, so send it as %2B (e.g. ${name}=2025-01-31T00:00:00%2B02:00), or give the time in Z`)
    .transform((value) => value.toUpperCase())
    .pipe(z.iso.datetime({ offset: true, error: `${name} must be an RFC 3339 date-time with a time zone, e.g. 2025-01-31T00:00:00Z` }))
    .transform(toEpochMs);

/** The filters both pages and exports take; `kind` on bills only (a usage item has none). */
const filterShape = {
  from: instant('from').optional(),
  to: instant('to').optional(),
  model: z.string({ error: 'model must be given once' })
    .min(1, 'model must not be empty')
    .max(MAX_MODEL_FILTER_LENGTH, `model must be at most ${MAX_MODEL_FILTER_LENGTH} characters`)
    .optional(),
  images: z.enum(['true', 'false'], { error: 'images must be true or false' }).transform((value) => value === 'true').optional(),
  through: z.string({ error: 'through must be given once, as the through of an earlier page' })
    .regex(/^[0-9]+$/, "through must be a whole number: an earlier page's through")
    .transform(Number)
    .pipe(z.number().max(Number.MAX_SAFE_INTEGER, `through must be at most ${Number.MAX_SAFE_INTEGER}`))
    .optional(),
};
const billFilterShape = { ...filterShape, kind: z.enum(BILLING_KINDS, { error: `kind must be one of ${BILLING_KINDS.join(', ')}` }).optional() };
export const fromNotAfterTo = (q: { from?: number; to?: number }) => q.from === undefined || q.to === undefined || q.from <= q.to;
export const TO_BEFORE_FROM = { message: 'to must not be before from', path: ['to'] };

const pageFields = {
  page: integer('page', Number.MAX_SAFE_INTEGER).default(1),
  size: integer('size', MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
};
const formatField = { format: z.enum(EXPORT_FORMATS, { error: 'format must be csv or jsonl' }).default('csv') };

const pageSchemas = {
  bills: z.strictObject({ ...pageFields, ...billFilterShape }).refine(fromNotAfterTo, TO_BEFORE_FROM),
  usage: z.strictObject({ ...pageFields, ...filterShape }).refine(fromNotAfterTo, TO_BEFORE_FROM),
};
const exportSchemas = {
  bills: z.strictObject({ ...formatField, ...billFilterShape }).refine(fromNotAfterTo, TO_BEFORE_FROM),
  usage: z.strictObject({ ...formatField, ...filterShape }).refine(fromNotAfterTo, TO_BEFORE_FROM),
};

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
  if (from > to) {
    // `to` left out is today: the day that is wrong is then the `from` the caller gave.
    if (parsed.to === undefined) throw new GatewayError('invalid_request', `from ${from} is after to, which is today (${to}) when not given`, { param: 'from' });
    throw new GatewayError('invalid_request', 'to must not be before from', { param: 'to' });
  }
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (days > MAX_SPENDING_DAYS) throw new GatewayError('invalid_request', `from and to span ${days} days: at most ${MAX_SPENDING_DAYS}`, { param: 'from' });
  return { from, to };
}

export function spendingQueryString(query: SpendingDaysQuery): string {
  return new URLSearchParams({ from: query.from, to: query.to }).toString();
}

type ParsedFilter = { from?: number; to?: number; model?: string; kind?: BillingKind; images?: boolean; through?: number };

/** The filters given, by their names in ItemFilter (absent ones left out). */
function itemFilter({ from, to, model, kind, images, through }: ParsedFilter): ItemFilter {
  const filter: ItemFilter = {};
  if (from !== undefined) filter.fromMs = from;
  if (to !== undefined) filter.toMs = to;
  if (model !== undefined) filter.model = model;
  if (kind !== undefined) filter.kind = kind;
  if (images !== undefined) filter.images = images;
  if (through !== undefined) filter.through = through;
  return filter;
}

export function parsePageQuery(query: unknown, kind: ConsoleKind): PageQuery {
  const { page, size, ...filter } = parse(pageSchemas[kind] as z.ZodType<ParsedFilter & { page: number; size: number }>, query);
  return { page, size, ...itemFilter(filter) };
}

/** An export's parameters: from its query string, or from the fields of the form that asked for it (`where` = 'body'). */
export function parseExportQuery(query: unknown, kind: ConsoleKind, where: 'query' | 'body' = 'query'): ExportQuery {
  const { format, ...filter } = parse(exportSchemas[kind] as z.ZodType<ParsedFilter & { format: ExportFormat }>, query, where);
  return { format, ...itemFilter(filter) };
}

/** Whether any filter is given (`through` is none): a page without one is read by position, without a scan. */
export function isFiltered(filter: ItemFilter): boolean {
  return filter.fromMs !== undefined || filter.toMs !== undefined || filter.model !== undefined || filter.kind !== undefined || filter.images !== undefined;
}

/** The query string that carries a parsed query to the ledger app. */
export function pageQueryString(query: PageQuery): string {
  const params = new URLSearchParams({ page: String(query.page), size: String(query.size) });
  setFilter(params, query);
  return params.toString();
}

export function exportQueryString(query: ExportQuery): string {
  const params = new URLSearchParams({ format: query.format });
  setFilter(params, query);
  return params.toString();
}

function setFilter(params: URLSearchParams, filter: ItemFilter): void {
  if (filter.fromMs !== undefined) params.set('from', new Date(filter.fromMs).toISOString());
  if (filter.toMs !== undefined) params.set('to', new Date(filter.toMs).toISOString());
  if (filter.model !== undefined) params.set('model', filter.model);
  if (filter.kind !== undefined) params.set('kind', filter.kind);
  if (filter.images !== undefined) params.set('images', String(filter.images));
  if (filter.through !== undefined) params.set('through', String(filter.through));
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

function parse<T>(schema: z.ZodType<T>, query: unknown, where: 'query' | 'body' = 'query'): T {
  const result = schema.safeParse(query ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const unknown = unknownKeyRefusal(issue, where);
  if (unknown) throw unknown;
  const param = issue.path.length > 0 ? String(issue.path[0]) : undefined;
  throw new GatewayError('invalid_request', issue.message, { param });
}
