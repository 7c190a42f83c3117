// The operator audit log: every operator action that changed something, once, in the `audit`
// Journal actor (who: the operator credential's id; what; when; the request id). Entries are
// written before the action's answer is sent, and never hold a secret: no key, no token, no
// hash (the details each action records are chosen in operator.ts and the routes).

import { createHash, randomUUID } from 'node:crypto';
import type { JournalClient } from '../../../actors/journal/client';
import { AUDIT_JOURNAL } from '../../../actors/journal/JournalInterface';

/** Who acts and under which request: what every operator use case is given. */
export interface OperatorAction {
  who: string;
  requestId: string;
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

/** An operator credential's id: a fingerprint that names it without revealing it. */
export function operatorId(token: string): string {
  return `admin:${createHash('sha256').update(token).digest('hex').slice(0, 12)}`;
}

export class AuditLog {
  constructor(private readonly journals: JournalClient, private readonly now: () => number = Date.now) {}

  /**
   * One entry per action. Its id is made here, once: a retry of the append (daprd's) repeats it and
   * is kept once, while two requests never share one (a request id may come from the client).
   */
  async record(action: OperatorAction, what: string, target: { accountId?: string; apiKeyId?: string }, details: Record<string, unknown>): Promise<void> {
    const id = randomUUID();
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

  async read(query: { limit: number; before?: string; accountId?: string }): Promise<{ items: AuditEntry[]; next: string | null }> {
    const page = await this.journals.of(AUDIT_JOURNAL).read({
      limit: query.limit,
      ...(query.before !== undefined ? { before: Number(query.before) } : {}),
      // Account ids are unique strings: containing one is being it, save for a longer id that
      // starts with it, which the exact check below removes.
      ...(query.accountId !== undefined ? { match: { field: 'accountId', text: query.accountId } } : {}),
    });
    const items = page.items.map(({ entry }) => entry as unknown as AuditEntry)
      .filter((entry) => query.accountId === undefined || entry.accountId === query.accountId);
    return { items, next: page.next === null ? null : String(page.next) };
  }
}
