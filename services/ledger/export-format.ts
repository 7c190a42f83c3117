// The two export formats, streamed: CSV (RFC 4180's quoting, each row ending in \n rather than its
// CRLF; a header row, one row per item, the columns of CSV_COLUMNS: the item's fields, a route as
// `upstream` and `attempts`; an absent optional field is an empty cell) and JSON Lines (one page item per line, the route an object). Items are pulled
// from the store only as fast as the reader takes them, and each chunk of them is written as one
// string. The CSV is encoded here rather than by csv-stringify: its per-field work (a path lookup,
// arrays and option objects for every cell) allocated about 16 KB per row, four times what the
// whole export allocates now, took twice as long, and made V8 grow its young generation to 128 MB
// during a million-row export (docs/console.md, "Benchmark").

import { Readable } from 'node:stream';
import type { ConsoleKind, ExportFormat } from './console-query';
import { CSV_COLUMNS, csvRecord, type ConsoleItem } from './console';

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

export function exportFileName(kind: ConsoleKind, format: ExportFormat): string {
  return `${kind}.${format}`;
}

/** The headers of an export answer: its type and an attachment file name. */
export function exportHeaders(kind: ConsoleKind, format: ExportFormat): Record<string, string> {
  return {
    'content-type': EXPORT_CONTENT_TYPES[format],
    'content-disposition': `attachment; filename="${exportFileName(kind, format)}"`,
    'cache-control': 'no-store',
  };
}

/** A CSV cell (RFC 4180's quoting): empty when absent, booleans as true/false, quoted when it holds a comma, a quote or a line break (quotes doubled). */
export function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'boolean' ? (value ? 'true' : 'false') : String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
const NEEDS_QUOTES = /[",\r\n]/;

function csvLine(fields: readonly string[], record: Record<string, unknown>): string {
  let line = '';
  for (let i = 0; i < fields.length; i++) line += i === 0 ? csvCell(record[fields[i]]) : `,${csvCell(record[fields[i]])}`;
  return `${line}\n`;
}

/** The body's text, a chunk of items at a time (one string each): the header row first for CSV. */
async function* texts(kind: ConsoleKind, format: ExportFormat, chunks: AsyncIterable<ConsoleItem[]>): AsyncGenerator<string> {
  const columns = CSV_COLUMNS[kind];
  if (format === 'csv') yield csvLine(columns, Object.fromEntries(columns.map((column) => [column, column])));
  for await (const chunk of chunks) {
    let text = '';
    for (const item of chunk) text += format === 'csv' ? csvLine(columns, csvRecord(item)) : `${JSON.stringify(item)}\n`;
    yield text;
  }
}

/**
 * The export body as a byte stream. A failure while reading destroys it (the answer is cut, never
 * ended as if complete); destroying it (the client went away) stops the reading.
 */
export function exportStream(kind: ConsoleKind, format: ExportFormat, chunks: AsyncIterable<ConsoleItem[]>): Readable {
  // One chunk of text buffered ahead of the one being written: the reader's pace sets the store's.
  return Readable.from(texts(kind, format, chunks), { highWaterMark: 1 });
}
