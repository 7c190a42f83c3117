// End-to-end console suite over HTTP: bills and usage by page and by export, on the caller's own
// account only, and reconciliation of the ledger with the FundsHold actors, against the embedded
// process and the Dapr topology. On Dapr the ledger is reached by service invocation and fills
// from pub/sub, so reads that follow a change wait until the ledger has caught up (passes).

import { billingEvent, usageEvent, type EventEnvelope } from '../../lib/events';
import { admin, chat, fundedAccount, hello, image, json, picture } from '../support/api';
import { ADMIN_TOKEN } from '../support/processes';
import { checkoutCallback, createOrder, getOrder, paymentEvent } from '../support/orders';
import { passes } from '../support/eventually';
import { itConformsToOpenApi, recordAnswers } from '../support/openapi-conformance';

export interface ConsoleDeploymentUnderTest {
  url: string;
  /** Appends events straight to the deployment's ledger store, as its subscriber would. */
  seed(events: EventEnvelope[]): Promise<void>;
  close(): Promise<void>;
}

const CONSOLE = '/api/distribution/api-credit';
const BILL_COLUMNS = ['id', 'occurredAt', 'kind', 'amount', 'balanceDelta', 'holdId', 'requestId', 'taskId', 'model', 'profileId', 'reference'];
const USAGE_COLUMNS = ['id', 'occurredAt', 'unit', 'quantity', 'unitPrice', 'cost', 'charged', 'platformBorne', 'holdId', 'requestId', 'taskId', 'model', 'profileId', 'reasoningTokens', 'upstream', 'attempts'];
const FUNDS = 1_000_000_000;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

type Kind = 'bills' | 'usage';
type Item = Record<string, string | number | boolean>;

export function consoleSuite(hostName: string, start: () => Promise<ConsoleDeploymentUnderTest>): void {
  describe(`console bills and usage on the ${hostName} host`, () => {
    let d: ConsoleDeploymentUnderTest;
    const openApi = recordAnswers(() => d?.url);
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    const get = (apiKey: string, path: string) => json(`${d.url}${CONSOLE}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
    const page = async (apiKey: string, kind: Kind, query = '') => {
      const response = await get(apiKey, `/${kind}/page${query}`);
      expect([response.status, response.body.error]).toEqual([200, undefined]);
      return response.body as { items: Item[]; page: number; size: number; total: number };
    };
    const exported = async (apiKey: string, kind: Kind, query = '') => {
      const response = await fetch(`${d.url}${CONSOLE}/${kind}/export${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
      return { status: response.status, headers: response.headers, text: await response.text() };
    };
    /** The export asked by a form post: `body` its fields, form-encoded. */
    const postExport = async (kind: Kind, body: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${d.url}${CONSOLE}/${kind}/export`, { method: 'POST', headers: { ...FORM, ...headers }, body });
      return { status: response.status, headers: response.headers, text: await response.text() };
    };
    const jsonl = async (apiKey: string, kind: Kind, query = '') => {
      const answer = await exported(apiKey, kind, `?format=jsonl${query}`);
      expect(answer.status).toBe(200);
      return answer.text.split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line) as Item);
    };
    /** Every item through pages of `size`, first to last, and the total they report. */
    const allPages = async (apiKey: string, kind: Kind, size: number) => {
      const items: Item[] = [];
      let total = 0;
      for (let n = 1; ; n++) {
        const answer = await page(apiKey, kind, `?page=${n}&size=${size}`);
        total = answer.total;
        if (answer.items.length === 0) break;
        expect(answer.items.length).toBeLessThanOrEqual(size);
        items.push(...answer.items);
      }
      return { items, total };
    };
    /** The CSV row an item must be exported as (plain values: nothing in these tests needs quoting). */
    const csvRow = (item: Item, columns: string[]) => columns.map((c) => (item[c] === undefined ? '' : String(item[c]))).join(',');
    const waitForLedger = (apiKey: string, bills: number, usageRows: number) => passes(async () => {
      expect((await page(apiKey, 'bills', '?size=1')).total).toBe(bills);
      expect((await page(apiKey, 'usage', '?size=1')).total).toBe(usageRows);
    });

    it('when an account has nothing yet, then its pages are empty, the CSV export is a header row and the JSON Lines export is empty', async () => {
      const { apiKey } = await fundedAccount(d.url, 0);
      expect(await page(apiKey, 'bills')).toEqual({ items: [], page: 1, size: 20, total: 0, through: 0 });
      expect(await page(apiKey, 'usage', '?page=3&size=100')).toEqual({ items: [], page: 3, size: 100, total: 0, through: 0 });
      const csv = await exported(apiKey, 'bills');
      expect([csv.status, csv.headers.get('content-type'), csv.headers.get('content-disposition')]).toEqual([200, 'text/csv; charset=utf-8', 'attachment; filename="bills.csv"']);
      expect(csv.text).toBe(`${BILL_COLUMNS.join(',')}\n`);
      const usage = await exported(apiKey, 'usage', '?format=jsonl');
      expect([usage.status, usage.headers.get('content-type'), usage.headers.get('content-disposition'), usage.text]).toEqual([200, 'application/x-ndjson; charset=utf-8', 'attachment; filename="usage.jsonl"', '']);
    });

    describe('an account with credits, chats and an image', () => {
      let apiKey: string;
      let accountId: string;
      let charged: { requestId: string; chargedAmount: number };
      let failedRequestId: string;
      let taskId: string;
      beforeAll(async () => {
        ({ apiKey, accountId } = await fundedAccount(d.url, FUNDS));
        for (let n = 1; n <= 4; n++) expect((await admin(d.url, `/admin/v1/accounts/${accountId}/credits`, { amount: 1000 * n, reference: `top-up-${n}` })).status).toBe(200);
        for (let n = 0; n < 3; n++) {
          const answer = await chat(d.url, apiKey, { ...hello, max_tokens: 16 }, { headers: { 'x-sim-directive': `tokens=${4 + n}` } });
          expect(answer.status).toBe(200);
          charged = { requestId: answer.headers.get('x-request-id') as string, chargedAmount: Number(answer.headers.get('x-payg-charged')) };
        }
        const failed = await chat(d.url, apiKey, hello, { headers: { 'x-sim-directive': 'fail-before-output' } });
        expect(failed.status).toBe(502);
        failedRequestId = failed.headers.get('x-request-id') as string;
        const made = await image(d.url, apiKey, picture);
        expect(made.status).toBe(200);
        taskId = made.body.taskId;
        // Bills: 5 credits, 3 chat charges, 1 release, 1 image charge. Usage rows: 2 per chat, 1 image.
        await waitForLedger(apiKey, 10, 7);
      });

      it('when pages of size 1, 3, 20 (default) and 100 are read, then each covers every item once in the same order, and past the last page is empty with the total', async () => {
        const [one, three, hundred] = await Promise.all([allPages(apiKey, 'bills', 1), allPages(apiKey, 'bills', 3), allPages(apiKey, 'bills', 100)]);
        expect(one.items).toHaveLength(10);
        expect(three.items).toEqual(one.items);
        expect(hundred.items).toEqual(one.items);
        expect([one.total, three.total, hundred.total]).toEqual([10, 10, 10]);
        expect(new Set(one.items.map((i) => i.id)).size).toBe(10);
        expect((await page(apiKey, 'bills')).items).toEqual(one.items);
        expect(await page(apiKey, 'bills', '?page=4&size=3')).toEqual({ items: [one.items[9]], page: 4, size: 3, total: 10, through: 10 });
        expect(await page(apiKey, 'bills', '?page=5&size=3')).toEqual({ items: [], page: 5, size: 3, total: 10, through: 10 });
        expect(await page(apiKey, 'usage', '?page=999999&size=100')).toEqual({ items: [], page: 999999, size: 100, total: 7, through: 7 });
      });

      it('when bills are read, then credits, charges, the release and the image charge carry their fields, with exact amounts that add up to the balance', async () => {
        const { items } = await allPages(apiKey, 'bills', 100);
        const byKind = (kind: string) => items.filter((i) => i.kind === kind);
        expect(byKind('credit').map((i) => i.reference).sort()).toEqual(['initial', 'top-up-1', 'top-up-2', 'top-up-3', 'top-up-4']);
        const credited: Record<string, number> = { initial: FUNDS, 'top-up-1': 1000, 'top-up-2': 2000, 'top-up-3': 3000, 'top-up-4': 4000 };
        for (const credit of byKind('credit')) {
          const amount = credited[credit.reference as string];
          expect(credit).toEqual({ id: `credit:${accountId}:pool-3:${credit.reference}`, occurredAt: expect.any(String), kind: 'credit', amount, balanceDelta: amount, reference: credit.reference });
        }
        const lastChat = items.find((i) => i.requestId === charged.requestId);
        expect(lastChat).toEqual({
          id: `${lastChat?.holdId}:charge`, occurredAt: expect.any(String), kind: 'charge', amount: charged.chargedAmount, balanceDelta: -charged.chargedAmount,
          holdId: expect.any(String), requestId: charged.requestId, model: 'sim-chat', profileId: expect.any(String),
        });
        expect(items.find((i) => i.requestId === failedRequestId)).toMatchObject({ kind: 'release', balanceDelta: 0, reference: 'provider_failed', model: 'sim-chat' });
        expect(items.find((i) => i.taskId === taskId)).toMatchObject({ kind: 'charge', holdId: `img:${taskId}`, model: 'sim-image', amount: expect.any(Number) });
        for (const item of items) expect(new Date(item.occurredAt as string).toISOString()).toBe(item.occurredAt);
        const sum = items.reduce((total, i) => total + BigInt(i.balanceDelta as number), 0n);
        const balance = await json(`${d.url}${CONSOLE}/balance`, { headers: { authorization: `Bearer ${apiKey}` } });
        expect(sum).toBe(BigInt(balance.body.balance));
      });

      it('when usage is read, then one row per line: the chat lines share its charge, the image row names its task', async () => {
        const { items } = await allPages(apiKey, 'usage', 2);
        expect(items).toHaveLength(7);
        const lastChat = items.filter((i) => i.requestId === charged.requestId);
        expect(lastChat.map((i) => i.unit).sort()).toEqual(['TEXT_INPUT', 'TEXT_OUTPUT']);
        for (const line of lastChat) {
          expect(line).toEqual({
            id: `${line.holdId}:usage:${line.unit}`, occurredAt: expect.any(String), unit: line.unit, quantity: expect.any(Number), unitPrice: expect.any(Number),
            cost: (line.quantity as number) * (line.unitPrice as number), charged: line.cost, platformBorne: false,
            holdId: expect.any(String), requestId: charged.requestId, model: 'sim-chat', profileId: expect.any(String),
          });
        }
        expect(lastChat.find((i) => i.unit === 'TEXT_OUTPUT')?.quantity).toBe(6);
        expect(lastChat.reduce((total, i) => total + (i.charged as number), 0)).toBe(charged.chargedAmount);
        expect(items.find((i) => i.unit === 'IMAGE')).toMatchObject({ taskId, holdId: `img:${taskId}`, quantity: 1, model: 'sim-image', platformBorne: false });
        expect(items.some((i) => i.requestId === failedRequestId)).toBe(false);
      });

      it('when spending is read, then it is what the usage rows charged, summed per UTC day and model, within the days asked', async () => {
        const { items } = await allPages(apiKey, 'usage', 100);
        const sums = new Map<string, number>();
        for (const row of items) {
          const key = `${(row.occurredAt as string).slice(0, 10)} ${row.model as string}`;
          sums.set(key, (sums.get(key) ?? 0) + (row.charged as number));
        }
        const expected = [...sums].map(([key, charged]) => ({ day: key.split(' ')[0], model: key.split(' ')[1], charged })).sort((a, b) => `${a.day} ${a.model}`.localeCompare(`${b.day} ${b.model}`));
        const today = new Date().toISOString().slice(0, 10);
        const read = await get(apiKey, '/spending');
        expect(read.status).toBe(200);
        // The default: the 30 days that end today (the rows were all made in the last minutes).
        expect(read.body).toEqual({ from: expect.any(String), to: today, items: expected });
        expect(expected.map((item) => item.model).sort()).toEqual(['sim-chat', 'sim-image']);
        const day = expected[0].day;
        expect((await get(apiKey, `/spending?from=${day}&to=${day}`)).body.items).toEqual(expected.filter((item) => item.day === day));
        expect((await get(apiKey, '/spending?from=2020-01-01&to=2020-12-31')).body).toEqual({ from: '2020-01-01', to: '2020-12-31', items: [] });
        // Another account sees only its own.
        const other = await fundedAccount(d.url, 1_000_000);
        expect((await get(other.apiKey, '/spending')).body.items).toEqual([]);
        for (const query of ['?from=2025-02-30', '?from=2025-03-02&to=2025-03-01', '?from=2020-01-01&to=2025-01-01', '?accountId=acct_x', '?to=today']) {
          expect([query, (await get(apiKey, `/spending${query}`)).body.error?.code]).toEqual([query, 'invalid_request']);
        }
      });

      it('when exported as JSON Lines and as CSV, then the export is exactly the pages, concatenated', async () => {
        for (const [kind, columns] of [['bills', BILL_COLUMNS], ['usage', USAGE_COLUMNS]] as const) {
          const { items } = await allPages(apiKey, kind, 3);
          expect(await jsonl(apiKey, kind)).toEqual(items);
          for (const query of ['', '?format=csv']) {
            const csv = await exported(apiKey, kind, query);
            expect(csv.status).toBe(200);
            expect(csv.text).toBe([columns.join(','), ...items.map((item) => csvRow(item, columns)), ''].join('\n'));
          }
        }
      });

      it('when an export is asked by a form post (what the web console submits: the credential in access_token, the filters as fields), then it is the GET export, byte for byte and with its headers', async () => {
        const cases: Array<[Kind, string]> = [['bills', 'format=jsonl'], ['bills', 'kind=credit'], ['usage', 'format=csv&images=false'], ['usage', '']];
        for (const [kind, fields] of cases) {
          const asked = await exported(apiKey, kind, fields ? `?${fields}` : '');
          expect(asked.status).toBe(200);
          const posted = await postExport(kind, `access_token=${encodeURIComponent(apiKey)}${fields ? `&${fields}` : ''}`);
          expect([kind, fields, posted.status, posted.text]).toEqual([kind, fields, 200, asked.text]);
          for (const header of ['content-type', 'content-disposition', 'cache-control']) expect(posted.headers.get(header)).toBe(asked.headers.get(header));
          // The Authorization header serves the form the same (a client that can send one).
          expect((await postExport(kind, fields, { authorization: `Bearer ${apiKey}` })).text).toBe(asked.text);
        }
      });

      it('when an export has from and to, then it holds the items at or after from and before to, whatever the time zone of the query', async () => {
        const { items } = await allPages(apiKey, 'bills', 100);
        const times = [...new Set(items.map((i) => Date.parse(i.occurredAt as string)))].sort((a, b) => a - b);
        const [from, to] = [times[1], times[times.length - 1]];
        const expected = items.filter((i) => Date.parse(i.occurredAt as string) >= from && Date.parse(i.occurredAt as string) < to);
        expect(expected.length).toBeGreaterThan(0);
        expect(expected.length).toBeLessThan(items.length);
        const inParis = (ms: number) => new Date(ms + 3_600_000).toISOString().replace('Z', '+01:00');
        expect(await jsonl(apiKey, 'bills', `&from=${encodeURIComponent(inParis(from))}&to=${encodeURIComponent(new Date(to).toISOString())}`)).toEqual(expected);
        expect(await jsonl(apiKey, 'bills', `&from=${encodeURIComponent(new Date(to).toISOString())}`)).toEqual(items.filter((i) => Date.parse(i.occurredAt as string) >= to));
        expect(await jsonl(apiKey, 'bills', `&to=${encodeURIComponent(new Date(times[0]).toISOString())}`)).toEqual([]);
        const csv = await exported(apiKey, 'bills', `?from=${encodeURIComponent(new Date(from).toISOString())}&to=${encodeURIComponent(new Date(to).toISOString())}`);
        expect(csv.text).toBe([BILL_COLUMNS.join(','), ...expected.map((item) => csvRow(item, BILL_COLUMNS)), ''].join('\n'));
      });

      it('when pages and exports are filtered by model, kind, images and time, then they list exactly the matching items, the total counting them', async () => {
        const bills = (await allPages(apiKey, 'bills', 100)).items;
        const usage = (await allPages(apiKey, 'usage', 100)).items;
        const times = [...new Set(bills.map((i) => Date.parse(i.occurredAt as string)))].sort((a, b) => a - b);
        const from = new Date(times[1]).toISOString();
        const cases: Array<[Kind, string, (item: Item) => boolean]> = [
          ['bills', 'kind=credit', (i) => i.kind === 'credit'],
          ['bills', 'kind=release&model=sim-chat', (i) => i.kind === 'release' && i.model === 'sim-chat'],
          ['bills', 'images=true', (i) => i.taskId !== undefined],
          ['bills', 'images=false&kind=charge', (i) => i.taskId === undefined && i.kind === 'charge'],
          ['bills', `model=sim-chat&from=${encodeURIComponent(from)}`, (i) => i.model === 'sim-chat' && Date.parse(i.occurredAt as string) >= times[1]],
          ['bills', 'model=no-such-model', () => false],
          ['usage', 'model=sim-image', (i) => i.model === 'sim-image'],
          ['usage', 'images=false', (i) => i.taskId === undefined],
        ];
        for (const [kind, filter, pick] of cases) {
          const expected = (kind === 'bills' ? bills : usage).filter(pick);
          const first = await page(apiKey, kind, `?size=2&${filter}`);
          expect([kind, filter, first.total, first.items]).toEqual([kind, filter, expected.length, expected.slice(0, 2)]);
          const second = await page(apiKey, kind, `?page=2&size=2&${filter}`);
          expect([kind, filter, second.items]).toEqual([kind, filter, expected.slice(2, 4)]);
          expect([kind, filter, await jsonl(apiKey, kind, `&${filter}`)]).toEqual([kind, filter, expected]);
        }
        expect(bills.filter((i) => i.kind === 'credit')).toHaveLength(5);
        expect(bills.filter((i) => i.taskId !== undefined)).toHaveLength(1);
      });

      it("when another account's key reads, then it sees only its own rows, whatever the query names", async () => {
        const other = await fundedAccount(d.url, 5000);
        await waitForLedger(other.apiKey, 1, 0);
        const mine = await page(other.apiKey, 'bills', '?size=100');
        expect(mine.items.map((i) => i.id)).toEqual([`credit:${other.accountId}:pool-3:initial`]);
        for (const query of [`?accountId=${accountId}`, `?account=${accountId}`, `?pool=pool-3`, `?page=1&accountId=${accountId}`, `?apiKey=${apiKey}`]) {
          for (const path of ['/bills/page', '/usage/page', '/bills/export', '/usage/export']) {
            const answer = await get(other.apiKey, `${path}${query}`);
            expect([path, query, answer.status, answer.body.error?.code]).toEqual([path, query, 400, 'invalid_request']);
            expect(JSON.stringify(answer.body)).not.toContain(charged.requestId);
          }
        }
        for (const kind of ['bills', 'usage'] as const) {
          const all = `${(await exported(other.apiKey, kind, '?format=jsonl')).text}${(await exported(other.apiKey, kind)).text}`;
          expect(all).not.toContain(accountId);
          expect(all).not.toContain(charged.requestId);
          expect(all).not.toContain(taskId);
        }
        expect((await page(other.apiKey, 'usage', '?size=100')).total).toBe(0);
      });
    });

    it('when an account has more rows than an export reads at once, then the export streams them all, in the order of the pages', async () => {
      const { apiKey, accountId } = await fundedAccount(d.url, 0);
      // Balance-neutral rows (releases, usage) written straight into the ledger, from a source other
      // than FundsHold (no actor emitted them, so the ledger does not count them as its bills):
      // reconciliation still agrees.
      const events: EventEnvelope[] = [];
      for (let n = 0; n < 2500; n++) {
        const common = { accountId, pool: 'pool-3', holdId: `bulk-${accountId}-${n}`, requestId: `req-${n}`, model: 'sim-chat', profileId: 'bulk' };
        events.push(billingEvent(`${common.holdId}:release`, Date.now(), { ...common, kind: 'release', balanceDelta: 0, amount: 100 + n, reference: 'expired' }, 'test-seed'));
        if (n % 2 === 0) events.push(usageEvent(`${common.holdId}:usage`, Date.now(), { ...common, charged: 0, lines: [{ unit: 'TEXT_INPUT', quantity: n, unitPrice: 0, cost: 0 }, { unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 0, cost: 0 }] }, 'test-seed'));
      }
      await d.seed(events);
      for (const [kind, rows] of [['bills', 2500], ['usage', 2500]] as const) {
        const { items, total } = await allPages(apiKey, kind, 100);
        expect([items.length, total]).toEqual([rows, rows]);
        const exportedItems = await jsonl(apiKey, kind);
        expect(exportedItems.length).toBe(rows);
        expect(exportedItems).toEqual(items);
        expect((await exported(apiKey, kind)).text.split('\n').length).toBe(rows + 2);
      }
    });

    it('when calls are charged while a list is paged, then the pages read with the first page\'s through neither repeat nor skip a row, and equal the export with that through', async () => {
      const { apiKey } = await fundedAccount(d.url, 1_000_000_000);
      const charge = async () => expect((await chat(d.url, apiKey, { ...hello, max_tokens: 16 })).status).toBe(200);
      for (let n = 0; n < 3; n++) await charge();
      await passes(async () => expect((await page(apiKey, 'usage', '?size=1')).total).toBe(6));
      const first = (await get(apiKey, '/usage/page?size=4')).body as { items: Item[]; total: number; through: number };
      expect([first.total, first.through]).toEqual([6, 6]);
      await charge();
      await passes(async () => expect((await page(apiKey, 'usage', '?size=1')).total).toBe(8));
      // Without through the list has moved on by the new call's two rows: page 2 repeats them.
      expect((await page(apiKey, 'usage', '?page=2&size=4')).items.slice(0, 2).map((item) => item.id)).toEqual(first.items.slice(2).map((item) => item.id));
      const second = (await get(apiKey, `/usage/page?page=2&size=4&through=${first.through}`)).body as { items: Item[]; total: number; through: number };
      expect([second.items.length, second.total, second.through]).toEqual([2, 6, 6]);
      const listed = [...first.items, ...second.items];
      expect(new Set(listed.map((item) => item.id)).size).toBe(6);
      expect(await jsonl(apiKey, 'usage', `&through=${first.through}`)).toEqual(listed);
      expect(await jsonl(apiKey, 'usage')).toHaveLength(8);
    });

    it('when page, size, format, from, to or a filter are bad, or a parameter is unknown or repeated, then 400 invalid_request naming it', async () => {
      const { apiKey } = await fundedAccount(d.url, 0);
      const cases: Array<[string, string]> = [
        ['/bills/page?page=0', 'page'], ['/usage/page?page=-2', 'page'], ['/bills/page?page=1.5', 'page'], ['/bills/page?page=two', 'page'],
        ['/bills/page?page=', 'page'], ['/bills/page?page=1&page=2', 'page'], ['/usage/page?size=0', 'size'], ['/usage/page?size=101', 'size'],
        ['/bills/page?size=2.0', 'size'], ['/bills/page?format=csv', 'format'], ['/bills/export?format=xml', 'format'],
        ['/usage/export?format=json', 'format'], ['/bills/export?from=yesterday', 'from'], ['/bills/export?from=2025-03-01', 'from'],
        ['/usage/export?to=2025-03-01T10:00:00', 'to'], ['/usage/export?from=2025-03-02T00:00:00Z&to=2025-03-01T00:00:00Z', 'to'],
        ['/bills/export?page=1', 'page'], ['/bills/page?kind=refund', 'kind'], ['/usage/page?kind=charge', 'kind'], ['/usage/export?kind=charge', 'kind'],
        ['/bills/page?model=', 'model'], ['/usage/export?model=a&model=b', 'model'], ['/bills/page?images=yes', 'images'], ['/usage/export?images=TRUE', 'images'],
        ['/bills/page?through=-1', 'through'], ['/usage/page?through=1.5', 'through'], ['/usage/export?through=', 'through'], ['/bills/export?through=9007199254740992', 'through'],
      ];
      for (const [path, param] of cases) {
        const answer = await get(apiKey, path);
        expect([path, answer.status, answer.body.error?.code, answer.body.error?.param]).toEqual([path, 400, 'invalid_request', param]);
        expect(answer.body.error.request_id).toBeTruthy();
      }
    });

    it('when an export form is refused (no, empty, unknown, doubled or two credentials; another body type; an unknown, repeated or bad field; a query parameter; too large; not UTF-8), then it says why and streams nothing', async () => {
      const { apiKey } = await fundedAccount(d.url, 0);
      const token = `access_token=${encodeURIComponent(apiKey)}`;
      const cases: Array<[string, Kind, string, Record<string, string>, number, string, string?]> = [
        ['no credential', 'bills', 'format=csv', {}, 401, 'unauthorized'],
        ['an empty access_token', 'bills', 'access_token=', {}, 401, 'unauthorized'],
        ['an unknown key', 'usage', 'access_token=sk-payg-unknown', {}, 401, 'unauthorized'],
        ['access_token twice', 'usage', `${token}&${token}`, {}, 400, 'ambiguous_credential', 'access_token'],
        ['a header and a field', 'bills', token, { authorization: `Bearer ${apiKey}` }, 400, 'ambiguous_credential', 'access_token'],
        ['a JSON body', 'bills', JSON.stringify({ access_token: apiKey }), { 'content-type': 'application/json' }, 415, 'unsupported_media_type'],
        ['no body type', 'bills', token, { 'content-type': '' }, 415, 'unsupported_media_type'],
        ['another charset', 'bills', token, { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' }, 415, 'unsupported_media_type'],
        ['an unknown field', 'bills', `${token}&pool=pool-1`, {}, 400, 'invalid_request', 'pool'],
        ['a repeated field', 'usage', `${token}&format=csv&format=jsonl`, {}, 400, 'invalid_request', 'format'],
        ['a bad filter', 'usage', `${token}&kind=charge`, {}, 400, 'invalid_request', 'kind'],
        ['a bad time', 'bills', `${token}&from=yesterday`, {}, 400, 'invalid_request', 'from'],
        ['too large', 'bills', `${token}&model=${'m'.repeat(5000)}`, {}, 413, 'payload_too_large'],
      ];
      for (const [what, kind, body, headers, status, code, param] of cases) {
        const answer = await postExport(kind, body, headers);
        const error = (JSON.parse(answer.text) as { error: { code: string; param?: string } }).error;
        expect([what, answer.status, error.code, error.param]).toEqual([what, status, code, param]);
      }
      const unknownField = await postExport('bills', `${token}&pool=pool-1`);
      expect(unknownField.text).toContain('unknown field pool');
      // The query must be empty: the form's fields are the parameters.
      const query = await fetch(`${d.url}${CONSOLE}/bills/export?format=csv`, { method: 'POST', headers: FORM, body: token });
      expect([query.status, ((await query.json()) as { error: { param: string } }).error.param]).toEqual([400, 'format']);
      const latin1 = await fetch(`${d.url}${CONSOLE}/bills/export`, { method: 'POST', headers: FORM, body: Buffer.concat([Buffer.from(`${token}&model=`), Buffer.from([0xe9])]) });
      expect([latin1.status, ((await latin1.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_utf8']);
    });

    it('when the console is called without a credential, with an unknown key, or with an OAuth token while OAuth is not configured, then 401', async () => {
      for (const path of ['/bills/page', '/usage/page', '/bills/export', '/usage/export']) {
        expect((await json(`${d.url}${CONSOLE}${path}`)).status).toBe(401);
        expect((await get('sk-payg-unknown', path)).body.error.code).toBe('unauthorized');
        // Console routes take member tokens too (issue 5): here no issuer is configured.
        const token = await get('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', path);
        expect([token.status, token.body.error.code]).toEqual([401, 'unauthorized']);
        expect((await get('a.b.c', path)).status).toBe(401);
      }
    });

    it('when chats and images succeed, fail, are rejected or refused for funds while accounts are topped up by credits and paid orders, then reconciliation finds no difference', async () => {
      // A chat here holds about 32,000 (body bytes × input price + 64 × output price): the second
      // account can afford some as its top-ups land, the third none.
      const accounts = await Promise.all([FUNDS, 20_000, 1000].map((amount) => fundedAccount(d.url, amount)));
      const directives = [undefined, 'fail-before-output', 'reject', 'tokens=3', undefined, 'reject'];
      const statuses = await Promise.all(accounts.flatMap(({ apiKey, accountId }, a) => [
        ...directives.map(async (directive) => (await chat(d.url, apiKey, { ...hello, max_tokens: 64 }, { headers: directive ? { 'x-sim-directive': directive } : {} })).status),
        ...(a < 2 ? [1, 2] : []).map(async (n) => (await admin(d.url, `/admin/v1/accounts/${accountId}/credits`, { amount: 20_000, reference: `burst-${n}` })).status),
        ...(a === 0 ? ['reject', undefined] : []).map(async (directive) => (await image(d.url, apiKey, picture, { headers: directive ? { 'x-sim-directive': directive } : {} })).status),
      ]));
      // Top-ups through orders: a paid order is credited once, whatever the callbacks do.
      for (const { apiKey } of accounts.slice(0, 2)) {
        const order = await createOrder(d.url, apiKey, { amount: 30_000 });
        expect(order.status).toBe(201);
        const paid = paymentEvent(order.body.orderId, 30_000, 'payment.succeeded');
        const callbacks = await Promise.all([paid, paid, paymentEvent(order.body.orderId, 30_000, 'payment.failed')].map((event) => checkoutCallback(d.url, event)));
        // The paid event delivered twice at once: both 200, one of them the replay (nothing moved twice).
        expect(callbacks.map((c) => c.status)).toEqual([200, 200, 200]);
        expect([callbacks[0].body.replayed, callbacks[1].body.replayed].sort()).toEqual([false, true]);
        await passes(async () => expect((await getOrder(d.url, apiKey, order.body.orderId)).body.status).toBe('fulfilled'));
      }
      for (const status of [200, 400, 402, 502]) expect(statuses).toContain(status);
      expect(statuses.slice(-directives.length)).toEqual(directives.map(() => 402));
      const result = await passes(async () => {
        const answer = await json(`${d.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect(answer.status).toBe(200);
        expect(answer.body.differences).toEqual([]);
        return answer.body;
      });
      expect(result.accounts).toBeGreaterThanOrEqual(accounts.length);
      expect((await json(`${d.url}/admin/v1/reconciliation`)).status).toBe(401);
    });

    itConformsToOpenApi(openApi);
  });
}
