// The web console in a real browser (Debian's chromium driven by playwright-core) against the
// real gateway, on both actor hosts: sign-in, the balance the API states, a chat's charge
// appearing without a reload, exports, a revoked key refused, a wrong key refused with a clear
// message, no console error on any page, keyboard use and an axe-core accessibility check. The
// embedded run writes the screenshots the README shows (docs/console/*.png).

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { usd } from '../../web/console/format';
import { billingEvent, type EventEnvelope } from '../../lib/events';
import { admin, balance, chat, fundedAccount, hello, image, json, picture } from '../support/api';
import { launchChromium, seriousViolations, watchedPage, type WatchedPage } from '../support/browser';
import { passes } from '../support/eventually';
import { checkoutCallback, paymentEvent } from '../support/orders';
import type { OAuthIssuer } from '../support/oauth';
import { ADMIN_TOKEN } from '../support/processes';

export interface ConsoleUiDeploymentUnderTest {
  url: string;
  /** The OAuth issuer the gateway trusts for member tokens. */
  issuer: OAuthIssuer;
  /** Appends events straight to the deployment's ledger store, as its subscriber would (to make a difference for reconciliation to find). */
  seed(events: EventEnvelope[]): Promise<void>;
  close(): Promise<void>;
}

const CONSOLE = '/api/distribution/api-credit';
const FUNDS = 5_000_000_000;
/** "Within a few seconds": the page polls every 2 s. */
const LIVE_MS = 5_000;
/** What Chromium logs for an answer refused with 401: expected only where a test makes one. */
const REFUSED_401 = /Failed to load resource: the server responded with a status of 401/;

export function consoleUiSuite(hostName: string, start: () => Promise<ConsoleUiDeploymentUnderTest>, options: { screenshots?: string } = {}): void {
  describe(`the web console in Chromium on the ${hostName} host`, () => {
    let d: ConsoleUiDeploymentUnderTest;
    let browser: Browser;
    let customer: { accountId: string; apiKey: string };
    const opened: WatchedPage[] = [];
    beforeAll(async () => {
      d = await start();
      browser = await launchChromium();
      customer = await fundedAccount(d.url, FUNDS);
      // Two calls before anyone looks, so the charts and tables have something to show.
      for (const max_tokens of [16, 24]) expect((await chat(d.url, customer.apiKey, { ...hello, max_tokens })).status).toBe(200);
    });
    afterAll(async () => {
      await browser?.close();
      await d?.close();
    });

    const open = async () => {
      const watched = await watchedPage(browser);
      opened.push(watched);
      return watched;
    };
    const shot = async (page: Page, name: string) => {
      if (!options.screenshots) return;
      mkdirSync(options.screenshots, { recursive: true });
      await page.screenshot({ path: join(options.screenshots, `${name}.png`), fullPage: true });
    };
    const signIn = async (page: Page, role: 'customer' | 'operator', token: string) => {
      const answer = await page.goto(`${d.url}/console`);
      expect(answer?.status()).toBe(200);
      await page.getByLabel('Sign in as').selectOption(role);
      await page.getByRole('textbox', { name: role === 'customer' ? 'API key' : 'Admin token', exact: true }).fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
    };
    const view = async (page: Page, name: string) => {
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name }).click();
      await page.getByRole('heading', { level: 2 }).first().waitFor();
    };
    const noSeriousViolation = async (page: Page) => expect(await seriousViolations(page)).toEqual([]);
    /** The page as it is now passes axe-core's serious rules; then its screenshot. */
    const checkAndShoot = async (page: Page, name: string) => {
      await noSeriousViolation(page);
      await shot(page, name);
    };
    /** A customer signed in with the funded account's key, on one view. */
    const customerOn = async (name: string) => {
      const watched = await open();
      await signIn(watched.page, 'customer', customer.apiKey);
      await view(watched.page, name);
      return watched;
    };
    const apiBalance = () => balance(d.url, customer.apiKey);
    const exported = async (kind: 'bills' | 'usage', format: 'csv' | 'jsonl', filters = '') =>
      (await fetch(`${d.url}${CONSOLE}/${kind}/export?format=${format}${filters}`, { headers: { authorization: `Bearer ${customer.apiKey}` } })).text();
    /** The console routes a page asks for from now on (path and query). */
    const requested = (page: Page) => {
      const paths: string[] = [];
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.pathname.startsWith(CONSOLE)) paths.push(`${url.pathname}${url.search}`);
      });
      return paths;
    };
    /** A funded account with 45 bills (three pages): its funding, then 44 credits referenced `<prefix>-1` to `<prefix>-44`. */
    const withBills = async (prefix: string) => {
      const own = await fundedAccount(d.url, 1_000_000_000);
      for (let i = 1; i <= 44; i++) expect((await admin(d.url, `/admin/v1/accounts/${own.accountId}/credits`, { amount: 1_000_000, reference: `${prefix}-${i}` })).status).toBe(200);
      return own;
    };
    const shownNano = async (page: Page, id: string) => Number(await page.locator(`#${id}`).getAttribute('data-nano'));

    it('when /console is loaded, then it needs no credential, has a strict CSP and no inline script, and its hashed assets are immutable', async () => {
      const page = await json(`${d.url}/console`);
      expect(page.status).toBe(200);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/unsafe|https?:/);
      expect(page.headers.get('cache-control')).toBe('no-cache');
      const html = String(page.body);
      expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
      expect(html).not.toMatch(/style=|<style/);
      const assets = [...html.matchAll(/\/console\/assets\/[A-Za-z0-9_-]+-[A-Z0-9]{8}\.(?:js|css|svg)/g)].map((m) => m[0]);
      expect(assets).toHaveLength(3);
      // What a browser transfers: the page, then each asset gzip-compressed (Content-Length is the compressed body).
      let transferred = Number(page.headers.get('content-length'));
      for (const asset of assets) {
        const res = await fetch(`${d.url}${asset}`, { headers: { 'accept-encoding': 'gzip' } });
        expect(res.status).toBe(200);
        expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
        expect(res.headers.get('content-encoding')).toBe(asset.endsWith('.svg') ? null : 'gzip');
        transferred += Number(res.headers.get('content-length'));
        await res.arrayBuffer();
      }
      // The page stays small (README, "Console"): under 50 kB with gzip.
      expect(transferred).toBeLessThan(50_000);
    });

    it('when a wrong key is typed, then sign-in is refused with a clear message, and the key is in no URL', async () => {
      const { page, problems } = await open();
      await signIn(page, 'customer', 'sk-live-this-is-not-a-key');
      await expect(page.locator('#signin-error').textContent()).resolves.toContain('did not accept this credential');
      expect(page.url()).toBe(`${d.url}/console`);
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      await checkAndShoot(page, 'sign-in-refused');
      expect(problems.filter((p) => !REFUSED_401.test(p))).toEqual([]);
    });

    it('when the gateway cannot be reached at sign-in, then the page says so in plain words, and signs in once it can', async () => {
      const { page, problems } = await open();
      await page.route('**/api/distribution/api-credit/balance', (route) => route.abort('internetdisconnected'));
      await signIn(page, 'customer', customer.apiKey);
      await expect(page.locator('#signin-error').textContent()).resolves.toBe('The gateway could not be reached (no answer came back): check the connection and try again.');
      await page.unroute('**/api/distribution/api-credit/balance');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('#balance[data-nano]:not([data-nano=""])').waitFor();
      expect(problems.filter((p) => !/ERR_INTERNET_DISCONNECTED/.test(p))).toEqual([]);
    });

    it('when a member signs in with an OAuth member token, then the page shows the balance the API states for that token, the token in no URL', async () => {
      const token = await d.issuer.mint({ sub: 'member-console', account: customer.accountId, scope: 'chat' });
      const { page, problems } = await open();
      await signIn(page, 'customer', token);
      await page.locator('#balance[data-nano]:not([data-nano=""])').waitFor();
      await passes(async () => {
        const stated = (await json(`${d.url}${CONSOLE}/balance`, { headers: { authorization: `Bearer ${token}` } })).body;
        expect(await shownNano(page, 'balance')).toBe(stated.balance);
        expect(await shownNano(page, 'available')).toBe(stated.available);
      }, LIVE_MS);
      expect(page.url()).not.toContain(token);
      await noSeriousViolation(page);
      expect(problems).toEqual([]);
    });

    it('when a customer signs in with the keyboard, then the balance, held and available are what the API states, exactly', async () => {
      const { page, problems } = await open();
      await page.goto(`${d.url}/console`);
      // Keyboard only: the role select, the key field, Enter.
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('role');
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('token');
      await page.keyboard.type(customer.apiKey);
      await page.keyboard.press('Enter');
      await page.locator('#balance[data-nano]:not([data-nano=""])').waitFor();
      // A funds lease may close between two reads: the page's next poll then shows the same as the API.
      await passes(async () => {
        const stated = await apiBalance();
        expect(await shownNano(page, 'balance')).toBe(stated.balance);
        expect(await shownNano(page, 'held')).toBe(stated.held);
        expect(await shownNano(page, 'leased')).toBe(stated.leased ?? 0);
        expect(await shownNano(page, 'available')).toBe(stated.available);
        expect(await page.locator('#balance').textContent()).toBe(usd(stated.balance));
      }, LIVE_MS);
      expect(page.url()).not.toContain(customer.apiKey);
      // Tab reaches the skip link, then the views; Enter on one opens it.
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Bills');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Bills', level: 2 }).waitFor();
      await view(page, 'Overview');
      await page.locator('.chart canvas').first().waitFor();
      // The table beside the chart: each model's 30 days, as the ledger's sums state them.
      const spending = (await json(`${d.url}/api/distribution/api-credit/spending`, { headers: { authorization: `Bearer ${customer.apiKey}` } })).body as { items: { model: string; charged: number }[] };
      const byModel = new Map<string, number>();
      for (const item of spending.items) byModel.set(item.model, (byModel.get(item.model) ?? 0) + item.charged);
      expect(byModel.size).toBeGreaterThan(0);
      for (const [model, charged] of byModel) {
        await passes(async () => expect(await page.getByRole('table', { name: 'Charged by model' }).getByRole('row').filter({ hasText: model }).textContent()).toBe(`${model}${usd(charged)}`), LIVE_MS);
      }
      await checkAndShoot(page, 'customer-overview');
      expect(problems).toEqual([]);
    });

    it('when a chat is made with the key while the bills are open, then its charge and the new balance appear within seconds, without a reload', async () => {
      const { page, problems } = await customerOn('Bills');
      await page.locator('#bills-total').waitFor();
      await page.evaluate(() => { (window as unknown as { notReloaded: boolean }).notReloaded = true; });
      const answer = await chat(d.url, customer.apiKey, { ...hello, max_tokens: 32 });
      expect(answer.status).toBe(200);
      const charged = Number(answer.headers.get('x-payg-charged'));
      expect(charged).toBeGreaterThan(0);
      const requestId = answer.headers.get('x-request-id')!;
      const started = Date.now();
      const row = page.getByRole('row').filter({ hasText: requestId });
      await row.waitFor({ timeout: LIVE_MS });
      expect(Date.now() - started).toBeLessThan(LIVE_MS);
      await expect(row.locator('[data-nano]').getAttribute('data-nano')).resolves.toBe(String(-charged));
      expect(await row.textContent()).toContain('charge');
      expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
      await view(page, 'Overview');
      await passes(async () => expect(await shownNano(page, 'balance')).toBe((await apiBalance()).balance), LIVE_MS);
      await view(page, 'Bills');
      await checkAndShoot(page, 'customer-bills');
      expect(problems).toEqual([]);
    });

    it('when the usage is exported from the page, then the CSV and JSON Lines files are the API’s exports, byte for byte', async () => {
      // The ledger has the earlier calls' usage (on Dapr it trails the answers a little).
      await passes(async () => expect((await exported('usage', 'jsonl')).trim().split('\n').length).toBeGreaterThanOrEqual(6), LIVE_MS);
      const { page, problems } = await customerOn('Usage');
      await page.locator('#usage-total').waitFor();
      // How the page asks for an export: a form posted (a navigation the browser saves to disk
      // as it arrives), never a fetch holding the file in the page; the key in the form's body,
      // not in a header the page adds, nor in the address.
      const exportRequests: Array<{ method: string; navigation: boolean; type: string; search: string; authorization?: string; body: URLSearchParams }> = [];
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (!url.pathname.endsWith('/export')) return;
        exportRequests.push({ method: request.method(), navigation: request.isNavigationRequest(), type: request.resourceType(), search: url.search, authorization: request.headers().authorization, body: new URLSearchParams(request.postData() ?? '') });
      });
      for (const [button, format] of [['Export CSV', 'csv'], ['Export JSON Lines', 'jsonl']] as const) {
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
        expect(download.suggestedFilename()).toBe(`usage.${format}`);
        const saved = readFileSync(await download.path());
        expect(saved.toString('utf8')).toBe(await exported('usage', format));
        expect(saved.toString('utf8').trim().split('\n').length).toBeGreaterThanOrEqual(format === 'csv' ? 7 : 6);
        await page.getByRole('status').filter({ hasText: `Exporting usage.${format}: your browser saves the file as it arrives` }).waitFor();
      }
      expect(exportRequests.map(({ body, ...request }) => ({ ...request, fields: [...body.keys()].sort(), token: body.get('access_token') === customer.apiKey }))).toEqual(['csv', 'jsonl'].map(() => ({
        method: 'POST', navigation: true, type: 'document', search: '', authorization: undefined, fields: ['access_token', 'format'], token: true,
      })));
      expect(exportRequests.map(({ body }) => body.get('format'))).toEqual(['csv', 'jsonl']);
      expect(page.url()).toMatch(/\/console#usage$/);
      // The model filter narrows the table, through the page route's own filter (no export is
      // read for it); a model with no usage shows none; the export buttons then take the filter.
      const asked = requested(page);
      await page.getByLabel('Model').fill('no-such-model');
      await page.getByRole('button', { name: 'Filter' }).click();
      await passes(async () => expect(await page.locator('#usage-total').getAttribute('data-total')).toBe('0'), LIVE_MS);
      // Pasted with the spaces a copy from a table brings: the model all the same.
      await page.getByLabel('Model').fill(' sim-chat\t');
      await page.getByRole('button', { name: 'Filter' }).click();
      await passes(async () => expect(Number(await page.locator('#usage-total').getAttribute('data-total'))).toBeGreaterThanOrEqual(6), LIVE_MS);
      expect(asked.filter((path) => path.includes('/export'))).toEqual([]);
      expect(asked).toContain(`${CONSOLE}/usage/page?page=1&size=20&model=sim-chat`);
      const [filteredDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON Lines' }).click()]);
      const filteredExport = readFileSync(await filteredDownload.path()).toString('utf8');
      expect(filteredExport).toBe(await exported('usage', 'jsonl', '&model=sim-chat'));
      expect(filteredExport.trim().split('\n').length).toBe(Number(await page.locator('#usage-total').getAttribute('data-total')));
      await checkAndShoot(page, 'customer-usage');
      expect(problems).toEqual([]);
    });

    it('when the next page of bills is slow to come, then the page number never stands beside the rows of the page before', async () => {
      const own = await withBills('slow');
      const { page, problems } = await open();
      await signIn(page, 'customer', own.apiKey);
      await view(page, 'Bills');
      await page.getByText('Page 1 of 3').waitFor();
      const newest = page.getByRole('row').filter({ hasText: 'slow-44' });
      await newest.waitFor();
      await page.route(/\/bills\/page\?page=2&/, async (route) => {
        await new Promise((r) => setTimeout(r, 1_500));
        await route.continue();
      });
      // From the keyboard: the focus stays on the pager while the page loads.
      await page.getByRole('button', { name: 'Next' }).focus();
      await page.keyboard.press('Enter');
      // While page 2 is on its way: page 1's rows are gone (they stood beside "Page 2 of 3"), and the view says it is loading.
      await new Promise((r) => setTimeout(r, 500));
      expect([await newest.count(), await page.getByText('Page 2 of 3').count()]).toEqual([0, 1]);
      expect(await page.getByRole('status').filter({ hasText: 'Loading…' }).count()).toBe(1);
      expect(await page.evaluate(() => document.activeElement?.closest('nav')?.getAttribute('aria-label'))).toBe('Bills pages');
      await page.getByRole('row').filter({ hasText: 'slow-24' }).waitFor();
      expect(await newest.count()).toBe(0);
      expect(problems).toEqual([]);
    });

    it('when the bills are filtered and paged, then a reload, Back and Forward keep the page and the filter, and the form shows it', async () => {
      const own = await withBills('addr');
      const today = new Date().toISOString().slice(0, 10);
      const { page, problems } = await open();
      await signIn(page, 'customer', own.apiKey);
      await view(page, 'Bills');
      await page.getByText('45 bill items, newest first.').waitFor();
      const from = page.getByLabel('From (UTC day)');
      await from.fill(today);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('45 bill items match, newest first.').waitFor();
      await page.getByRole('button', { name: 'Next' }).click();
      await page.getByRole('row').filter({ hasText: 'addr-24' }).waitFor();
      expect(new URL(page.url()).hash).toBe(`#bills/page=2&through=45&from=${today}`);
      await page.reload();
      await page.getByRole('row').filter({ hasText: 'addr-24' }).waitFor();
      await page.getByText('Page 2 of 3').waitFor();
      expect([await page.getByText('45 bill items match, newest first.').count(), await from.inputValue()]).toEqual([1, today]);
      await page.goBack();
      await page.getByRole('row').filter({ hasText: 'addr-44' }).waitFor();
      await page.getByText('Page 1 of 3').waitFor();
      await page.goBack();
      await page.getByText('45 bill items, newest first.').waitFor();
      expect(await from.inputValue()).toBe('');
      await page.goForward();
      await page.getByText('45 bill items match, newest first.').waitFor();
      expect(await from.inputValue()).toBe(today);
      expect(problems).toEqual([]);
    });

    it('when bills arrive while the customer pages, then the next page goes on from the last row shown, none repeated, and page 1 shows the new ones', async () => {
      const own = await withBills('paged');
      const { page, problems } = await open();
      await signIn(page, 'customer', own.apiKey);
      await view(page, 'Bills');
      await page.getByText('Page 1 of 3').waitFor();
      await page.getByRole('row').filter({ hasText: 'paged-25' }).waitFor();
      // The live poll held, so that page 1 stays as it was read while the new bills arrive.
      await page.route(/\/bills\/page\?page=1&size=1$/, () => undefined);
      for (let i = 1; i <= 5; i++) expect((await admin(d.url, `/admin/v1/accounts/${own.accountId}/credits`, { amount: 1_000_000, reference: `arrived-${i}` })).status).toBe(200);
      await page.getByRole('button', { name: 'Next' }).click();
      // Page 2 of the list page 1 read: paged-24 down; paged-25 (page 1's last row) not again.
      await page.getByRole('row').filter({ hasText: 'paged-24' }).waitFor();
      expect(await page.getByRole('row').filter({ hasText: /paged-(2[5-9]|3[0-9]|4[0-4])\b/ }).count()).toBe(0);
      expect(new URL(page.url()).hash).toBe('#bills/page=2&through=45');
      await page.getByRole('button', { name: 'Previous' }).click();
      await page.getByRole('row').filter({ hasText: 'arrived-5' }).waitFor();
      expect(new URL(page.url()).hash).toBe('#bills');
      expect(problems).toEqual([]);
    });

    it('when a year of five digits is typed in a date filter, then the form says so and the page goes on working', async () => {
      const { page, problems } = await customerOn('Bills');
      await page.locator('#bills-total').waitFor();
      const total = await page.locator('#bills-total').getAttribute('data-total');
      // Typed in the date field, as a person would: month, day, then a year with one digit too many.
      const to = page.getByLabel('To (UTC day, included)');
      await to.focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.type('123120266');
      expect(await to.inputValue()).toBe('20266-12-31');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByRole('alert').filter({ hasText: 'Not filtered. To: "20266-12-31" is not a day from the year 0001 to 9999.' }).waitFor();
      expect(await page.locator('#bills-total').textContent()).toBe(`${total} bill items, newest first.`);
      // Corrected, the filter applies: every bill so far is before the end of 2100.
      await to.fill('2100-12-31');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText(`${total} bill items match, newest first.`).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(problems).toEqual([]);
    });

    it('when the customer opens image tasks, orders and limits, then each explains itself, a top-up starts, and the limits set are shown', async () => {
      const key = (await json(`${d.url}/admin/v1/accounts/${customer.accountId}/api-keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.items[0];
      const patched = await json(`${d.url}/admin/v1/api-keys/${key.apiKeyId}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ limits: { requests_per_minute: 600, spend_per_day: 2_000_000_000 } }) });
      expect(patched.status).toBe(200);
      const made = await image(d.url, customer.apiKey, picture);
      expect(made.status).toBe(200);
      const taskId = made.body.taskId as string;
      const { page, problems } = await open();
      const asked = requested(page);
      await signIn(page, 'customer', customer.apiKey);
      await view(page, 'Image tasks');
      // The view renders after its reads: wait for the explanation, then count it.
      const unresolved = page.getByText('We do not know yet whether the provider made the image');
      await unresolved.waitFor({ timeout: LIVE_MS });
      expect(await unresolved.count()).toBe(1);
      const task = page.getByRole('row').filter({ hasText: taskId });
      await task.waitFor({ timeout: LIVE_MS });
      expect(await task.textContent()).toContain(usd(Number(made.headers.get('x-payg-charged'))));
      let checks = 0;
      page.on('request', (r) => { if (r.url().includes(`/images/tasks/${taskId}`)) checks++; });
      await page.getByRole('button', { name: `Check the state of task ${taskId}` }).click();
      await expect(page.locator(`[data-task-state="${taskId}"]`).textContent()).resolves.toMatch(/^succeeded: The image was made and charged/);
      // A state is as it was when asked ("asking again moves it on"): the row asks again.
      await page.getByRole('button', { name: `Check again the state of task ${taskId}` }).click();
      await passes(async () => expect(checks).toBe(2), LIVE_MS);
      await expect(page.locator(`[data-task-state="${taskId}"]`).textContent()).resolves.toMatch(/^succeeded: /);
      await checkAndShoot(page, 'customer-images');

      await view(page, 'Orders');
      await page.getByLabel('Amount (USD)').fill('12.50');
      await page.getByRole('button', { name: 'Start a top-up' }).click();
      const status = await page.getByRole('status').textContent();
      const orderId = /Order (ord_[0-9a-f]{32})/.exec(status ?? '')?.[1];
      expect(orderId).toBeDefined();
      const order = await json(`${d.url}/api/consumer/orders/${orderId}`, { headers: { authorization: `Bearer ${customer.apiKey}` } });
      expect([order.status, order.body.amount, order.body.status]).toEqual([200, 12_500_000_000, 'created']);
      // The account's credits: the operator's (its reference), and the order once it is paid (its id).
      const credits = page.getByRole('region', { name: 'Credits' });
      await credits.getByRole('row').filter({ hasText: 'initial' }).waitFor({ timeout: LIVE_MS });
      expect((await checkoutCallback(d.url, paymentEvent(orderId!, 12_500_000_000, 'payment.succeeded'))).status).toBe(200);
      await passes(async () => expect(await credits.getByRole('row').filter({ hasText: orderId! }).textContent()).toContain(usd(12_500_000_000)), LIVE_MS);
      await checkAndShoot(page, 'customer-orders');
      // The session keeps its orders when the view changes and on a reload.
      await view(page, 'Bills');
      await view(page, 'Orders');
      await page.getByRole('row').filter({ hasText: orderId! }).first().waitFor();
      await page.reload();
      await page.getByRole('row').filter({ hasText: orderId! }).first().waitFor();
      // Image tasks and credits are read a page at a time through the page route's filters, never from an export.
      expect(asked.filter((path) => path.includes('/export'))).toEqual([]);
      expect(asked).toContain(`${CONSOLE}/bills/page?page=1&size=20&images=true`);
      expect(asked).toContain(`${CONSOLE}/bills/page?page=1&size=20&kind=credit`);

      await view(page, 'Limits');
      await passes(async () => expect(await page.locator('[data-limit="key-spend_per_day"]').textContent()).toBe(usd(2_000_000_000)), LIVE_MS);
      expect(await page.locator('[data-limit="key-requests_per_minute"]').textContent()).toBe('600');
      // The minute's count of requests, as the API states it (the customer's calls are under the key's
      // rate): a chat now is counted, and the view, which reads the counts every 2 s, shows it.
      expect((await chat(d.url, customer.apiKey, hello)).status).toBe(200);
      const rateUsage = async () => (await json(`${d.url}/api/distribution/api-credit/limits`, { headers: { authorization: `Bearer ${customer.apiKey}` } })).body.rate_usage;
      await passes(async () => {
        let usage = await rateUsage();
        // A new minute may have begun since the chat (its counts start at 0): one more chat is counted in it.
        if (usage.key.requests === 0) {
          expect((await chat(d.url, customer.apiKey, hello)).status).toBe(200);
          usage = await rateUsage();
        }
        expect(usage.key.requests).toBeGreaterThan(0);
        expect(await page.locator('[data-key-used="requests_per_minute"]').textContent()).toBe(String(usage.key.requests));
        expect(await page.locator('[data-used="requests_per_minute"]').textContent()).toBe(String(usage.account.requests));
      }, LIVE_MS);
      await passes(async () => {
        const bills = await exported('bills', 'jsonl');
        const spentToday = bills.trim().split('\n').map((line) => JSON.parse(line)).filter((b) => b.kind === 'charge').reduce((sum, b) => sum + b.amount, 0);
        expect(spentToday).toBeGreaterThan(0);
        expect(await page.locator('[data-used="spend_per_day"]').textContent()).toBe(usd(spentToday + (await apiBalance()).held));
        // The customer's one key made every charge: it shows the same.
        expect(await page.locator('[data-key-used="spend_per_day"]').textContent()).toBe(usd(spentToday + (await apiBalance()).held));
      }, LIVE_MS);
      await checkAndShoot(page, 'customer-limits');
      expect(problems).toEqual([]);
    });

    it('when the spending, credits, image tasks or audit log are slow to come, then the views say they are loading, never that there are none', async () => {
      const { page, problems } = await open();
      await page.route(/\/bills\/page\?page=1&size=20&(kind=credit|images=true)|\/spending\?/, async (route) => {
        await new Promise((r) => setTimeout(r, 1_500));
        await route.continue();
      });
      await signIn(page, 'customer', customer.apiKey);
      for (const [name, none, row] of [['Overview', 'No spending in the last 30 days.', 'sim-chat'], ['Orders', 'Nothing has been credited yet.', 'initial'], ['Image tasks', 'No image task has been settled yet.', 'charge']] as const) {
        await view(page, name);
        await new Promise((r) => setTimeout(r, 500));
        expect([await page.getByText(none).count(), await page.getByText('Loading…').count()]).toEqual([0, 1]);
        await page.getByRole('row').filter({ hasText: row }).first().waitFor();
        expect(await page.getByText(none).count()).toBe(0);
      }
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.route(/\/admin\/v1\/audit\?/, async (route) => {
        await new Promise((r) => setTimeout(r, 1_500));
        await route.continue();
      });
      await signIn(page, 'operator', ADMIN_TOKEN);
      await view(page, 'Audit log');
      await new Promise((r) => setTimeout(r, 500));
      expect([await page.getByText('No action recorded.').count(), await page.getByText('Loading…').count()]).toEqual([0, 1]);
      await page.getByRole('region', { name: 'Audit log' }).getByRole('row').nth(1).waitFor();
      expect(problems).toEqual([]);
    });

    it('when a top-up’s answer is lost (a 502 after the gateway made the order) and the customer tries again, then the same order is shown, not a second one', async () => {
      const { page, problems } = await customerOn('Orders');
      const made: string[] = [];
      let lose = true;
      await page.route('**/api/consumer/orders', async (route) => {
        const answer = await route.fetch();
        made.push((await answer.json()).orderId);
        if (lose) {
          lose = false;
          await route.fulfill({ status: 502, contentType: 'text/plain', body: 'Bad Gateway' });
        } else {
          await route.fulfill({ response: answer });
        }
      });
      await page.getByLabel('Amount (USD)').fill('7.25');
      await page.getByRole('button', { name: 'Start a top-up' }).click();
      await page.getByRole('alert').filter({ hasText: '502' }).waitFor();
      await page.getByRole('button', { name: 'Start a top-up' }).click();
      const status = await page.getByRole('status').filter({ hasText: /^Order / }).textContent();
      expect(made).toHaveLength(2);
      expect(made[1]).toBe(made[0]);
      expect(status).toContain(`Order ${made[0]} for ${usd(7_250_000_000)} is created`);
      // Once an order is made, the next top-up is a new order, even of the same amount.
      await page.getByLabel('Amount (USD)').fill('7.25');
      await page.getByRole('button', { name: 'Start a top-up' }).click();
      await page.getByRole('status').filter({ hasText: /^Order / }).filter({ hasNotText: made[0]! }).waitFor();
      expect(new Set(made).size).toBe(2);
      expect(problems.filter((p) => !/status of 502/.test(p))).toEqual([]);
    });

    it('when the operator signs in, then accounts are searched and opened, a key is created and shown once, credited with a reference, revoked and refused', async () => {
      const name = `console-ui-${Date.now()}`;
      const account = await admin(d.url, '/admin/v1/accounts', { name });
      const accountId = account.body.accountId as string;
      const { page, problems } = await open();
      await signIn(page, 'operator', ADMIN_TOKEN);
      await page.getByLabel('Name contains').fill(name);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('button', { name }).click();
      await page.getByRole('heading', { name: `Account ${name}` }).waitFor();
      // The open account is in the address: Back returns to the list, Forward to the account.
      expect(new URL(page.url()).hash).toBe(`#accounts/${accountId}`);
      await page.goBack();
      await page.getByRole('heading', { name: 'Accounts', level: 2 }).waitFor();
      await page.goForward();
      await page.getByRole('heading', { name: `Account ${name}` }).waitFor();

      await page.getByRole('button', { name: 'Create a key' }).click();
      const apiKey = (await page.locator('#new-api-key').textContent())!;
      expect((await balance(d.url, apiKey)).balance).toBe(0);
      // Copied whole: a double-click on the key selects all of it (it once stopped at the first -), and the Copy button writes it.
      await page.locator('#new-api-key').dblclick();
      expect(await page.evaluate(() => getSelection()?.toString())).toBe(apiKey);
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.url });
      await page.getByRole('button', { name: 'Copy the key' }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(apiKey);

      await page.getByLabel('Amount (USD)').fill('3.25');
      await page.getByLabel('Reference (applied once)').fill('console-credit-1');
      await page.getByRole('button', { name: 'Credit', exact: true }).click();
      await page.getByText('Credited $3.25 (reference console-credit-1)').waitFor();
      expect((await balance(d.url, apiKey)).balance).toBe(3_250_000_000);
      await passes(async () => expect(await page.locator('[data-pool-balance="pool-3"]').getAttribute('data-nano')).toBe('3250000000'), LIVE_MS);
      await page.getByRole('button', { name: 'I have copied it' }).click();
      await checkAndShoot(page, 'operator-account');

      const keyId = (await json(`${d.url}/admin/v1/accounts/${accountId}/api-keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.items[0].apiKeyId as string;
      // Limits: a typo refuses the whole save (it once went out as null, which removes a limit),
      // and what was typed for the account is not carried to a key.
      const limitsOf = async () => (await json(`${d.url}/admin/v1/accounts/${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.limits;
      await page.getByLabel('requests per minute').fill('600');
      await page.getByLabel('spend per day').fill('2.5');
      await page.getByRole('button', { name: 'Save the limits' }).click();
      await page.getByText('Limits of the account saved').waitFor();
      expect(await limitsOf()).toEqual({ requests_per_minute: 600, spend_per_day: 2_500_000_000 });
      expect(await page.getByLabel('spend per day').inputValue()).toBe('');
      await page.getByLabel('requests per minute').fill('abc');
      await page.getByLabel('spend per day').fill('0');
      await page.getByRole('button', { name: 'Save the limits' }).click();
      await page.getByRole('alert').filter({ hasText: 'requests per minute: "abc" is not a whole number above zero' }).waitFor();
      await page.getByRole('alert').filter({ hasText: 'spend per day: "0" is not an amount in USD' }).waitFor();
      expect(await limitsOf()).toEqual({ requests_per_minute: 600, spend_per_day: 2_500_000_000 });
      await page.getByLabel('Limits of').selectOption(keyId);
      expect([await page.getByLabel('requests per minute').inputValue(), await page.getByLabel('spend per day').inputValue()]).toEqual(['', '']);
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: `Revoke key ${keyId}` }).click();
      await passes(async () => expect(await page.locator(`[data-key-state="${keyId}"]`).textContent()).toBe('revoked'), LIVE_MS);
      // Refused by every instance within a second (docs/auth.md).
      await passes(async () => expect((await chat(d.url, apiKey, { ...hello, max_tokens: 8 })).status).toBe(401), 3_000);

      await view(page, 'Audit log');
      await page.getByLabel('Account id').fill(accountId);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('"reference":"console-credit-1"').waitFor();
      const revocation = page.getByRole('row').filter({ hasText: 'api_key.revoke' });
      await revocation.waitFor({ timeout: LIVE_MS });
      expect(await revocation.count()).toBe(1);
      // By action and by day (today, UTC): the revocation alone; the day before: nothing.
      const auditRows = page.getByRole('region', { name: 'Audit log' }).locator('tbody tr');
      // The revocation's own day (a run across midnight UTC filters by the day it happened on).
      const revokedAt: string = (await json(`${d.url}/admin/v1/audit?action=api_key.revoke&accountId=${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.items[0].at;
      const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const today = dayOf(Date.parse(revokedAt));
      const yesterday = dayOf(Date.parse(revokedAt) - 86_400_000);
      await page.getByLabel('Action').selectOption('api_key.revoke');
      await page.getByLabel('From (UTC day)').fill(today);
      await page.getByLabel('To (UTC day, included)').fill(today);
      await page.getByRole('button', { name: 'Filter' }).click();
      await passes(async () => {
        const texts = await auditRows.allTextContents();
        expect(texts).toHaveLength(1);
        expect(texts[0]).toContain('api_key.revoke');
        expect(texts[0]).toContain(keyId);
      }, LIVE_MS);
      await page.getByLabel('From (UTC day)').fill(yesterday);
      await page.getByLabel('To (UTC day, included)').fill(yesterday);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No action recorded.').waitFor({ timeout: LIVE_MS });
      // A last day before the first is said by the form; nothing is asked of the API.
      await page.getByLabel('From (UTC day)').fill(today);
      await page.getByLabel('To (UTC day, included)').fill(yesterday);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByRole('alert').filter({ hasText: `To: ${yesterday} is before the first day, ${today}` }).waitFor({ timeout: LIVE_MS });
      await page.getByLabel('Action').selectOption('');
      await page.getByLabel('From (UTC day)').fill('');
      await page.getByLabel('To (UTC day, included)').fill('');
      await page.getByRole('button', { name: 'Filter' }).click();
      await revocation.waitFor({ timeout: LIVE_MS });
      await page.getByText('"reference":"console-credit-1"').waitFor();
      await checkAndShoot(page, 'operator-audit');

      await view(page, 'Reconciliation');
      await page.locator('#reconciliation-summary').waitFor();
      const stated = (await json(`${d.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body;
      await passes(async () => expect(await page.locator('#reconciliation-summary').textContent()).toBe(`${stated.accounts} accounts compared: ${stated.differences.length === 0 ? 'no difference.' : `${stated.differences.length} differ.`}`), LIVE_MS);
      await checkAndShoot(page, 'operator-reconciliation');

      await view(page, 'Accounts');
      await checkAndShoot(page, 'operator-accounts');
      expect(problems).toEqual([]);
    });

    it('when the ledger holds a release its actor never emitted (no balance moved), then the reconciliation view shows the accounts’ bill counts apart, and the balances as equal', async () => {
      const own = await fundedAccount(d.url, FUNDS);
      // Settled in the ledger before the forgery (on Dapr the funding's bill travels by pub/sub).
      await passes(async () => expect((await json(`${d.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.differences.filter((x: { accountId: string }) => x.accountId === own.accountId)).toEqual([]), LIVE_MS);
      await d.seed([billingEvent(`forged-${own.accountId}:release`, Date.now(), { kind: 'release', accountId: own.accountId, pool: 'pool-3', balanceDelta: 0, amount: 1000, holdId: `forged-${own.accountId}`, reference: 'forged' })]);
      const { page, problems } = await open();
      await signIn(page, 'operator', ADMIN_TOKEN);
      await view(page, 'Reconciliation');
      const row = page.getByRole('row').filter({ hasText: own.accountId });
      await row.waitFor({ timeout: LIVE_MS });
      const stated = (await json(`${d.url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.differences.find((x: { accountId: string }) => x.accountId === own.accountId);
      expect(stated).toMatchObject({ ledger: FUNDS, actor: FUNDS, bills: { ledger: 2, actor: 1 }, missing: [] });
      expect(await row.locator('[data-bills]').getAttribute('data-bills')).toBe('2/1');
      expect(await row.locator('[data-bills]').getAttribute('class')).toBe('bad');
      // The balances agree: shown as they are, not as a difference.
      expect(await row.locator('.bad').count()).toBe(1);
      expect(await row.textContent()).toContain('none (investigate)');
      expect(problems).toEqual([]);
    });

    it('when the operator double-clicks Create a key, then Rotate, then one key is made each time, the one shown', async () => {
      const account = await admin(d.url, '/admin/v1/accounts', { name: `console-double-${Date.now()}` });
      const accountId = account.body.accountId as string;
      const keys = async () => (await json(`${d.url}/admin/v1/accounts/${accountId}/api-keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.items as { apiKeyId: string }[];
      const { page, problems } = await open();
      await signIn(page, 'operator', ADMIN_TOKEN);
      await page.getByRole('heading', { name: 'Accounts', level: 2 }).waitFor();
      await page.evaluate((hash) => { location.hash = hash; }, `accounts/${accountId}`);
      await page.getByRole('button', { name: 'Create a key' }).dblclick();
      await page.locator('#new-api-key').waitFor();
      // A second key, made by the second click and never shown, would work and be nobody's.
      await new Promise((r) => setTimeout(r, 1_000));
      const made = await keys();
      expect(made).toHaveLength(1);
      await page.getByText(`The new key ${made[0]!.apiKeyId}, shown this once`).waitFor();
      // Rotating is asked once more, once for the double-click.
      const asked: string[] = [];
      page.on('dialog', (dialog) => { asked.push(dialog.message()); void dialog.accept(); });
      await page.getByRole('button', { name: `Rotate key ${made[0]!.apiKeyId}` }).dblclick();
      await page.getByText(`Key ${made[0]!.apiKeyId} rotated`).waitFor();
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await keys()).toHaveLength(2);
      expect(asked).toHaveLength(1);
      expect(problems).toEqual([]);
    });

    it('when the operator clicks Revoke or Suspend and then cancels, then nothing changes; confirmed, it is done', async () => {
      const made = await fundedAccount(d.url, 0);
      const keyOf = async () => (await json(`${d.url}/admin/v1/accounts/${made.accountId}/api-keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.items[0] as { apiKeyId: string; state: string };
      const suspendedAt = async () => (await json(`${d.url}/admin/v1/accounts/${made.accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.suspendedAt;
      const { apiKeyId } = await keyOf();
      const { page, problems } = await open();
      await signIn(page, 'operator', ADMIN_TOKEN);
      await page.getByRole('heading', { name: 'Accounts', level: 2 }).waitFor();
      await page.evaluate((hash) => { location.hash = hash; }, `accounts/${made.accountId}`);
      const questions: string[] = [];
      let answer = false;
      page.on('dialog', (dialog) => { questions.push(dialog.message()); void (answer ? dialog.accept() : dialog.dismiss()); });
      await page.getByRole('button', { name: `Revoke key ${apiKeyId}` }).click();
      await page.getByRole('button', { name: 'Suspend' }).click();
      await new Promise((r) => setTimeout(r, 1_000));
      expect(questions).toEqual([expect.stringMatching(/^Revoke the key sk-payg-.{4}…\? .*cannot be undone/), expect.stringMatching(/^Suspend the account /)]);
      expect([(await keyOf()).state, await suspendedAt(), (await chat(d.url, made.apiKey, { ...hello, max_tokens: 8 })).status]).toEqual(['active', null, 402]);
      answer = true;
      await page.getByRole('button', { name: `Revoke key ${apiKeyId}` }).click();
      await passes(async () => expect(await page.locator(`[data-key-state="${apiKeyId}"]`).textContent()).toBe('revoked'), LIVE_MS);
      await page.getByRole('button', { name: 'Suspend' }).click();
      await page.getByRole('button', { name: 'Unsuspend' }).waitFor();
      expect([(await keyOf()).state, await suspendedAt()]).toEqual(['revoked', expect.any(String)]);
      expect(problems).toEqual([]);
    });

    it('when another account is opened straight from one (a link pasted in the address), then nothing of the first is shown or sent for the second', async () => {
      const first = await fundedAccount(d.url, 0);
      const second = await fundedAccount(d.url, 0);
      const keysOf = async (accountId: string) => (await json(`${d.url}/admin/v1/accounts/${accountId}/api-keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.items as { apiKeyId: string; limits: object }[];
      const [firstKey] = await keysOf(first.accountId);
      const { page, problems } = await open();
      await signIn(page, 'operator', ADMIN_TOKEN);
      await page.getByRole('heading', { name: 'Accounts', level: 2 }).waitFor();
      await page.evaluate((hash) => { location.hash = hash; }, `accounts/${first.accountId}`);
      await page.getByRole('button', { name: 'Create a key' }).click();
      await page.locator('#new-api-key').waitFor();
      await page.getByLabel('Limits of').selectOption(firstKey!.apiKeyId);
      await page.evaluate((hash) => { location.hash = hash; }, `accounts/${second.accountId}`);
      await page.getByText(second.accountId).first().waitFor();
      // The first account's new key is not shown under the second; its limits form is the second account's.
      expect(await page.locator('#new-api-key').count()).toBe(0);
      expect(await page.getByLabel('Limits of').inputValue()).toBe('account');
      await page.getByLabel('requests per minute').fill('77');
      await page.getByRole('button', { name: 'Save the limits' }).click();
      await page.getByText('Limits of the account saved').waitFor();
      expect((await json(`${d.url}/admin/v1/accounts/${second.accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.limits).toEqual({ requests_per_minute: 77 });
      expect((await keysOf(first.accountId)).map((k) => k.limits)).toEqual([{}, {}]);
      expect(problems).toEqual([]);
    });

    it('when a key of the account has expired, then the limits form does not offer it (the gateway refuses limits on a key no call can use)', async () => {
      const account = await fundedAccount(d.url, 0);
      const expiring = await admin(d.url, `/admin/v1/accounts/${account.accountId}/api-keys`, { name: 'short-lived', expiresAt: new Date(Date.now() + 1500).toISOString() });
      expect(expiring.status).toBe(201);
      const expiredId = expiring.body.apiKeyId as string;
      await new Promise((r) => setTimeout(r, 2000));
      const { page, problems } = await open();
      await signIn(page, 'operator', ADMIN_TOKEN);
      await page.getByRole('heading', { name: 'Accounts', level: 2 }).waitFor();
      await page.evaluate((hash) => { location.hash = hash; }, `accounts/${account.accountId}`);
      await page.locator(`[data-key-state="${expiredId}"]`).waitFor();
      expect(await page.locator(`[data-key-state="${expiredId}"]`).textContent()).toBe('expired');
      const offered = await page.getByLabel('Limits of').locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
      expect(offered).toContain('account');
      expect(offered).not.toContain(expiredId);
      expect(offered).toHaveLength(2); // the account and its first key, which works
      expect(problems).toEqual([]);
    });

    it('when an account and its key have names as long as the API allows, then the page stays as wide as the window and every key’s actions are in view', async () => {
      const name = `${'N'.repeat(180)}${Date.now()}`;
      const account = await admin(d.url, '/admin/v1/accounts', { name });
      const accountId = account.body.accountId as string;
      const key = await admin(d.url, `/admin/v1/accounts/${accountId}/api-keys`, { name: 'k'.repeat(200) });
      const { page, problems } = await open();
      await signIn(page, 'operator', ADMIN_TOKEN);
      await page.getByLabel('Name contains').fill(name);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('button', { name }).click();
      const revoke = page.getByRole('button', { name: `Revoke key ${key.body.apiKeyId}` });
      await revoke.waitFor();
      const width = page.viewportSize()!.width;
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      const box = (await revoke.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(width);
      await page.goBack();
      await page.getByRole('button', { name }).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      expect(problems).toEqual([]);
    });

    it('when the overview is left open past midnight UTC, then it moves on to the new day and shows its charges', async () => {
      const { page, problems } = await open();
      // The browser's clock a day behind: the page opens "yesterday", then the day turns.
      await page.clock.install({ time: Date.now() - 86_400_000 });
      const asked = requested(page);
      await signIn(page, 'customer', customer.apiKey);
      await page.locator('#balance[data-nano]:not([data-nano=""])').waitFor();
      const today = new Date().toISOString().slice(0, 10);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      await passes(async () => expect(asked.filter((path) => path.includes('/spending')).at(-1)).toContain(`to=${yesterday}`), LIVE_MS);
      await page.clock.fastForward(86_400_000);
      await passes(async () => expect(asked.filter((path) => path.includes('/spending')).at(-1)).toContain(`to=${today}`), LIVE_MS);
      // The customer's calls were made today: the table now has them, as the API sums the same 30 days.
      const items = (await json(`${d.url}${CONSOLE}/spending`, { headers: { authorization: `Bearer ${customer.apiKey}` } })).body.items as { model: string; charged: number }[];
      const charged = items.filter((item) => item.model === 'sim-chat').reduce((sum, item) => sum + item.charged, 0);
      expect(charged).toBeGreaterThan(0);
      await passes(async () => expect(await page.getByRole('table', { name: 'Charged by model' }).getByRole('row').filter({ hasText: 'sim-chat' }).textContent()).toBe(`sim-chat${usd(charged)}`), LIVE_MS);
      expect(problems).toEqual([]);
    });

    it('when the overview is opened on a phone, then the page and its chart fit the screen, and the chart follows a wider window', async () => {
      const context = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
      try {
        const page = await context.newPage();
        const problems: string[] = [];
        page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
        await signIn(page, 'customer', customer.apiKey);
        await page.locator('.chart canvas').first().waitFor();
        const fits = () => page.evaluate(() => {
          const card = document.querySelector('.chart')!.closest('.card')!.getBoundingClientRect();
          return { page: document.documentElement.scrollWidth, window: innerWidth, chart: document.querySelector('.chart .uplot')!.getBoundingClientRect().right <= card.right };
        });
        expect(await fits()).toEqual({ page: 360, window: 360, chart: true });
        await page.setViewportSize({ width: 1000, height: 740 });
        await passes(async () => expect(await page.locator('.chart .uplot').evaluate((e) => e.getBoundingClientRect().width)).toBeGreaterThan(700), LIVE_MS);
        expect(await fits()).toEqual({ page: 1000, window: 1000, chart: true });
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it('when the customer’s key is revoked while the console is open, then the page says the key is refused and the API refuses its next call', async () => {
      const own = await fundedAccount(d.url, FUNDS);
      const { page, problems } = await open();
      await signIn(page, 'customer', own.apiKey);
      await page.locator('#balance[data-nano]:not([data-nano=""])').waitFor();
      const keyId = (await json(`${d.url}/admin/v1/accounts/${own.accountId}/api-keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.items[0].apiKeyId;
      expect((await json(`${d.url}/admin/v1/api-keys/${keyId}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(204);
      await page.getByRole('alert').filter({ hasText: 'did not accept this credential' }).first().waitFor({ timeout: LIVE_MS });
      expect((await chat(d.url, own.apiKey, { ...hello, max_tokens: 8 })).status).toBe(401);
      // It stops asking (it polled every 2 s) and shows no stale figure, only how to go on.
      let asked = 0;
      page.on('request', (r) => { if (r.url().includes('/api/distribution/')) asked++; });
      await new Promise((r) => setTimeout(r, 4_500));
      expect(asked).toBe(0);
      expect(await page.locator('#balance').count()).toBe(0);
      await page.getByRole('alert').filter({ hasText: 'Sign out, then sign in with a key that works' }).waitFor();
      expect(problems.filter((p) => !REFUSED_401.test(p))).toEqual([]);
    });

    it('when the customer’s account is suspended while the console is open, then the page says so plainly, and recovers once it is lifted', async () => {
      const own = await fundedAccount(d.url, FUNDS);
      const { page, problems } = await open();
      await signIn(page, 'customer', own.apiKey);
      await page.locator('#balance[data-nano]:not([data-nano=""])').waitFor();
      expect((await admin(d.url, `/admin/v1/accounts/${own.accountId}/suspend`, {})).status).toBe(200);
      const said = page.getByRole('alert').filter({ hasText: 'This account is suspended: the gateway refuses its keys and member tokens until the operator lifts the suspension' });
      await said.first().waitFor({ timeout: LIVE_MS });
      expect(await page.getByRole('alert').filter({ hasText: 'This credential may not do that' }).count()).toBe(0);
      // A view opened while suspended fails its own load too (its alert beside the poll's).
      await view(page, 'Usage');
      await passes(async () => expect(await said.count()).toBe(2), LIVE_MS);
      expect((await admin(d.url, `/admin/v1/accounts/${own.accountId}/unsuspend`, {})).status).toBe(200);
      // Lifted: the next poll succeeds, and every view loads again by itself (no alert is left).
      await passes(async () => expect(await said.count()).toBe(0), LIVE_MS);
      await page.locator('#usage-total').waitFor();
      await view(page, 'Overview');
      expect(await shownNano(page, 'balance')).toBe(FUNDS);
      expect(problems.filter((p) => !/status of 403/.test(p))).toEqual([]);
    });

    it('when an export is refused (the account suspended after the view was read), then the page says why in words, stays where it was, and no file is saved', async () => {
      const own = await fundedAccount(d.url, FUNDS);
      const { page, problems } = await open();
      await signIn(page, 'customer', own.apiKey);
      await page.locator('#balance[data-nano]:not([data-nano=""])').waitFor();
      await view(page, 'Usage');
      await page.locator('#usage-total').waitFor();
      expect((await admin(d.url, `/admin/v1/accounts/${own.accountId}/suspend`, {})).status).toBe(200);
      let downloads = 0;
      page.on('download', () => downloads++);
      await page.getByRole('button', { name: 'Export CSV' }).click();
      await page.getByRole('alert').filter({ hasText: 'The export was refused. This account is suspended' }).waitFor({ timeout: LIVE_MS });
      expect(downloads).toBe(0);
      expect(page.url()).toMatch(/\/console#usage$/);
      expect((await admin(d.url, `/admin/v1/accounts/${own.accountId}/unsuspend`, {})).status).toBe(200);
      // Lifted: the same button saves the file.
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
      expect(download.suggestedFilename()).toBe('usage.csv');
      expect(problems.filter((p) => !/status of 403/.test(p))).toEqual([]);
    });

    it('when the skip link is followed on a later view, then the focus moves to the content and the view stays', async () => {
      const { page, problems } = await customerOn('Usage');
      await page.locator('a.skip').focus();
      await page.keyboard.press('Enter');
      expect(new URL(page.url()).hash).toBe('#usage');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
      // The tab's title names the view, and follows Back.
      expect(await page.title()).toBe('Usage · PAYG gateway console');
      await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor({ state: 'attached' });
      await page.goBack();
      await passes(async () => expect(await page.title()).toBe('Overview · PAYG gateway console'), LIVE_MS);
      expect(problems).toEqual([]);
    });
  });
}
