// End-to-end suite of frozen and dated prices over HTTP, against a running gateway whose catalog
// file the test edits (docs/money.md, "Dated prices" and "Reloading the catalog"): a call is
// charged the prices in force when it was reserved, whatever a reload or an effective date does
// before its settle (an image and its replay too); later calls are charged the new ones; the usage
// rows record the unit prices charged; SIGHUP reloads a change the file watch cannot see; an invalid file is refused with one
// log line and the old prices stay in force.
//
// The catalog: GATEWAY_CATALOG_FILE is a symlink to a file in another directory, so that writing
// the target in place is a change only SIGHUP reloads; a file renamed over the link (an editor's
// save) and later writes in place are seen by the watch.

import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chat, fundedAccount, hello, image, json, picture } from '../support/api';
import { writeTestCatalog } from '../support/catalog';
import { eventually, passes } from '../support/eventually';
import { itConformsToOpenApi, recordAnswers } from '../support/openapi-conformance';

export interface PricesDeploymentUnderTest {
  url: string;
  /** The catalog the gateway was started with (its `path` is GATEWAY_CATALOG_FILE). */
  catalog: PricesCatalog;
  /** Sends SIGHUP to every gateway process. */
  hangUp(): Promise<void>;
  /** What the gateway process has logged so far. */
  logs(): string;
  close(): Promise<void>;
}

/** Every dated model is priced alike (the chat models' IMAGE status is not ready, the image model's TEXT_OUTPUT). */
type Prices = { TEXT_INPUT: number; TEXT_OUTPUT: number; IMAGE: number };
const A: Prices = { TEXT_INPUT: 100, TEXT_OUTPUT: 400, IMAGE: 40_000 };
const B: Prices = { TEXT_INPUT: 1_000, TEXT_OUTPUT: 7_000, IMAGE: 90_000 };
const C: Prices = { TEXT_INPUT: 3_000, TEXT_OUTPUT: 11_000, IMAGE: 130_000 };
const DATED = ['dated-chat', 'dated-slow-chat', 'dated-slow-image'];
/** How long the slow model's upstream takes to answer: the window in which the catalog changes under a reserved call. */
const SLOW_MS = 3_000;
const PROFILES = { fast: '5e1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e01', slow: '5e1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e02', image: '5e1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e03' };

/**
 * The catalog files of the suite: the test catalog plus `dated-chat` (the local upstream),
 * `dated-slow-chat` and `dated-slow-image` (the same, answering SLOW_MS late), all priced
 * `prices` and `schedule`.
 */
export class PricesCatalog {
  /** What GATEWAY_CATALOG_FILE names: a symlink to `target` at first. */
  readonly path: string;
  private readonly target: string;
  private readonly base: { models: Record<string, unknown>[]; providers: Record<string, unknown> };

  constructor(dir: string, upstreamUrl: string) {
    mkdirSync(join(dir, 'live'));
    mkdirSync(join(dir, 'store'));
    this.target = join(dir, 'store', 'catalog.json');
    this.base = JSON.parse(readFileSync(writeTestCatalog(join(dir, 'store', 'base.json'), upstreamUrl), 'utf8'));
    const chatModel = this.base.models[0] as { profiles: Record<string, unknown>[] };
    const imageModel = this.base.models.find((m) => m.id === 'upstream-image') as { profiles: Record<string, unknown>[] };
    const profile = (model: { profiles: Record<string, unknown>[] }, id: string, provider: string) => [{ ...model.profiles[0], profile_id: id, provider }];
    this.base.providers['local-openai-dated-slow'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': `delay=${SLOW_MS}` } };
    this.base.models.push(
      { ...chatModel, id: 'dated-chat', profiles: profile(chatModel, PROFILES.fast, 'local-openai') },
      { ...chatModel, id: 'dated-slow-chat', profiles: profile(chatModel, PROFILES.slow, 'local-openai-dated-slow') },
      { ...imageModel, id: 'dated-slow-image', profiles: profile(imageModel, PROFILES.image, 'local-openai-dated-slow') },
    );
    writeFileSync(this.target, this.content(A));
    this.path = join(dir, 'live', 'catalog.json');
    symlinkSync(this.target, this.path);
  }

  content(prices: Prices, schedule: { effective_from: string; prices: Prices }[] = []): string {
    const models = this.base.models.map((m) => (DATED.includes(m.id as string) ? { ...m, prices, price_schedule: schedule } : m));
    return JSON.stringify({ ...this.base, models }, null, 2);
  }

  /** Writes the symlink's target in place: the watch on the link's directory does not see it. */
  writeTarget(text: string): void {
    writeFileSync(this.target, text);
  }

  /** An editor's save: a new file renamed over the path (replacing the symlink by a file). */
  save(text: string): void {
    writeFileSync(`${this.path}.tmp`, text);
    renameSync(`${this.path}.tmp`, this.path);
  }

  /** A write in place of the path. */
  overwrite(text: string): void {
    writeFileSync(this.path, text);
  }
}

type UsageRow = { unit: string; quantity: number; unitPrice: number; cost: number; charged: number; holdId: string };

export function pricesSuite(hostName: string, start: () => Promise<PricesDeploymentUnderTest>): void {
  describe(`frozen and dated prices on the ${hostName} host`, () => {
    let d: PricesDeploymentUnderTest;
    let catalog: PricesCatalog;
    const openApi = recordAnswers(() => d?.url);
    beforeAll(async () => {
      d = await start();
      catalog = d.catalog;
    });
    afterAll(async () => {
      await d?.close();
    });

    const version = async () => (await json(`${d.url}/readyz`)).body.catalog.version as string;
    const listed = async (id: string) => ((await json(`${d.url}/api/open/v1/catalog/models`)).body.data as { id: string; prices: Prices; prices_effective_from: string | null; price_schedule: unknown[] }[]).find((m) => m.id === id)!;
    const reloads = async (outcome: string) => metricValue(await (await fetch(`${d.url}/metrics`)).text(), outcome);
    /** Waits until the catalog in force is another version than `before`; answers it. */
    const reloadedFrom = async (before: string) => {
      const after = await eventually(version, (v) => v !== before, 10_000);
      expect(after).not.toBe(before);
      return after;
    };
    /** A chat's usage rows, once the ledger has its two. */
    const rowsOf = async (apiKey: string, holdCount: number): Promise<UsageRow[]> => {
      const page = await eventually(
        () => json(`${d.url}/api/distribution/api-credit/usage/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } }),
        (r) => r.body.items?.length === 2 * holdCount,
      );
      return page.body.items;
    };
    /** Checks that a chat answer was charged exactly its usage at `prices`, and its rows say so; answers the charge. */
    const chargedAt = (answer: { status: number; body: any; headers: Headers }, prices: Prices) => {
      expect(answer.status).toBe(200);
      const { prompt_tokens: input, completion_tokens: output } = answer.body.usage;
      const charge = input * prices.TEXT_INPUT + output * prices.TEXT_OUTPUT;
      expect(Number(answer.headers.get('x-payg-charged'))).toBe(charge);
      return { input, output, charge };
    };
    const rowPrices = (rows: UsageRow[]) => rows.map((r) => [r.unit, r.unitPrice, r.cost]).sort();

    it('when the file is changed where the watch cannot see it, then nothing changes until SIGHUP reloads it', async () => {
      const before = await version();
      catalog.writeTarget(catalog.content(B));
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await version()).toBe(before);
      expect((await listed('dated-chat')).prices).toEqual(A);
      const applied = await reloads('applied');
      await d.hangUp();
      await reloadedFrom(before);
      expect((await listed('dated-chat')).prices).toEqual(B);
      expect(await reloads('applied')).toBe(applied + 1);
      const { apiKey } = await fundedAccount(d.url, 1_000_000_000);
      chargedAt(await chat(d.url, apiKey, { ...hello, max_tokens: 4 }, { model: 'dated-chat' }), B);
    });

    it('when a call reserved under one price is settled after the file was saved with another, then it is charged the first and its rows say so; later calls the second', async () => {
      const before = await version();
      const { apiKey } = await fundedAccount(d.url, 1_000_000_000);
      const slow = chat(d.url, apiKey, { ...hello, max_tokens: 4 }, { model: 'dated-slow-chat' });
      const startedAt = Date.now();
      // The slow call has been prepared and reserved at B by now (its upstream waits SLOW_MS).
      await new Promise((r) => setTimeout(r, 300));
      catalog.save(catalog.content(C));
      await reloadedFrom(before);
      expect(Date.now() - startedAt).toBeLessThan(SLOW_MS);
      const fast = chargedAt(await chat(d.url, apiKey, { ...hello, max_tokens: 4 }, { model: 'dated-chat' }), C);
      const frozen = chargedAt(await slow, B);
      const rows = await rowsOf(apiKey, 2);
      const byHold = (price: number) => rows.filter((r) => r.unit === 'TEXT_OUTPUT' && r.unitPrice === price);
      expect(byHold(B.TEXT_OUTPUT)).toHaveLength(1);
      expect(byHold(C.TEXT_OUTPUT)).toHaveLength(1);
      const slowRows = rows.filter((r) => r.holdId === byHold(B.TEXT_OUTPUT)[0].holdId);
      expect(rowPrices(slowRows)).toEqual([['TEXT_INPUT', B.TEXT_INPUT, frozen.input * B.TEXT_INPUT], ['TEXT_OUTPUT', B.TEXT_OUTPUT, frozen.output * B.TEXT_OUTPUT]]);
      const fastRows = rows.filter((r) => r.holdId === byHold(C.TEXT_OUTPUT)[0].holdId);
      expect(rowPrices(fastRows)).toEqual([['TEXT_INPUT', C.TEXT_INPUT, fast.input * C.TEXT_INPUT], ['TEXT_OUTPUT', C.TEXT_OUTPUT, fast.output * C.TEXT_OUTPUT]]);
      expect((await listed('dated-slow-chat')).prices).toEqual(C);
    });

    it('when the file is made invalid, then the reload is refused with one error line naming the file and the old prices are still charged', async () => {
      const before = await version();
      const refused = await reloads('refused');
      catalog.overwrite(catalog.content(C).replace('"dated-chat"', '"dated chat"'));
      await passes(async () => expect(await reloads('refused')).toBeGreaterThan(refused), 10_000);
      expect(await version()).toBe(before);
      // The log may reach its file a moment after the metric moved (Dapr: through the supervisor).
      await passes(async () => {
        const lines = d.logs().split('\n').filter((line) => line.includes('catalog reload refused'));
        expect(lines.length).toBeGreaterThanOrEqual(1);
        const line = JSON.parse(lines.at(-1)!);
        expect(line).toMatchObject({ level: 50, file: catalog.path, trigger: 'file', version: before });
        expect(line.msg).toMatch(/the catalog in force stays .*models\.\d+\.id/s);
      }, 5_000);
      const { apiKey } = await fundedAccount(d.url, 1_000_000_000);
      chargedAt(await chat(d.url, apiKey, { ...hello, max_tokens: 4 }, { model: 'dated-chat' }), C);
      // Put right, the file is taken again.
      catalog.overwrite(catalog.content(A));
      await reloadedFrom(before);
      chargedAt(await chat(d.url, apiKey, { ...hello, max_tokens: 4 }, { model: 'dated-chat' }), A);
    });

    it('when a dated entry takes force while a call reserved before its date runs, then that call is charged the old prices and the calls after the date the new', async () => {
      const before = await version();
      // Far enough ahead for the reload and the slow call's reservation, well inside the slow call.
      const from = new Date(Date.now() + 2_000);
      const effective_from = from.toISOString();
      catalog.overwrite(catalog.content(A, [{ effective_from, prices: B }]));
      await reloadedFrom(before);
      expect(await listed('dated-chat')).toMatchObject({ prices: A, prices_effective_from: null, price_schedule: [{ effective_from, prices: B }] });
      const { apiKey } = await fundedAccount(d.url, 1_000_000_000);
      const slow = chat(d.url, apiKey, { ...hello, max_tokens: 4 }, { model: 'dated-slow-chat' });
      await new Promise((r) => setTimeout(r, 300));
      expect(Date.now()).toBeLessThan(from.getTime());
      await new Promise((r) => setTimeout(r, from.getTime() - Date.now() + 50));
      chargedAt(await chat(d.url, apiKey, { ...hello, max_tokens: 4 }, { model: 'dated-chat' }), B);
      chargedAt(await slow, A);
      expect(await listed('dated-slow-chat')).toMatchObject({ prices: B, prices_effective_from: effective_from });
      const rows = await rowsOf(apiKey, 2);
      expect(rows.filter((r) => r.unit === 'TEXT_OUTPUT').map((r) => r.unitPrice).sort((x, y) => x - y)).toEqual([A.TEXT_OUTPUT, B.TEXT_OUTPUT]);
    });

    it('when an image reserved under one price is answered after a reload to another, then it and its replay are charged the first; a new image the second', async () => {
      const before = await version();
      expect((await listed('dated-slow-image')).prices).toEqual(B);
      const { apiKey } = await fundedAccount(d.url, 1_000_000_000);
      const key = crypto.randomUUID();
      const first = image(d.url, apiKey, picture, { model: 'dated-slow-image', key });
      const startedAt = Date.now();
      await new Promise((r) => setTimeout(r, 300));
      catalog.save(catalog.content(C));
      await reloadedFrom(before);
      expect(Date.now() - startedAt).toBeLessThan(SLOW_MS);
      const answered = await first;
      expect([answered.status, answered.body.charged, answered.headers.get('x-payg-charged')]).toEqual([200, B.IMAGE, String(B.IMAGE)]);
      const replay = await image(d.url, apiKey, picture, { model: 'dated-slow-image', key });
      expect([replay.status, replay.headers.get('x-payg-replayed'), replay.headers.get('x-payg-charged')]).toEqual([200, 'true', String(B.IMAGE)]);
      const next = await image(d.url, apiKey, picture, { model: 'dated-slow-image' });
      expect([next.status, next.headers.get('x-payg-charged')]).toEqual([200, String(C.IMAGE)]);
      const page = await eventually(
        () => json(`${d.url}/api/distribution/api-credit/usage/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } }),
        (r) => r.body.items?.length === 2,
      );
      expect((page.body.items as UsageRow[]).map((r) => [r.unit, r.unitPrice, r.charged]).sort((x, y) => Number(x[1]) - Number(y[1]))).toEqual([['IMAGE', B.IMAGE, B.IMAGE], ['IMAGE', C.IMAGE, C.IMAGE]]);
    });

    itConformsToOpenApi(openApi);
  });
}

/** The value of payg_catalog_reloads_total for one outcome in a Prometheus exposition (0 before the first). */
function metricValue(exposition: string, outcome: string): number {
  const match = new RegExp(`^payg_catalog_reloads_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(exposition);
  return match ? Number(match[1]) : 0;
}
