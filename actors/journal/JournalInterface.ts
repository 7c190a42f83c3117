// The public API of the Journal actor: an append-only list of small records read newest first,
// one actor per list (its id names the list: `accounts` is the operator's directory of accounts,
// `audit` the operator audit log). Turn-based, so appends made at once through several gateways
// are all kept, each once, in one order. Callers depend on this file only; the actor type name
// "Journal" is frozen.

import { z } from 'zod';

export const JOURNAL_ACTOR_TYPE = 'Journal';
/** The journals the gateway keeps (their actor ids). */
export const ACCOUNTS_JOURNAL = 'accounts';
export const AUDIT_JOURNAL = 'audit';
/** Entries per stored page: an append rewrites only the newest page. */
export const JOURNAL_PAGE_SIZE = 256;
/** A read returns at most this many entries. */
export const MAX_JOURNAL_READ = 200;
/** A filtered read looks at most at this many entries, then answers with a cursor to go on. */
export const MAX_JOURNAL_SCAN = 10_000;
/** An entry's size as JSON, at most. */
export const MAX_JOURNAL_ENTRY_BYTES = 8 * 1024;

export type JournalEntry = Record<string, unknown>;

export interface AppendRequest {
  /** The entry's own id: an append repeated with the same id (a retry) is kept once. */
  id: string;
  entry: JournalEntry;
}

export interface ReadRequest {
  /** Entries older than this position (a previous answer's `next`); absent: from the newest. */
  before?: number;
  limit: number;
  /** Only entries whose `field` (a string) contains `text`, compared without case. */
  match?: { field: string; text: string };
  /** Only entries whose `field` (a string) is one of `values`, exactly; each condition given holds. */
  oneOf?: { field: string; values: string[] }[];
  /**
   * Only entries whose `field` (a string) is at least `from` (inclusive) and below `to`
   * (exclusive), compared as strings: ISO times written in one format (toISOString) compare as
   * the times they name.
   */
  range?: { field: string; from?: string; to?: string };
}

/**
 * Whether an entry passes a read's `oneOf` and `range` conditions (absent ones pass): what the
 * actor keeps, and what a caller checks again where an actor of an older version may have
 * ignored them (it reads unknown fields of a request as nothing).
 */
export function passes(entry: JournalEntry, { oneOf, range }: Pick<ReadRequest, 'oneOf' | 'range'>): boolean {
  if (oneOf?.some(({ field, values }) => !values.includes(entry[field] as string))) return false;
  if (range === undefined) return true;
  const value = entry[range.field];
  if (typeof value !== 'string') return false;
  return (range.from === undefined || value >= range.from) && (range.to === undefined || value < range.to);
}

export interface JournalPage {
  /** Newest first, each with its position (0 is the first entry ever appended). */
  items: { position: number; entry: JournalEntry }[];
  /** Where the next page starts (pass as `before`); null when nothing older is left. */
  next: number | null;
  /** Entries in the journal. */
  total: number;
}

export interface JournalApi {
  append(request: AppendRequest): Promise<{ position: number; added: boolean }>;
  read(request: ReadRequest): Promise<JournalPage>;
}

export const JOURNAL_METHODS = ['append', 'read'] as const satisfies readonly (keyof JournalApi)[];

/** Each method's argument, checked by the host before the actor sees it (actors/runtime/args.ts). */
export const JOURNAL_ARGS = {
  append: z.looseObject({ id: z.string().min(1).max(200), entry: z.record(z.string(), z.unknown()) }),
  read: z.looseObject({
    before: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(MAX_JOURNAL_READ),
    match: z.object({ field: z.string().min(1), text: z.string().max(200) }).optional(),
    oneOf: z.array(z.object({ field: z.string().min(1), values: z.array(z.string().max(200)).min(1).max(64) })).max(8).optional(),
    range: z.object({ field: z.string().min(1), from: z.string().max(200).optional(), to: z.string().max(200).optional() }).optional(),
  }),
} satisfies Record<(typeof JOURNAL_METHODS)[number], z.ZodType>;
