// The audit log's reads: filters sent to the Journal actor, and checked again on its answer, so
// that an actor of an older version (which reads unknown request fields as nothing) never lets an
// entry through that the filters exclude.

import type { JournalClient } from '../../../actors/journal/client';
import type { JournalApi, JournalPage, ReadRequest } from '../../../actors/journal/JournalInterface';
import { AuditLog, type AuditEntry } from './audit';

const entry = (n: number, action: string, accountId: string): AuditEntry => ({
  id: `e${n}`, at: new Date(Date.UTC(2026, 10, 28, 0, 0, n)).toISOString(), who: 'admin:x', action, accountId, apiKeyId: null, requestId: `r${n}`, details: {},
});

/** A Journal that ignores the filters, as one of an older version does, and records what it was asked. */
function olderJournal(entries: AuditEntry[], asked: ReadRequest[]): JournalClient {
  const api: JournalApi = {
    append: async () => ({ position: 0, added: true }),
    read: async (request): Promise<JournalPage> => {
      asked.push(request);
      const items = entries.map((e, position) => ({ position, entry: { ...e } })).reverse().slice(0, request.limit);
      return { items, next: null, total: entries.length };
    },
  };
  return { of: () => api } as unknown as JournalClient;
}

describe('the audit log read', () => {
  it('when the journal answers entries the filters exclude, then the page holds only those that pass, and the filters were sent to it', async () => {
    const entries = [entry(1, 'api_key.revoke', 'acct_a'), entry(2, 'api_key.revoke', 'acct_b'), entry(3, 'account.suspend', 'acct_a'), entry(4, 'api_key.revoke', 'acct_a')];
    const asked: ReadRequest[] = [];
    const log = new AuditLog(olderJournal(entries, asked));
    const page = await log.read({ limit: 20, accountId: 'acct_a', actions: ['api_key.revoke'], from: Date.parse(entries[1].at) });
    expect(page).toEqual({ items: [entries[3]], next: null });
    expect(asked[0]).toEqual({
      limit: 20,
      oneOf: [{ field: 'accountId', values: ['acct_a'] }, { field: 'action', values: ['api_key.revoke'] }],
      range: { field: 'at', from: entries[1].at },
    });
  });

  it('when a bound is an instant of year 10000 or −1 (an RFC 3339 time of 9999 or 0000 with an offset), then it keeps what it names: all entries, or none', async () => {
    const entries = [entry(1, 'api_key.revoke', 'acct_a'), entry(2, 'account.suspend', 'acct_a')];
    const asked: ReadRequest[] = [];
    const log = new AuditLog(olderJournal(entries, asked));
    const newestFirst = [...entries].reverse();
    expect(await log.read({ limit: 20, to: Date.parse('9999-12-31T23:00:00-05:00') })).toEqual({ items: newestFirst, next: null });
    expect(await log.read({ limit: 20, from: Date.parse('0000-01-01T00:00:00+05:00'), to: Date.parse('9999-12-31T23:59:59.999Z') })).toEqual({ items: newestFirst, next: null });
    expect(await log.read({ limit: 20, from: Date.parse('9999-12-31T23:00:00-05:00') })).toEqual({ items: [], next: null });
    expect(await log.read({ limit: 20, to: Date.parse('0000-01-01T00:00:00+05:00') })).toEqual({ items: [], next: null });
    // Both bounds past what an entry's `at` can be were left out of what the Journal was asked.
    expect(asked.map((request) => request.range)).toEqual([undefined, { field: 'at', to: '9999-12-31T23:59:59.999Z' }]);
  });
});
