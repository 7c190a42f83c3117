// The two export formats, streamed: CSV (csv-stringify, a header row, one row per item, the
// columns of CSV_COLUMNS: the item's fields, a route as `upstream` and `attempts`; an absent
// optional field is an empty cell) and JSON Lines (one page item per line, the route an object). Items are pulled from the store only as fast as the reader takes them.

import { Readable, Transform, pipeline } from 'node:stream';
import { stringify } from 'csv-stringify';
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

async function* oneByOne(chunks: AsyncIterable<ConsoleItem[]>, as: (item: ConsoleItem) => unknown): AsyncGenerator<unknown> {
  for await (const chunk of chunks) for (const item of chunk) yield as(item);
}

function jsonLines(): Transform {
  return new Transform({
    writableObjectMode: true,
    transform(item: ConsoleItem, _encoding, done) {
      done(null, `${JSON.stringify(item)}\n`);
    },
  });
}

function csvRows(kind: ConsoleKind): Transform {
  return stringify({ header: true, columns: [...CSV_COLUMNS[kind]], cast: { boolean: (value) => (value ? 'true' : 'false') } });
}

/**
 * The export body as a byte stream. A failure while reading destroys it (the answer is cut, never
 * ended as if complete); destroying it (the client went away) stops the reading.
 */
export function exportStream(kind: ConsoleKind, format: ExportFormat, chunks: AsyncIterable<ConsoleItem[]>): Readable {
  const items = Readable.from(format === 'csv' ? oneByOne(chunks, csvRecord) : oneByOne(chunks, (item) => item));
  return pipeline(items, format === 'csv' ? csvRows(kind) : jsonLines(), () => {
    /* errors reach the consumer through the returned stream */
  });
}
