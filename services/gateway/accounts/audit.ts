// The operator audit log: every operator action that changed something, once, in the `audit`
// Journal actor (who: the operator credential's id; what; when; the request id). Entries are
// written before the action's answer is sent, and never hold a secret: no key, no token, no
// hash (the details each action records are chosen in operator.ts and the routes).

import { createHash, randomUUID } from 'node:crypto';
import type { JournalClient } from '../../../actors/journal/client';
import { AUDIT_JOURNAL, passes } from '../../../actors/journal/JournalInterface';
import { faultPoint } from '../../../lib/fault-points';

/** Who acts and under which request: what every operator use case is given. */
export interface OperatorAction {
  who: string;
  requestId: string;
}

import type { AuditAction } from '../../../lib/audit-actions';

export { AUDIT_ACTIONS, type AuditAction } from '../../../lib/audit-actions';

/** A page of the log: each filter given narrows it (all of them hold). */
export interface AuditQuery {
  limit: number;
  /** A previous page's `next`. */
  before?: string;
  accountId?: string;
  /** Only these actions. */
  actions?: AuditAction[];
  /** Epoch ms: entries at or after `from`, before `to`. */
  from?: number;
  to?: number;
}

export interface AuditEntry {
  id: string;
  at: string;
  who: string;
  action: string;
  accountId: string | null;
  apiKeyId: string | null;
  requestId: string;
  details: Record<string, unknown>;
}

/** A UUID (version 8, name-based) of a text: the same action always has the same entry id. */
function nameBasedId(name: string): string {
  const bytes = createHash('sha256').update(`audit\u0000${name}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** An operator credential's id: a fingerprint that names it without revealing it. */
export function operatorId(token: string): string {
  return `admin:${createHash('sha256').update(token).digest('hex').slice(0, 12)}`;
}

/** The first and last instants whose ISO string has a four-digit year (as every entry's `at`). */
const FIRST_ISO_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_ISO_MS = Date.parse('9999-12-31T23:59:59.999Z');

export class AuditLog {
  constructor(private readonly journals: JournalClient, private readonly now: () => number = Date.now) {}

  /**
   * One entry per action. Its id is made here, once: a retry of the append (daprd's) repeats it and
   * is kept once, while two requests never share one (a request id may come from the client).
   *
   * `once`: the action's own name, for an action a client may repeat and that is applied once (a
   * credit or a debit by its reference, an order by its id, a revocation by its key, a suspension
   * or its lifting by the suspension). The entry's id is derived from it,
   * and such an action is recorded on every answer, a repeat's too: a repeat after an answer that
   * never came (the process died between the change and its entry) writes the entry the first
   * attempt could not, and a repeat of an action already recorded adds nothing.
   */
  async record(action: OperatorAction, what: AuditAction, target: { accountId?: string; apiKeyId?: string }, details: Record<string, unknown>, once?: string): Promise<void> {
    faultPoint('audit-before-append');
    const id = once === undefined ? randomUUID() : nameBasedId(`${what}\u0000${once}`);
    const entry: AuditEntry = {
      id,
      at: new Date(this.now()).toISOString(),
      who: action.who,
      action: what,
      accountId: target.accountId ?? null,
      apiKeyId: target.apiKeyId ?? null,
      requestId: action.requestId,
      details,
    };
    await this.journals.of(AUDIT_JOURNAL).append({ id, entry: { ...entry } });
  }

  /**
   * A page, newest first, filtered in the Journal actor as it scans: a page ends when it has
   * `limit` entries or the actor has looked at MAX_JOURNAL_SCAN entries, and `next` is where
   * that scan stopped, so the next page starts at the first entry not looked at (none skipped,
   * none repeated), whatever the filters.
   */
  async read(query: AuditQuery): Promise<{ items: AuditEntry[]; next: string | null }> {
    const oneOf = [
      ...(query.accountId !== undefined ? [{ field: 'accountId', values: [query.accountId] }] : []),
      ...(query.actions !== undefined ? [{ field: 'action', values: [...query.actions] }] : []),
    ];
    // The range is compared with the entries' `at` as strings, which holds for years 0000 to
    // 9999 only: an RFC 3339 time with an offset can name an instant of year −1 or 10000, whose
    // ISO string ("-000001-…", "+010000-…") sorts before every entry's. Such a bound lets every
    // entry through (it is left out) or none (the answer is the empty last page).
    const from = query.from !== undefined && query.from > FIRST_ISO_MS ? query.from : undefined;
    const to = query.to !== undefined && query.to <= LAST_ISO_MS ? query.to : undefined;
    if ((query.from ?? FIRST_ISO_MS) > LAST_ISO_MS || (query.to ?? LAST_ISO_MS) <= FIRST_ISO_MS) return { items: [], next: null };
    const range = from !== undefined || to !== undefined
      ? { field: 'at', ...(from !== undefined ? { from: new Date(from).toISOString() } : {}), ...(to !== undefined ? { to: new Date(to).toISOString() } : {}) }
      : undefined;
    const filters = { ...(oneOf.length > 0 ? { oneOf } : {}), ...(range !== undefined ? { range } : {}) };
    const page = await this.journals.of(AUDIT_JOURNAL).read({
      limit: query.limit,
      ...(query.before !== undefined ? { before: Number(query.before) } : {}),
      ...filters,
    });
    // Checked again: a Journal actor of an older version (a rolling upgrade on Dapr) ignores the
    // filters and answers every entry it scanned; its cursor is right all the same.
    const items = page.items.filter(({ entry }) => passes(entry, filters)).map(({ entry }) => entry as unknown as AuditEntry);
    return { items, next: page.next === null ? null : String(page.next) };
  }
}
