// The session's event log in actor state: ids from 1, strictly increasing, stored in pages of
// PAGE_SIZE events under their own keys so an append rewrites one small page, not the whole log.
// Bounded: once more than MAX_EVENTS are stored, whole pages are evicted oldest first, so between
// MAX_EVENTS − PAGE_SIZE and MAX_EVENTS of the latest events stay readable.

import type { ActorState } from '../runtime/port';
import type { SessionEvent, SessionEventKind } from './SessionInterface';

export const PAGE_SIZE = 50;
export const MAX_EVENTS = 1000;
/** At most this many events per read: a reader asks again for the rest. */
export const MAX_READ = 200;

const PAGE_KEY_PREFIX = 'events:';

/** Where the log stands, kept in the session record (committed with the pages in one turn). */
export interface LogCursor {
  lastEventId: number;
  /** The oldest id still stored (lastEventId + 1 while nothing is stored). */
  firstRetainedId: number;
}

export function emptyCursor(): LogCursor {
  return { lastEventId: 0, firstRetainedId: 1 };
}

const pageOf = (id: number) => Math.floor((id - 1) / PAGE_SIZE);
const pageKey = (page: number) => `${PAGE_KEY_PREFIX}${page}`;

export class EventLog {
  constructor(private readonly state: ActorState, private readonly now: () => number) {}

  /** Appends in order; returns the new events. The cursor is updated in place. */
  async append(cursor: LogCursor, entries: readonly { kind: SessionEventKind; data: SessionEvent['data'] }[]): Promise<SessionEvent[]> {
    const at = new Date(this.now()).toISOString();
    const appended: SessionEvent[] = [];
    const pages = new Map<number, SessionEvent[]>();
    for (const entry of entries) {
      const event: SessionEvent = { id: cursor.lastEventId + 1, kind: entry.kind, at, data: entry.data };
      const page = pageOf(event.id);
      if (!pages.has(page)) pages.set(page, (await this.state.get<SessionEvent[]>(pageKey(page))) ?? []);
      pages.get(page)!.push(event);
      cursor.lastEventId = event.id;
      appended.push(event);
    }
    for (const [page, events] of pages) this.state.set(pageKey(page), events);
    this.evict(cursor);
    return appended;
  }

  /** Up to `limit` events with ids above `after`, oldest first. */
  async read(cursor: LogCursor, after: number, limit: number): Promise<SessionEvent[]> {
    const from = Math.max(after + 1, cursor.firstRetainedId);
    const to = Math.min(cursor.lastEventId, from + Math.min(limit, MAX_READ) - 1);
    const events: SessionEvent[] = [];
    for (let page = pageOf(from); from <= to && page <= pageOf(to); page++) {
      for (const event of (await this.state.get<SessionEvent[]>(pageKey(page))) ?? []) {
        if (event.id >= from && event.id <= to) events.push(event);
      }
    }
    return events;
  }

  private evict(cursor: LogCursor): void {
    while (cursor.lastEventId - cursor.firstRetainedId + 1 > MAX_EVENTS) {
      const oldest = pageOf(cursor.firstRetainedId);
      this.state.remove(pageKey(oldest));
      cursor.firstRetainedId = (oldest + 1) * PAGE_SIZE + 1;
    }
  }
}
