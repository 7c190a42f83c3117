// The ledger store contract, run against LMDB (lmdb-store.test.ts) and a real Redis
// (redis-store.test.ts): rows in append order read newest first, idempotent appends with the
// right counts, the account listing, and the console's pages, exports and balances on top.

import { randomUUID } from 'node:crypto';
import { billingEvent, usageEvent, type BillingData, type EventEnvelope, type UsageData } from '../../lib/events';
import { ledgerBalance } from './balances';
import { EXPORT_CHUNK_ROWS, exportItems, readPage, type BillItem, type ConsoleItem } from './console';
import type { ItemFilter } from './console-query';
import type { LedgerStore, UsageRow } from './entries';
import { readSpending } from './spending';

const POOL = 'pool-3';
const T0 = Date.parse('2025-03-01T00:00:00.000Z');

export function credit(accountId: string, n: number, atMs = T0 + n * 1000, pool = POOL): EventEnvelope {
  const data: BillingData = { kind: 'credit', accountId, pool, balanceDelta: 1000 + n, amount: 1000 + n, reference: `ref-${n}` };
  return billingEvent(`credit:${accountId}:${pool}:ref-${n}`, atMs, data);
}

export function chatCharge(accountId: string, holdId: string, charged: number, atMs: number): EventEnvelope {
  return billingEvent(`${holdId}:charge`, atMs, {
    kind: 'charge', accountId, pool: POOL, balanceDelta: -charged, amount: charged, holdId, requestId: `req-${holdId}`, model: 'sim-chat', profileId: 'profile-1',
  });
}

export function chatUsage(accountId: string, holdId: string, charged: number, atMs: number): EventEnvelope {
  return usageEvent(`${holdId}:usage`, atMs, {
    accountId, pool: POOL, holdId, requestId: `req-${holdId}`, model: 'sim-chat', profileId: 'profile-1', charged,
    lines: [{ unit: 'TEXT_INPUT', quantity: 10, unitPrice: 100, cost: 1000 }, { unit: 'TEXT_OUTPUT', quantity: 5, unitPrice: 400, cost: 2000 }],
  });
}

/** A settle's one event: the chat's usage carrying its charge (what chatCharge and chatUsage say apart). */
export function chatSettled(accountId: string, holdId: string, charged: number, atMs: number): EventEnvelope {
  const usage = chatUsage(accountId, holdId, charged, atMs);
  return { ...usage, data: { ...(usage.data as UsageData), bill: { id: `${holdId}:charge`, kind: 'charge', balanceDelta: -charged, amount: charged } } };
}

const ids = (items: ConsoleItem[]) => items.map((item) => item.id);

async function collect(chunks: AsyncIterable<ConsoleItem[]>): Promise<ConsoleItem[]> {
  const all: ConsoleItem[] = [];
  for await (const chunk of chunks) all.push(...chunk);
  return all;
}

/** A chat's usage on another model, at another time (the spending sums by day and model). */
function modelUsage(accountId: string, holdId: string, model: string, charged: number, atMs: number): EventEnvelope {
  const usage = chatUsage(accountId, holdId, charged, atMs);
  return { ...usage, data: { ...(usage.data as UsageData), model } };
}

/**
 * `forgetSums` puts an account's ledger back as a version that kept no spending sums left it:
 * its rows and totals as they are, no day sums, no base, no position where the sums begin.
 * `forgetFundsBills` takes the count of FundsHold's bills out of its totals, as a version that kept
 * none left them.
 */
export function ledgerStoreContract(name: string, open: () => Promise<LedgerStore>, close: () => Promise<void>, forgetSums: (store: LedgerStore, accountId: string) => Promise<void>, forgetFundsBills: (accountId: string) => Promise<void>): void {
  describe(`ledger store contract: ${name}`, () => {
    let store: LedgerStore;
    const account = () => `acct_${randomUUID().replace(/-/g, '')}`;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await close();
    });

    it('when events are appended, then the rows are numbered in append order and read newest first', async () => {
      const acct = account();
      for (let n = 1; n <= 5; n++) expect(await store.append(credit(acct, n))).toBe('appended');
      expect(await store.count('billing', acct, POOL)).toBe(5);
      expect((await store.rows('billing', acct, POOL, 2, 4)).map((r) => r.id)).toEqual([4, 3, 2].map((n) => `credit:${acct}:${POOL}:ref-${n}`));
      expect((await store.rows('billing', acct, POOL, -3, 1)).map((r) => r.id)).toEqual([`credit:${acct}:${POOL}:ref-1`]);
      expect((await store.rows('billing', acct, POOL, 5, 9)).map((r) => r.id)).toEqual([`credit:${acct}:${POOL}:ref-5`]);
      expect(await store.rows('billing', acct, POOL, 6, 9)).toEqual([]);
      expect(await store.rows('billing', acct, POOL, 3, 2)).toEqual([]);
      expect(await store.count('usage', acct, POOL)).toBe(0);
    });

    it('when a usage event has two lines, then it is one usage event and two usage rows, each with its share of the charge', async () => {
      const acct = account();
      await store.append(chatUsage(acct, 'h1', 2500, T0));
      expect(await store.account(acct, POOL)).toEqual({ accountId: acct, pool: POOL, balance: 0, bills: 0, fundsBills: 0, usage: 1, usageRows: 2 });
      const rows = await store.rows('usage', acct, POOL, 1, 2);
      expect(rows).toEqual([
        expect.objectContaining({ id: 'h1:usage:TEXT_OUTPUT', unit: 'TEXT_OUTPUT', quantity: 5, unitPrice: 400, cost: 2000, charged: 1500, platformBorne: false, holdId: 'h1', requestId: 'req-h1' }),
        expect.objectContaining({ id: 'h1:usage:TEXT_INPUT', unit: 'TEXT_INPUT', quantity: 10, unitPrice: 100, cost: 1000, charged: 1000, platformBorne: false, occurredAt: new Date(T0).toISOString() }),
      ]);
    });

    it('when a usage event carries its bill, then the rows and totals are those of the billing and usage events apart, and each part is appended once', async () => {
      const [one, two] = [account(), account()];
      await store.appendAll([chatCharge(one, `${one}-h1`, 2500, T0), chatUsage(one, `${one}-h1`, 2500, T0)]);
      expect(await store.appendAll([chatSettled(two, `${two}-h1`, 2500, T0)])).toEqual(['appended']);
      const view = await store.account(one, POOL);
      expect(await store.account(two, POOL)).toEqual({ ...view, accountId: two });
      expect(view).toEqual({ accountId: one, pool: POOL, balance: -2500, bills: 1, fundsBills: 1, usage: 1, usageRows: 2 });
      for (const topic of ['billing', 'usage'] as const) {
        const rows = (acct: string) => store.rows(topic, acct, POOL, 1, 9).then((found) => JSON.parse(JSON.stringify(found).replaceAll(acct, 'acct')) as unknown);
        expect(await rows(two)).toEqual(await rows(one));
      }
      expect(await store.stored([`${two}-h1:charge`, `${two}-h1:usage`])).toEqual([`${two}-h1:charge`, `${two}-h1:usage`]);
      // Delivered again, alone or beside a new event: a duplicate, nothing moves.
      expect(await store.appendAll([chatSettled(two, `${two}-h1`, 2500, T0), chatSettled(two, `${two}-h2`, 100, T0 + 1)])).toEqual(['duplicate', 'appended']);
      expect(await store.account(two, POOL)).toEqual({ accountId: two, pool: POOL, balance: -2600, bills: 2, fundsBills: 2, usage: 2, usageRows: 4 });
      // A bill already appended as a billing event of its own (an earlier layout's outbox): only the usage part is new.
      const three = account();
      await store.append(chatCharge(three, `${three}-h3`, 700, T0));
      expect(await store.append(chatSettled(three, `${three}-h3`, 700, T0))).toBe('appended');
      expect(await store.account(three, POOL)).toEqual({ accountId: three, pool: POOL, balance: -700, bills: 1, fundsBills: 1, usage: 1, usageRows: 2 });
    });

    it('when a usage event carries a route, then each of its rows stores it and the page items show it; a row without one has none', async () => {
      const acct = account();
      const route = { upstream: 'b', attempts: [{ upstream: 'a', outcome: 'timeout' as const, durationMs: 30_000, platformBorne: true }, { upstream: 'b', outcome: 'served' as const, durationMs: 340 }] };
      const routed = chatUsage(acct, 'route-h1', 3000, T0);
      await store.append({ ...routed, data: { ...(routed.data as UsageData), route } });
      await store.append(chatUsage(acct, 'route-h2', 3000, T0 + 1000));
      const rows = await store.rows('usage', acct, POOL, 1, 4);
      expect(rows.map((row) => [row.id, (row as UsageRow).route])).toEqual([
        ['route-h2:usage:TEXT_OUTPUT', undefined], ['route-h2:usage:TEXT_INPUT', undefined], ['route-h1:usage:TEXT_OUTPUT', route], ['route-h1:usage:TEXT_INPUT', route],
      ]);
      const { items } = await readPage(store, 'usage', acct, POOL, { page: 1, size: 4 });
      expect(items.map((item) => ('route' in item ? item.route : 'none'))).toEqual(['none', 'none', route, route]);
    });

    it('when the same events are delivered again, then nothing is added and every count stays right', async () => {
      const acct = account();
      const events = [credit(acct, 1), chatCharge(acct, 'h2', 3000, T0 + 5000), chatUsage(acct, 'h2', 3000, T0 + 5000)];
      for (const event of events) expect(await store.append(event)).toBe('appended');
      for (const event of events) expect(await store.append(event)).toBe('duplicate');
      expect(await store.account(acct, POOL)).toEqual({ accountId: acct, pool: POOL, balance: 1001 - 3000, bills: 2, fundsBills: 2, usage: 1, usageRows: 2 });
      expect(await store.count('billing', acct, POOL)).toBe(2);
      expect(await store.count('usage', acct, POOL)).toBe(2);
      expect(await store.has(events[2].id)).toBe(true);
    });

    it('when a delivery\'s events are appended together, then each has its outcome in order, a repeat within the lot or of an earlier append is a duplicate, and the rows and totals are those of one append each', async () => {
      const acct = account();
      const [first, charge, usage, second] = [credit(acct, 1), chatCharge(acct, 'lot-h1', 3000, T0 + 5000), chatUsage(acct, 'lot-h1', 2500, T0 + 5000), credit(acct, 2)];
      expect(await store.append(first)).toBe('appended');
      expect(await store.appendAll([first, charge, usage, charge, second])).toEqual(['duplicate', 'appended', 'appended', 'duplicate', 'appended']);
      expect(await store.appendAll([])).toEqual([]);
      expect(await store.account(acct, POOL)).toEqual({ accountId: acct, pool: POOL, balance: 1001 - 3000 + 1002, bills: 3, fundsBills: 3, usage: 1, usageRows: 2 });
      expect((await store.rows('billing', acct, POOL, 1, 3)).map((row) => row.id)).toEqual([second.id, charge.id, first.id]);
      expect((await store.rows('usage', acct, POOL, 1, 2)).map((row) => row.id)).toEqual(['lot-h1:usage:TEXT_OUTPUT', 'lot-h1:usage:TEXT_INPUT']);
      expect(await store.stored([first.id, charge.id, usage.id, second.id])).toEqual([first.id, charge.id, usage.id, second.id]);
    });

    it('when accounts have rows in several pools, then the listing names each account and pool once', async () => {
      const [a, b] = [account(), account()];
      await store.append(credit(a, 1));
      await store.append(credit(a, 2));
      await store.append(credit(a, 3, T0, 'pool-1'));
      await store.append(chatUsage(b, 'h3', 0, T0));
      const listed: string[] = [];
      for await (const entry of store.accounts()) if (entry.accountId === a || entry.accountId === b) listed.push(`${entry.accountId} ${entry.pool}`);
      expect(listed.sort()).toEqual([`${a} pool-1`, `${a} ${POOL}`, `${b} ${POOL}`].sort());
    });

    it('when an account is registered with no rows, then it is listed once with nothing, and stays listed once with its rows', async () => {
      const acct = account();
      await store.register(acct, POOL);
      await store.register(acct, POOL);
      const listed = async () => {
        const found: string[] = [];
        for await (const entry of store.accounts()) if (entry.accountId === acct) found.push(entry.pool);
        return found;
      };
      expect(await listed()).toEqual([POOL]);
      expect(await store.account(acct, POOL)).toEqual({ accountId: acct, pool: POOL, balance: 0, bills: 0, fundsBills: 0, usage: 0, usageRows: 0 });
      await store.append(credit(acct, 1));
      await store.register(acct, POOL);
      expect(await listed()).toEqual([POOL]);
      expect(await store.account(acct, POOL)).toMatchObject({ balance: 1001, bills: 1 });
    });

    it('when asked which of some events are stored, then it names the appended ones in the order asked', async () => {
      const acct = account();
      const events = [credit(acct, 1), credit(acct, 2), credit(acct, 3)];
      await store.append(events[2]);
      await store.append(events[0]);
      expect(await store.stored([events[0].id, events[1].id, events[2].id])).toEqual([events[0].id, events[2].id]);
      expect(await store.stored([])).toEqual([]);
    });

    it('when pages are read, then they cover every item once, newest first, with the total; past the last page they are empty', async () => {
      const acct = account();
      expect(await readPage(store, 'bills', acct, POOL, { page: 1, size: 20 })).toEqual({ items: [], page: 1, size: 20, total: 0, through: 0 });
      for (let n = 1; n <= 7; n++) await store.append(credit(acct, n));
      const newestFirst = [7, 6, 5, 4, 3, 2, 1].map((n) => `credit:${acct}:${POOL}:ref-${n}`);
      const pages = await Promise.all([1, 2, 3].map((page) => readPage(store, 'bills', acct, POOL, { page, size: 3 })));
      expect(pages.map((p) => ids(p.items))).toEqual([newestFirst.slice(0, 3), newestFirst.slice(3, 6), newestFirst.slice(6)]);
      expect(pages.map((p) => p.total)).toEqual([7, 7, 7]);
      expect(await readPage(store, 'bills', acct, POOL, { page: 4, size: 3 })).toEqual({ items: [], page: 4, size: 3, total: 7, through: 7 });
      expect(await readPage(store, 'bills', acct, POOL, { page: Number.MAX_SAFE_INTEGER, size: 100 })).toMatchObject({ items: [], total: 7 });
      expect((await readPage(store, 'bills', acct, POOL, { page: 1, size: 100 })).items[0]).toEqual({
        id: newestFirst[0], occurredAt: new Date(T0 + 7000).toISOString(), kind: 'credit', amount: 1007, balanceDelta: 1007, reference: 'ref-7',
      });
    });

    it('when rows are recorded between the pages of one list, then pages read with the first page\'s through neither repeat nor skip a row, and its export is those pages', async () => {
      const acct = account();
      for (let n = 1; n <= 7; n++) await store.append(credit(acct, n));
      const first = await readPage(store, 'bills', acct, POOL, { page: 1, size: 3 });
      expect(first.through).toBe(7);
      for (let n = 8; n <= 9; n++) await store.append(credit(acct, n));
      // Without it, the list has moved on: the next page repeats two rows of the first.
      const moved = await readPage(store, 'bills', acct, POOL, { page: 2, size: 3 });
      expect(ids(moved.items).filter((id) => ids(first.items).includes(id))).toHaveLength(2);
      const rest = [2, 3].map((page) => readPage(store, 'bills', acct, POOL, { page, size: 3, through: first.through }));
      const pages = [first, ...(await Promise.all(rest))];
      expect(pages.map((p) => [p.total, p.through])).toEqual([[7, 7], [7, 7], [7, 7]]);
      expect(pages.flatMap((p) => ids(p.items))).toEqual([7, 6, 5, 4, 3, 2, 1].map((n) => `credit:${acct}:${POOL}:ref-${n}`));
      expect(ids(await collect(exportItems(store, 'bills', acct, POOL, { through: 7 })))).toEqual(pages.flatMap((p) => ids(p.items)));
      // Filtered, the same: the items the filter lists among the first `through` rows.
      const filtered = await readPage(store, 'bills', acct, POOL, { page: 1, size: 10, fromMs: T0 + 5000, through: 7 });
      expect([ids(filtered.items), filtered.total, filtered.through]).toEqual([[7, 6, 5].map((n) => `credit:${acct}:${POOL}:ref-${n}`), 3, 7]);
      // A through beyond the rows the account has lists them all, and says how many it read.
      expect(await readPage(store, 'bills', acct, POOL, { page: 1, size: 1, through: 1000 })).toMatchObject({ total: 9, through: 9 });
      expect(await readPage(store, 'bills', acct, POOL, { page: 1, size: 5, through: 0 })).toEqual({ items: [], page: 1, size: 5, total: 0, through: 0 });
    });

    it('when an export runs, then it lists the items of all pages in their order, filtered by time (from inclusive, to exclusive)', async () => {
      const acct = account();
      for (let n = 1; n <= 5; n++) {
        await store.append(chatCharge(acct, `h-${acct}-${n}`, 3000, T0 + n * 1000));
        await store.append(chatUsage(acct, `h-${acct}-${n}`, 3000, T0 + n * 1000));
      }
      const pages: ConsoleItem[] = [];
      for (let page = 1; page <= 4; page++) pages.push(...(await readPage(store, 'usage', acct, POOL, { page, size: 3 })).items);
      expect(pages).toHaveLength(10);
      expect(await collect(exportItems(store, 'usage', acct, POOL, {}))).toEqual(pages);
      const window = await collect(exportItems(store, 'usage', acct, POOL, { fromMs: T0 + 2000, toMs: T0 + 4000 }));
      expect(window.map((item) => item.occurredAt)).toEqual([T0 + 3000, T0 + 3000, T0 + 2000, T0 + 2000].map((ms) => new Date(ms).toISOString()));
      expect(await collect(exportItems(store, 'bills', acct, POOL, { fromMs: T0 + 9000 }))).toEqual([]);
    });

    it('when a page or an export is filtered, then it lists exactly the items that match, in order, the total counting them', async () => {
      const acct = account();
      const imageBill = (n: number, kind: 'charge' | 'release') => billingEvent(`img:task-${n}:${kind}`, T0 + n * 1000, {
        kind, accountId: acct, pool: POOL, balanceDelta: kind === 'charge' ? -500 : 0, amount: 500, holdId: `img:task-${n}`, requestId: `req-img-${n}`, model: 'sim-image', profileId: 'profile-1',
      });
      const events: EventEnvelope[] = [];
      for (let n = 1; n <= 12; n++) {
        if (n % 4 === 0) events.push(credit(acct, n));
        else if (n % 4 === 1) events.push(imageBill(n, n === 1 ? 'charge' : 'release'));
        else events.push(chatCharge(acct, `h-${acct}-${n}`, 300, T0 + n * 1000), n % 2 === 0 ? modelUsage(acct, `h-${acct}-${n}`, 'other', 300, T0 + n * 1000) : chatUsage(acct, `h-${acct}-${n}`, 300, T0 + n * 1000));
      }
      await store.appendAll(events);
      const all = await collect(exportItems(store, 'bills', acct, POOL, {}));
      const expectFiltered = async (filter: ItemFilter, pick: (item: BillItem) => boolean) => {
        const expected = (all as BillItem[]).filter(pick);
        expect([filter, ids(await collect(exportItems(store, 'bills', acct, POOL, filter)))]).toEqual([filter, ids(expected)]);
        const pages = await Promise.all([1, 2, 3].map((page) => readPage(store, 'bills', acct, POOL, { page, size: 2, ...filter })));
        expect([filter, pages.map((p) => p.total)]).toEqual([filter, [expected.length, expected.length, expected.length]]);
        expect([filter, pages.flatMap((p) => ids(p.items))]).toEqual([filter, ids(expected.slice(0, 6))]);
        return expected.length;
      };
      expect(await expectFiltered({ kind: 'credit' }, (b) => b.kind === 'credit')).toBe(3);
      expect(await expectFiltered({ images: true }, (b) => b.taskId !== undefined)).toBe(3);
      expect(await expectFiltered({ images: false }, (b) => b.taskId === undefined)).toBe(9);
      expect(await expectFiltered({ images: true, kind: 'release' }, (b) => b.taskId !== undefined && b.kind === 'release')).toBe(2);
      expect(await expectFiltered({ model: 'sim-chat', fromMs: T0 + 3000, toMs: T0 + 10_000 }, (b) => b.model === 'sim-chat' && b.occurredAt >= new Date(T0 + 3000).toISOString() && b.occurredAt < new Date(T0 + 10_000).toISOString())).toBe(3);
      expect(await expectFiltered({ model: 'none' }, () => false)).toBe(0);
      const otherUsage = await readPage(store, 'usage', acct, POOL, { page: 1, size: 100, model: 'other' });
      expect([otherUsage.total, new Set(otherUsage.items.map((item) => item.model))]).toEqual([6, new Set(['other'])]);
    });

    it('when a filtered page spans chunks of the list, then its items and total are those of the filtered export', async () => {
      const acct = account();
      const events: EventEnvelope[] = [];
      for (let n = 1; n <= EXPORT_CHUNK_ROWS + 150; n++) events.push(n % 3 === 0 ? credit(acct, n) : chatCharge(acct, `h-${acct}-${n}`, 300, T0 + n * 1000));
      await store.appendAll(events);
      const credits = ids(await collect(exportItems(store, 'bills', acct, POOL, { kind: 'credit' })));
      expect(credits).toHaveLength(Math.floor((EXPORT_CHUNK_ROWS + 150) / 3));
      const page = await readPage(store, 'bills', acct, POOL, { page: 4, size: 100, kind: 'credit' });
      expect([page.total, ids(page.items)]).toEqual([credits.length, credits.slice(300, 400)]);
    });

    it('when rows are appended while an export runs, then the export lists the rows there were when it began, each once', async () => {
      const acct = account();
      const total = EXPORT_CHUNK_ROWS + 200;
      for (let n = 1; n <= total; n++) await store.append(credit(acct, n));
      const chunks = exportItems(store, 'bills', acct, POOL, {})[Symbol.asyncIterator]();
      const first = await chunks.next();
      expect(first.done).toBe(false);
      await store.append(credit(acct, total + 1));
      const rest = await collect({ [Symbol.asyncIterator]: () => chunks });
      const all = [...(first.value as ConsoleItem[]), ...rest];
      expect(all).toHaveLength(total);
      expect(all[0].id).toBe(`credit:${acct}:${POOL}:ref-${total}`);
      expect(all[total - 1].id).toBe(`credit:${acct}:${POOL}:ref-1`);
      expect(new Set(ids(all)).size).toBe(total);
    });

    it('when usage events of several models and days are appended, then the spending sums what each day\'s calls of each model charged, once per event, within the days asked', async () => {
      const acct = account();
      const at = (iso: string) => Date.parse(iso);
      await store.appendAll([
        chatSettled(acct, 's1', 3000, at('2025-03-01T00:00:00.000Z')),
        modelUsage(acct, 's2', 'other-model', 500, at('2025-03-01T23:59:59.999Z')),
        chatUsage(acct, 's3', 700, at('2025-03-02T12:00:00.000Z')),
        credit(acct, 1, at('2025-03-02T12:00:00.000Z')),
      ]);
      await store.append(modelUsage(acct, 's4', 'other-model', 0, at('2025-03-04T00:00:00.000Z')));
      // Delivered again, alone and in a lot: nothing is added.
      await store.append(chatUsage(acct, 's3', 700, at('2025-03-02T12:00:00.000Z')));
      await store.appendAll([chatSettled(acct, 's1', 3000, at('2025-03-01T00:00:00.000Z'))]);
      const all = await readSpending(store, acct, POOL, { from: '2025-02-01', to: '2025-03-31' });
      expect(all).toEqual({
        from: '2025-02-01', to: '2025-03-31',
        items: [
          { day: '2025-03-01', model: 'other-model', charged: 500 },
          { day: '2025-03-01', model: 'sim-chat', charged: 3000 },
          { day: '2025-03-02', model: 'sim-chat', charged: 700 },
          { day: '2025-03-04', model: 'other-model', charged: 0 },
        ],
      });
      // The same sums as the usage rows' charged shares.
      const rows = (await collect(exportItems(store, 'usage', acct, POOL, {}))) as UsageRow[];
      expect(rows.reduce((sum, row) => sum + row.charged, 0)).toBe(all.items.reduce((sum, item) => sum + item.charged, 0));
      expect((await readSpending(store, acct, POOL, { from: '2025-03-02', to: '2025-03-03' })).items).toEqual([{ day: '2025-03-02', model: 'sim-chat', charged: 700 }]);
      expect((await readSpending(store, account(), POOL, { from: '2025-03-01', to: '2025-03-31' })).items).toEqual([]);
    });

    it('when an account has rows from a version that kept no spending sums, then they are summed once from the rows and kept, and later calls are added to them', async () => {
      const acct = account();
      const at = (iso: string) => Date.parse(iso);
      await store.appendAll([chatSettled(acct, 'o1', 3000, at('2025-03-01T08:00:00Z')), modelUsage(acct, 'o2', 'other-model', 400, at('2025-03-02T08:00:00Z'))]);
      await forgetSums(store, acct);
      const days = { from: '2025-03-01', to: '2025-03-03' };
      const old = [{ day: '2025-03-01', model: 'sim-chat', charged: 3000 }, { day: '2025-03-02', model: 'other-model', charged: 400 }];
      expect((await readSpending(store, acct, POOL, days)).items).toEqual(old);
      expect(await store.spendingBase(acct, POOL)).toMatchObject({ upTo: 4 });
      // A new call: its day is summed as it is appended; the old rows stay in the kept base.
      await store.append(chatUsage(acct, 'n1', 250, at('2025-03-02T09:00:00Z')));
      await store.append(chatUsage(acct, 'n2', 50, at('2025-03-03T09:00:00Z')));
      expect(await store.spendingFrom(acct, POOL)).toBe(4);
      expect((await readSpending(store, acct, POOL, days)).items).toEqual([...old, { day: '2025-03-02', model: 'sim-chat', charged: 250 }, { day: '2025-03-03', model: 'sim-chat', charged: 50 }]);
      expect(await store.spendingBase(acct, POOL)).toMatchObject({ upTo: 4 });
    });

    it('when the balance is recomputed, then it is the exact sum of the bill rows and equals the running total', async () => {
      const acct = account();
      await store.append(credit(acct, 1));
      await store.append(chatCharge(acct, `h-${acct}`, 700, T0 + 1));
      await store.append(chatUsage(acct, `h-${acct}`, 700, T0 + 1));
      await store.append(billingEvent(`h-${acct}-2:release`, T0 + 2, { kind: 'release', accountId: acct, pool: POOL, balanceDelta: 0, amount: 5000, holdId: `h-${acct}-2` }));
      expect(await ledgerBalance(store, acct, POOL)).toEqual({ accountId: acct, pool: POOL, balance: 1001 - 700, runningTotal: 1001 - 700, bills: 3, fundsBills: 3 });
      expect(await ledgerBalance(store, account(), POOL)).toMatchObject({ balance: 0, runningTotal: 0, bills: 0 });
    });

    it('when FundsHold\'s events and an image task\'s make bills, then the totals count FundsHold\'s apart, from 0 for a registered or new account; totals kept before the count stay uncounted', async () => {
      const acct = account();
      await store.register(acct, POOL);
      expect(await store.account(acct, POOL)).toMatchObject({ bills: 0, fundsBills: 0 });
      // A late image artifact is billed by its ImageTask, which the account's FundsHold never sees.
      const borne = billingEvent(`img-${acct}:late-artifact:platform-borne`, T0, { kind: 'platform_borne', accountId: acct, pool: POOL, balanceDelta: 0, amount: 500, reference: 'late-artifact' }, 'ImageTask');
      await store.appendAll([credit(acct, 1), borne, chatSettled(acct, `h-${acct}`, 300, T0 + 1), credit(acct, 1)]);
      expect(await store.account(acct, POOL)).toMatchObject({ bills: 3, fundsBills: 2 });
      expect(await ledgerBalance(store, acct, POOL)).toMatchObject({ bills: 3, fundsBills: 2 });
      const fresh = account();
      await store.append(billingEvent(`h-${fresh}:release`, T0, { kind: 'release', accountId: fresh, pool: POOL, balanceDelta: 0, amount: 5000, holdId: `h-${fresh}` }));
      expect(await store.account(fresh, POOL)).toMatchObject({ bills: 1, fundsBills: 1 });
      await forgetFundsBills(fresh);
      await store.append(credit(fresh, 2));
      await store.register(fresh, POOL);
      const uncounted = await store.account(fresh, POOL);
      expect(uncounted).toMatchObject({ bills: 2, balance: 1002 });
      expect(uncounted.fundsBills).toBeUndefined();
      expect((await ledgerBalance(store, fresh, POOL)).fundsBills).toBeUndefined();
    });
  });
}
