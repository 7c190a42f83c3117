// The console's reads of one account's ledger, the one implementation behind both hosts: the
// ledger app serves it over service invocation (Dapr), the gateway calls it on its own store
// (embedded). Pages and exports list the same items in the same order, newest first (the order
// the ledger recorded them), so an export is the concatenation of every page.

import type { Topic } from '../../lib/events';
import { isFiltered, type ConsoleKind, type ItemFilter, type PageQuery } from './console-query';
import type { BillEntry, LedgerRow, LedgerStore, UsageRow } from './entries';
import { billItemSchema, usageItemSchema, type BillItem, type UsageItem } from './console-items';
import { attemptsText } from '../../lib/route-record';

/** What pages and exports read of a store: an account's row count and its rows by position. */
export type RowStore = Pick<LedgerStore, 'count' | 'rows'>;

/** Rows read from the store per step of an export. */
export const EXPORT_CHUNK_ROWS = 1000;

const IMAGE_HOLD_PREFIX = 'img:';

export type { BillItem, UsageItem };

export type ConsoleItem = BillItem | UsageItem;

export interface ConsolePage {
  items: ConsoleItem[];
  page: number;
  size: number;
  total: number;
  /** How many rows the account had in the list read (the query's `through`, or all it had): the next page's `through`. */
  through: number;
}

const TOPIC_OF: Record<ConsoleKind, Topic> = { bills: 'billing', usage: 'usage' };

/** Every field an item can have, in the order of the CSV columns: the order of the item schemas. */
export const ITEM_FIELDS: Record<ConsoleKind, readonly string[]> = { bills: Object.keys(billItemSchema.shape), usage: Object.keys(usageItemSchema.shape) };

/** The CSV columns: the item's fields, a usage item's `route` as two, `upstream` and `attempts` (lib/route-record.ts, attemptsText). */
export const CSV_COLUMNS: Record<ConsoleKind, readonly string[]> = {
  bills: ITEM_FIELDS.bills,
  usage: ITEM_FIELDS.usage.flatMap((field) => (field === 'route' ? ['upstream', 'attempts'] : [field])),
};

/** An item as its CSV row's record (the columns of CSV_COLUMNS; an absent field is an empty cell). */
export function csvRecord(item: ConsoleItem): Record<string, unknown> {
  if (!('route' in item) || item.route === undefined) return item;
  const { route, ...rest } = item;
  return { ...rest, upstream: route.upstream, attempts: attemptsText(route) };
}

/** An image's hold is `img:<taskId>`, or `img:<taskId>:<startId>` when a retry took its own (docs/money.md). */
const taskIdOf = (holdId: string | undefined) => (holdId?.startsWith(IMAGE_HOLD_PREFIX) ? holdId.slice(IMAGE_HOLD_PREFIX.length).split(':')[0] : undefined);

/** Copies the named fields that are present, in order: optional fields are left out, never null. */
function pick<T>(source: Record<string, unknown>, fields: readonly string[]): T {
  const item: Record<string, unknown> = {};
  for (const field of fields) if (source[field] !== undefined) item[field] = source[field];
  return item as T;
}

export function billItem(row: BillEntry): BillItem {
  return pick<BillItem>({ ...row, taskId: taskIdOf(row.holdId) }, ITEM_FIELDS.bills);
}

export function usageItem(row: UsageRow): UsageItem {
  return pick<UsageItem>({ ...row, taskId: taskIdOf(row.holdId) }, ITEM_FIELDS.usage);
}

export function toItem(kind: ConsoleKind, row: LedgerRow): ConsoleItem {
  return kind === 'bills' ? billItem(row as BillEntry) : usageItem(row as UsageRow);
}

/** Whether a row is one the filter lists (each filter given must hold). */
export function matches(row: LedgerRow, filter: ItemFilter): boolean {
  if (filter.fromMs !== undefined || filter.toMs !== undefined) {
    const at = Date.parse(row.occurredAt);
    if (at < (filter.fromMs ?? -Infinity) || at >= (filter.toMs ?? Infinity)) return false;
  }
  if (filter.model !== undefined && row.model !== filter.model) return false;
  if (filter.kind !== undefined && (row as BillEntry).kind !== filter.kind) return false;
  if (filter.images !== undefined && (taskIdOf(row.holdId) !== undefined) !== filter.images) return false;
  return true;
}

/**
 * One page, newest first. A page past the last is empty; `total` counts every item the filters
 * list either way. Without a filter the page's rows are read by position; with one, the account's
 * rows are read newest first, a chunk at a time, and counted (the ledger keeps no index by model,
 * kind or time: recording order and event time can differ by the delivery delay), so a filtered
 * page costs what an export of the account costs on the server, without sending it.
 */
export async function readPage(store: LedgerStore, kind: ConsoleKind, accountId: string, pool: string, query: PageQuery): Promise<ConsolePage> {
  const topic = TOPIC_OF[kind];
  const { page, size } = query;
  const through = await listed(store, topic, accountId, pool, query);
  if (isFiltered(query)) {
    const first = (page - 1) * size;
    const items: ConsoleItem[] = [];
    let total = 0;
    for await (const rows of matchingRows(store, topic, accountId, pool, query, through)) {
      for (const row of rows) {
        if (total >= first && items.length < size) items.push(toItem(kind, row));
        total++;
      }
    }
    return { items, page, size, total, through };
  }
  const newest = through - (page - 1) * size;
  const rows = newest >= 1 ? await store.rows(topic, accountId, pool, newest - size + 1, newest) : [];
  return { items: rows.map((row) => toItem(kind, row)), page, size, total: through, through };
}

/** The newest position a list reads: every row the account has, or those it had at the query's `through`. */
async function listed(store: RowStore, topic: Topic, accountId: string, pool: string, filter: ItemFilter): Promise<number> {
  const count = await store.count(topic, accountId, pool);
  return filter.through === undefined ? count : Math.min(count, filter.through);
}

/**
 * Every item of the account the filters list, newest first, a chunk at a time. The rows are those
 * recorded when the export began: later ones are not included. Recording order and event time can
 * differ by the delivery delay, so the whole list is read, even for a time filter.
 */
export async function* exportItems(store: RowStore, kind: ConsoleKind, accountId: string, pool: string, filter: ItemFilter): AsyncGenerator<ConsoleItem[]> {
  const topic = TOPIC_OF[kind];
  for await (const rows of matchingRows(store, topic, accountId, pool, filter, await listed(store, topic, accountId, pool, filter))) yield rows.map((row) => toItem(kind, row));
}

/** The account's rows up to position `through` that the filter lists, newest first, in chunks of at most EXPORT_CHUNK_ROWS (none empty). */
async function* matchingRows(store: RowStore, topic: Topic, accountId: string, pool: string, filter: ItemFilter, through: number): AsyncGenerator<LedgerRow[]> {
  for (let newest = through; newest >= 1; newest -= EXPORT_CHUNK_ROWS) {
    const rows = (await store.rows(topic, accountId, pool, newest - EXPORT_CHUNK_ROWS + 1, newest)).filter((row) => matches(row, filter));
    if (rows.length > 0) yield rows;
  }
}
