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

  it('when an entry is too large, then it is refused and nothing is appended', async () => {
    const j = journal();
    await expect(j.append({ id: 'big', entry: { text: 'x'.repeat(MAX_JOURNAL_ENTRY_BYTES) } })).rejects.toMatchObject({ code: 'invalid_request' });
    expect((await j.read({ limit: 1 })).total).toBe(0);
  });
});
