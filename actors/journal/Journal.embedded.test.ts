// The Journal actor on the embedded host: appends kept once per id across pages, read newest
// first with a cursor, filtered by a field without case, bounded scans.

import { startEmbeddedActors, type ActorHostUnderTest } from '../../test/support/actor-hosts';
import { JournalClient } from './client';
import { JOURNAL_PAGE_SIZE, MAX_JOURNAL_ENTRY_BYTES } from './JournalInterface';

jest.setTimeout(60_000);

let host: ActorHostUnderTest;
let n = 0;

beforeAll(async () => {
  host = await startEmbeddedActors('journal-');
});
afterAll(async () => {
  await host.close();
});

const journal = () => new JournalClient(host.invoker).of(`test-${++n}`);

describe('Journal actor', () => {
  it('when entries span pages, then a read goes newest first and pages on with its cursor to the first entry', async () => {
    const j = journal();
    const count = JOURNAL_PAGE_SIZE + 10;
    for (let i = 0; i < count; i++) await j.append({ id: `e${i}`, entry: { i } });
    const first = await j.read({ limit: 200 });
    expect(first.total).toBe(count);
    expect(first.items[0]).toEqual({ position: count - 1, entry: { i: count - 1 } });
    expect(first.items).toHaveLength(200);
    const second = await j.read({ limit: 200, before: first.next! });
    expect(second.items.map((x) => x.entry.i)).toEqual(Array.from({ length: count - 200 }, (_, k) => count - 201 - k));
    expect(second.next).toBeNull();
  });

  it('when an append is repeated with its id, then it is kept once', async () => {
    const j = journal();
    expect(await j.append({ id: 'a', entry: { v: 1 } })).toEqual({ position: 0, added: true });
    expect(await j.append({ id: 'a', entry: { v: 2 } })).toEqual({ position: 0, added: false });
    expect((await j.read({ limit: 10 })).items).toEqual([{ position: 0, entry: { v: 1 } }]);
  });

  it('when a read filters on a field, then only entries whose text contains it, compared without case, come back', async () => {
    const j = journal();
    for (const name of ['Alpha team', 'beta', 'ALPHA two', 'gamma']) await j.append({ id: name, entry: { name } });
    await j.append({ id: 'n', entry: { name: 7 } });
    const page = await j.read({ limit: 10, match: { field: 'name', text: 'alpha' } });
    expect(page.items.map((x) => x.entry.name)).toEqual(['ALPHA two', 'Alpha team']);
  });

  it('when a read keeps entries whose fields are one of some values and whose time is in a range, then its pages list each such entry once, newest first', async () => {
    const j = journal();
    const count = JOURNAL_PAGE_SIZE + 20;
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    for (let i = 0; i < count; i++) await j.append({ id: `e${i}`, entry: { i, kind: ['a', 'b', 'c'][i % 3], at: at(i) } });
    const wanted = Array.from({ length: count }, (_, i) => i).filter((i) => i % 3 !== 2 && i >= 10 && i < count - 5).reverse();
    const seen: unknown[] = [];
    let before: number | undefined;
    for (let n = 0; n < 100; n++) {
      const page = await j.read({ limit: 7, ...(before !== undefined ? { before } : {}), oneOf: [{ field: 'kind', values: ['a', 'b'] }], range: { field: 'at', from: at(10), to: at(count - 5) } });
      seen.push(...page.items.map((x) => x.entry.i));
      if (page.next === null) break;
      before = page.next;
    }
    expect(seen).toEqual(wanted);
    // An entry without the field, or with another type, is never kept.
    await j.append({ id: 'no-kind', entry: { at: at(20) } });
    await j.append({ id: 'number', entry: { kind: 1, at: 5 } });
    expect((await j.read({ limit: 2, oneOf: [{ field: 'kind', values: ['a', 'b', 'c'] }] })).items.map((x) => x.entry.i)).toEqual([count - 1, count - 2]);
    expect((await j.read({ limit: 1, range: { field: 'at', to: at(1) } })).items.map((x) => x.entry.i)).toEqual([0]);
  });

  it('when an entry is too large, then it is refused and nothing is appended', async () => {
    const j = journal();
    await expect(j.append({ id: 'big', entry: { text: 'x'.repeat(MAX_JOURNAL_ENTRY_BYTES) } })).rejects.toMatchObject({ code: 'invalid_request' });
    expect((await j.read({ limit: 1 })).total).toBe(0);
  });
});
