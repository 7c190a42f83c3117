// End-to-end suite of limits per key and per account over HTTP, against one or two gateway
// instances: rates counted by the account's Account actor in minute windows (429 with Retry-After
// and the rate-limit headers each SDK reads, on both wires), spend limits kept by FundsHold with
// open holds counted (402, nothing held), exact under 1,000 concurrent calls, and the official
// OpenAI and Anthropic SDKs retrying a 429 by its Retry-After.

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { admin, balance, chat, fundedAccount, hello, image, json, picture } from '../support/api';
import { onebitPng } from '../support/media';
import { ADMIN_TOKEN } from '../support/processes';
import { passes } from '../support/eventually';
import { newSession, startRun } from '../support/sessions';
import { itConformsToOpenApi, recordAnswers } from '../support/openapi-conformance';
import { COMPAT_TEST_ENV } from './compat.suite';

/** The deployment needs the compatibility routes on (the Anthropic SDK's /v1/messages). */
export const LIMITS_TEST_ENV = { GATEWAY_COMPAT_ENABLED: COMPAT_TEST_ENV.GATEWAY_COMPAT_ENABLED, GATEWAY_ORDERS_PER_DAY: '3' };

export interface LimitsDeploymentUnderTest {
  /** Every gateway instance (the same one twice where only one runs). */
  urls: [string, string];
  close(): Promise<void>;
}

const CACHE_BOUND_MS = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
/** Orders are counted per UTC day: a case that counts them starts well inside one. */
async function insideOneDay(needMs: number): Promise<void> {
  const left = 86_400_000 - (Date.now() % 86_400_000);
  if (left < needMs) await sleep(left + 100);
}
/** Rate windows are whole minutes of the actor's clock (this machine's): a case that counts starts inside one with `needMs` left. */
async function insideOneWindow(needMs: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await sleep(left + 100);
}

export function limitsSuite(hostName: string, start: () => Promise<LimitsDeploymentUnderTest>): void {
  describe(`limits per key and per account on the ${hostName} host`, () => {
    let d: LimitsDeploymentUnderTest;
    const openApi = recordAnswers(() => d?.urls[0]);
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    const patch = (path: string, body: unknown) =>
      json(`${d.urls[0]}${path}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    async function limitedKey(limits: Record<string, number>, options: { amount?: number; scopes?: string[]; account?: Record<string, number> } = {}) {
      const { accountId } = await fundedAccount(d.urls[0], options.amount ?? 1_000_000_000);
      const key = await admin(d.urls[0], `/admin/v1/accounts/${accountId}/api-keys`, options.scopes ? { scopes: options.scopes } : {});
      const set = await patch(`/admin/v1/api-keys/${key.body.apiKeyId}`, { limits });
      expect(set).toMatchObject({ status: 200, body: { apiKeyId: key.body.apiKeyId, limits } });
      if (options.account) expect(await patch(`/admin/v1/accounts/${accountId}`, { limits: options.account })).toMatchObject({ status: 200, body: { limits: options.account } });
      // Every instance reads the new limits within its cache bound.
      await sleep(CACHE_BOUND_MS + 50);
      return { accountId, apiKeyId: key.body.apiKeyId as string, apiKey: key.body.apiKey as string };
    }

    it('when a key is over its requests per minute, then 429 rate_limit_exceeded with Retry-After, and every answer under the limit tells the window', async () => {
      await insideOneWindow(15_000);
      const { apiKey } = await limitedKey({ requests_per_minute: 3 });
      const answers = [];
      // Admitted calls that end in an error (the provider fails, or rejects the request) tell the window too.
      const directives = [undefined, 'fail-before-output', 'reject', undefined];
      for (let i = 0; i < 4; i++) answers.push(await chat(d.urls[i % 2], apiKey, hello, directives[i] ? { headers: { 'x-sim-directive': directives[i]! } } : {}));
      expect(answers.map((a) => a.status)).toEqual([200, 502, 400, 429]);
      expect(answers.map((a) => a.headers.get('x-ratelimit-remaining-requests'))).toEqual(['2', '1', '0', '0']);
      expect(answers[0].headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(answers[0].headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
      const refused = answers[3];
      expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded', param: 'requests_per_minute' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(await balance(d.urls[0], apiKey)).toMatchObject({ held: 0 });
      // What the minute has counted, as the console reads it: the three admitted calls, the refused one not.
      const limits = await json(`${d.urls[1]}/api/distribution/api-credit/limits`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(limits.body).toMatchObject({ key: { requests_per_minute: 3 }, account: {}, rate_usage: { key: { requests: 3 }, account: { requests: 3 } } });
      expect(Date.parse(limits.body.rate_usage.reset_at) - Date.parse(limits.body.rate_usage.window_start)).toBe(60_000);
      // Without a rate limit nothing is counted: no usage to tell.
      const unlimited = await fundedAccount(d.urls[0], 1_000_000);
      const nothing = { spend_per_day: 0, spend_per_month: 0, spend_total: 0, held: 0 };
      expect((await json(`${d.urls[0]}/api/distribution/api-credit/limits`, { headers: { authorization: `Bearer ${unlimited.apiKey}` } })).body).toEqual({ key: {}, account: {}, rate_usage: null, spend_usage: { account: { ...nothing, leased: 0 }, key: nothing } });
    });

    it('when tokens per minute are limited, then a call counts its bound at admission and its real tokens after, so the next call fits', async () => {
      await insideOneWindow(20_000);
      const { apiKey } = await limitedKey({}, { account: { tokens_per_minute: 400 } });
      const body = { ...hello, max_tokens: 300 };
      const first = await chat(d.urls[0], apiKey, body, { headers: { 'x-sim-directive': 'tokens=5' } });
      expect(first.status).toBe(200);
      expect(Number(first.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(100);
      // The correction lands after the settle: the second call fits once it has.
      let second = await chat(d.urls[1], apiKey, body, { headers: { 'x-sim-directive': 'tokens=5' } });
      for (let i = 0; i < 20 && second.status === 429; i++) {
        await sleep(100);
        second = await chat(d.urls[1], apiKey, body, { headers: { 'x-sim-directive': 'tokens=5' } });
      }
      expect(second.status).toBe(200);
      // Over what the window has left: 429, try again later.
      const later = await chat(d.urls[0], apiKey, { ...hello, max_tokens: 380 });
      expect([later.status, later.body.error?.param, later.body.error?.message]).toEqual([429, "tokens_per_minute", expect.any(String)]);
      // Bigger than the whole limit: no wait lets it in, so it is refused as too large, not told to retry.
      const tooBig = await chat(d.urls[0], apiKey, { ...hello, max_tokens: 1000 });
      expect([tooBig.status, tooBig.body.error?.code, tooBig.body.error?.param, tooBig.headers.get('retry-after')]).toEqual([413, 'payload_too_large', 'tokens_per_minute', null]);
      expect(tooBig.body.error.message).toContain('can never be admitted');
    });

    it('when tokens per minute are limited, then an inline image counts at admission by its pixels, as its hold bounds it, not by its bytes', async () => {
      await insideOneWindow(15_000);
      const { apiKey } = await limitedKey({ tokens_per_minute: 1000 });
      const withImage = (width: number, height: number) => {
        const url = `data:image/png;base64,${onebitPng(width, height).toString('base64')}`;
        const body = { max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url } }] }] };
        return { body, text: Math.ceil((Buffer.byteLength(JSON.stringify(body)) - url.length) / 4) };
      };
      // 1568×1568 in about 500 bytes: to the simulated provider the larger rule's 1,600 tokens, over the whole limit.
      const large = withImage(1568, 1568);
      expect(Buffer.byteLength(JSON.stringify(large.body)) / 4 + 8).toBeLessThan(1000);
      const tooBig = await chat(d.urls[0], apiKey, large.body);
      expect([tooBig.status, tooBig.body.error?.code, tooBig.body.error?.param]).toEqual([413, 'payload_too_large', 'tokens_per_minute']);
      expect(tooBig.body.error.message).toContain(`counts ${large.text + 1600 + 8} tokens`);
      // 200×200: OpenAI's one tile, 255 tokens (Anthropic's rule: 64), counted in the window.
      const small = withImage(200, 200);
      const served = await chat(d.urls[0], apiKey, small.body);
      expect(served.status).toBe(200);
      expect(served.headers.get('x-ratelimit-remaining-tokens')).toBe(String(1000 - (small.text + 255 + 8)));
    });

    it('when a key is rotated, then its successor counts in the same request window: the rotation neither resets nor doubles the rate', async () => {
      await insideOneWindow(15_000);
      const { apiKey, apiKeyId } = await limitedKey({ requests_per_minute: 2 });
      for (const url of d.urls) expect((await chat(url, apiKey, hello)).status).toBe(200);
      const rotated = await admin(d.urls[0], `/admin/v1/api-keys/${apiKeyId}/rotate`, { graceSeconds: 3600 });
      expect(rotated.status).toBe(201);
      await sleep(CACHE_BOUND_MS + 50);
      // During the grace both keys work, and both are over the chain's two requests.
      for (const credential of [rotated.body.apiKey as string, apiKey]) {
        expect(await chat(d.urls[1], credential, hello)).toMatchObject({ status: 429, body: { error: { code: 'rate_limit_exceeded', param: 'requests_per_minute' } } });
      }
      const limits = await json(`${d.urls[0]}/api/distribution/api-credit/limits`, { headers: { authorization: `Bearer ${rotated.body.apiKey}` } });
      // The successor reads the chain's count: the two requests its predecessor made.
      expect(limits.body.rate_usage.key).toMatchObject({ requests: 2 });
    });

    it('when a call under a rate limit is refused for its funds (402), then it is answered with the rate headers and its request goes back to the window', async () => {
      await insideOneWindow(15_000);
      const { apiKey } = await limitedKey({ requests_per_minute: 2 }, { amount: 200_000 });
      // Each asks a hold bigger than the balance: 402, nothing held.
      for (let i = 0; i < 4; i++) {
        const refused = await chat(d.urls[i % 2], apiKey, { ...hello, max_tokens: 4000 });
        expect([refused.status, refused.body.error?.code, refused.headers.get('x-ratelimit-limit-requests'), refused.headers.get('x-ratelimit-remaining-requests')]).toEqual([402, 'insufficient_funds', '2', '2']);
      }
      // The refusals used none of the two requests: both calls that fit are served.
      for (const url of d.urls) expect((await chat(url, apiKey, { ...hello, max_tokens: 4 }, { headers: { 'x-sim-directive': 'tokens=2' } })).status).toBe(200);
    });

    it('when orders and sessions are created under a requests_per_minute, then each creation counts one request (429 past it, nothing created), and one refused for its input gives its request back', async () => {
      await insideOneWindow(15_000);
      const { apiKey } = await limitedKey({ requests_per_minute: 2 });
      const order = (amount: number) => json(`${d.urls[0]}/api/consumer/orders`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount }) });
      expect((await order(0)).status).toBe(400);
      const created = await order(1_000_000_000);
      expect([created.status, created.headers.get('x-ratelimit-remaining-requests')]).toEqual([201, '1']);
      await newSession(d.urls[1], apiKey);
      const over = await order(1_000_000_000);
      expect([over.status, over.body.error?.code, over.body.error?.param, Number(over.headers.get('retry-after')) > 0]).toEqual([429, 'rate_limit_exceeded', 'requests_per_minute', true]);
      const session = await json(`${d.urls[1]}/v1/sessions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: '{}' });
      expect([session.status, session.body.error?.code]).toEqual([429, 'rate_limit_exceeded']);
    });

    it('when an image request or an order is replayed (same Idempotency-Key and payload) under a requests_per_minute, then it is answered from what was stored and counts nothing: the window keeps its requests for new ones', async () => {
      await insideOneWindow(20_000);
      const { apiKey } = await limitedKey({ requests_per_minute: 3 });
      const order = (url: string, amount: number, key?: string) => json(`${url}/api/consumer/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
        body: JSON.stringify({ amount }),
      });
      const imageKey = crypto.randomUUID();
      const orderKey = crypto.randomUUID();
      const made = await image(d.urls[0], apiKey, picture, { key: imageKey });
      expect([made.status, made.headers.get('x-ratelimit-remaining-requests')]).toEqual([200, '2']);
      const ordered = await order(d.urls[0], 1_000_000_000, orderKey);
      expect([ordered.status, ordered.headers.get('x-ratelimit-remaining-requests')]).toEqual([201, '1']);
      for (const url of [...d.urls, ...d.urls]) {
        const again = await image(url, apiKey, picture, { key: imageKey });
        expect([again.status, again.headers.get('x-payg-replayed'), again.body.taskId, again.headers.get('x-ratelimit-remaining-requests')]).toEqual([200, 'true', made.body.taskId, null]);
        const reordered = await order(url, 1_000_000_000, orderKey);
        expect([reordered.status, reordered.headers.get('x-payg-replayed'), reordered.body.orderId, reordered.headers.get('x-ratelimit-remaining-requests')]).toEqual([201, 'true', ordered.body.orderId, null]);
      }
      // The same key with another amount (or image payload) is no replay: refused 409 before anything is counted.
      const reused = await order(d.urls[0], 5_000_000_000, orderKey);
      expect([reused.status, reused.body.error?.code, reused.headers.get('x-ratelimit-remaining-requests')]).toEqual([409, 'idempotency_key_reused', null]);
      // Eight replays later, the window still has the request they did not use.
      const another = await order(d.urls[1], 2_000_000_000);
      expect([another.status, another.headers.get('x-ratelimit-remaining-requests')]).toEqual([201, '0']);
      const over = await order(d.urls[0], 3_000_000_000);
      expect([over.status, over.body.error?.code, over.body.error?.param]).toEqual([429, 'rate_limit_exceeded', 'requests_per_minute']);
      // Over the limit, a replay is still answered, and a key reused with another payload is told
      // 409 at once, not to wait for the window (429) before being told it.
      expect((await image(d.urls[1], apiKey, picture, { key: imageKey })).status).toBe(200);
      const otherImage = await image(d.urls[0], apiKey, { ...picture, prompt: 'another picture' }, { key: imageKey });
      expect([otherImage.status, otherImage.body.error?.code, otherImage.body.error?.param]).toEqual([409, 'idempotency_key_reused', 'Idempotency-Key']);
      const otherOrder = await order(d.urls[1], 7_000_000_000, orderKey);
      expect([otherOrder.status, otherOrder.body.error?.code, otherOrder.body.error?.param]).toEqual([409, 'idempotency_key_reused', 'Idempotency-Key']);
    });

    it('when an account has created its orders of the day (GATEWAY_ORDERS_PER_DAY, counted across instances), then the next is 429 orders_per_day until the next UTC day; a retry of a made order is still answered, and the operator\'s orders are not counted', async () => {
      await insideOneDay(30_000);
      const { accountId, apiKey } = await fundedAccount(d.urls[0], 0);
      const order = (url: string, amount: number, idempotencyKey?: string) => json(`${url}/api/consumer/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
        body: JSON.stringify({ amount }),
      });
      const key = '6f1e2d3c-4b5a-4987-8765-43210fedcba9';
      // Refused for its input: counts nothing.
      expect((await order(d.urls[0], 0)).status).toBe(400);
      const first = await order(d.urls[0], 1_000_000_000, key);
      expect(first.status).toBe(201);
      expect((await order(d.urls[1], 2_000_000_000)).status).toBe(201);
      // A replay makes nothing new and counts nothing.
      const replay = await order(d.urls[1], 1_000_000_000, key);
      expect([replay.status, replay.headers.get('x-payg-replayed'), replay.body.orderId]).toEqual([201, 'true', first.body.orderId]);
      expect((await order(d.urls[0], 3_000_000_000)).status).toBe(201);
      for (const url of d.urls) {
        const over = await order(url, 4_000_000_000);
        const retryAfter = Number(over.headers.get('retry-after'));
        expect([over.status, over.body.error?.code, over.body.error?.param]).toEqual([429, 'rate_limit_exceeded', 'orders_per_day']);
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(86_400);
        expect(Math.ceil(Number(over.headers.get('retry-after-ms')) / 1000)).toBe(retryAfter);
        expect(over.body.error.message).toContain('orders of');
      }
      // Past the cap, the retry of an order already made is answered all the same, and the same
      // key with another amount is the usual conflict; a new key is refused.
      const late = await order(d.urls[0], 1_000_000_000, key);
      expect([late.status, late.headers.get('x-payg-replayed'), late.body.orderId]).toEqual([201, 'true', first.body.orderId]);
      expect((await order(d.urls[1], 5_000_000_000, key)).status).toBe(409);
      expect((await order(d.urls[1], 1_000_000_000, 'a1b2c3d4-e5f6-4789-8abc-def012345678')).body.error?.param).toBe('orders_per_day');
      expect((await admin(d.urls[1], `/admin/v1/accounts/${accountId}/orders`, { amount: 1_000_000_000 })).status).toBe(201);
    });

    it('when tokens per minute are limited, then an embeddings call counts its input bound (UTF-8 bytes) at admission and its prompt tokens after', async () => {
      await insideOneWindow(15_000);
      const { apiKey } = await limitedKey({ tokens_per_minute: 16 }, { scopes: ['compat'] });
      const embed = (input: string) => json(`${d.urls[0]}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-embed', input }) });
      // A bound of 20 tokens can never fit a limit of 16: refused (not told to retry) before anything is held.
      const tooBig = await embed('x'.repeat(20));
      expect([tooBig.status, tooBig.body.error?.code, tooBig.body.error?.param, tooBig.headers.get('retry-after')]).toEqual([413, 'payload_too_large', 'tokens_per_minute', null]);
      // It says how an embeddings call is counted (not a chat's 4 bytes a token and max_tokens, which it has none of).
      expect(tooBig.body.error.message).toBe("the call counts 20 tokens (its input at the most tokens it can be: a token for each UTF-8 byte of a text, a token array at its length), more than the key's whole tokens_per_minute of 16: it can never be admitted under that limit; send less input");
      // 12 bytes counted at admission; the simulated provider counts 3 prompt tokens.
      const first = await embed('abcdefghijkl');
      expect([first.status, first.body.usage?.prompt_tokens]).toEqual([200, 3]);
      expect([first.headers.get('x-ratelimit-limit-tokens'), first.headers.get('x-ratelimit-remaining-tokens')]).toEqual(['16', '4']);
      // The correction to 3 lands after the settle: a second 12-byte call then fits.
      let second = await embed('abcdefghijkl');
      for (let i = 0; i < 20 && second.status === 429; i++) {
        await sleep(100);
        second = await embed('abcdefghijkl');
      }
      expect(second.status).toBe(200);
      expect(await balance(d.urls[0], apiKey)).toMatchObject({ held: 0 });
    });

    it('when a token count under a rate limit is refused by the provider, then its 400 carries the rate headers of the request it counted', async () => {
      await insideOneWindow(15_000);
      const { apiKey } = await limitedKey({ requests_per_minute: 3 }, { scopes: ['compat'] });
      const count = (directive?: string) => json(`${d.urls[0]}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...(directive ? { 'x-sim-directive': directive } : {}) },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const counted = await count();
      expect([counted.status, counted.headers.get('anthropic-ratelimit-requests-remaining')]).toEqual([200, '2']);
      const refused = await count('reject');
      expect([refused.status, refused.body.error?.type, refused.headers.get('anthropic-ratelimit-requests-limit'), refused.headers.get('anthropic-ratelimit-requests-remaining')]).toEqual([400, 'invalid_request_error', '3', '1']);
    });

    it('when a call would pass a spend limit, then 402 spend_limit_exceeded naming it and nothing is held; removing the limit lets calls through', async () => {
      const { apiKey, apiKeyId } = await limitedKey({ spend_total: 150_000 });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await chat(d.urls[i % 2], apiKey, { ...hello, max_tokens: 100 }, { headers: { 'x-sim-directive': 'tokens=100' } })).status);
      const refused = await chat(d.urls[0], apiKey, { ...hello, max_tokens: 100 });
      expect(refused).toMatchObject({ status: 402, body: { error: { code: 'spend_limit_exceeded', param: 'spend_total' } } });
      const spent = 1_000_000_000 - (await balance(d.urls[0], apiKey)).balance;
      expect(spent).toBeLessThanOrEqual(150_000);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
      expect(await balance(d.urls[0], apiKey)).toMatchObject({ held: 0 });
      expect((await patch(`/admin/v1/api-keys/${apiKeyId}`, { limits: { spend_total: null } })).body.limits).toEqual({});
      await sleep(CACHE_BOUND_MS + 50);
      expect((await chat(d.urls[1], apiKey, hello)).status).toBe(200);
    });

    it('when prototype session runs are made under limits, then they are admitted, refused and counted exactly as chats', async () => {
      await insideOneWindow(20_000);
      // Spend: runs one after another until the key's limit refuses one (402, nothing held); the key's spend counts every run.
      const spender = await limitedKey({ spend_total: 150_000 });
      const run = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 };
      const statuses: number[] = [];
      for (let i = 0; i < 10 && !statuses.includes(402); i++) {
        const started = await startRun(d.urls[i % 2], spender.apiKey, await newSession(d.urls[0], spender.apiKey), run, { 'x-sim-directive': 'tokens=100' });
        statuses.push(started.status);
        if (started.status === 402) expect(started.body.error).toMatchObject({ code: 'spend_limit_exceeded', param: 'spend_total' });
        // The run ends on its own: wait until its hold is settled.
        await passes(async () => expect((await balance(d.urls[0], spender.apiKey)).held).toBe(0), 10_000);
      }
      expect(statuses.at(-1)).toBe(402);
      expect(statuses.filter((s) => s === 202).length).toBeGreaterThan(0);
      const spent = 1_000_000_000 - (await balance(d.urls[0], spender.apiKey)).balance;
      expect(spent).toBeGreaterThan(0);
      expect(spent).toBeLessThanOrEqual(150_000);
      const usage = await json(`${d.urls[0]}/api/distribution/api-credit/limits`, { headers: { authorization: `Bearer ${spender.apiKey}` } });
      expect(usage.body.spend_usage.key).toMatchObject({ spend_total: spent, held: 0 });
      // Rate: a key at 3 requests a minute creates a session (one request) and starts two runs in
      // it (their answers tell the window); the third run is refused 429.
      const limited = await limitedKey({ requests_per_minute: 3 });
      const sessionId = await newSession(d.urls[0], limited.apiKey);
      const answers = [];
      for (let i = 0; i < 3; i++) {
        answers.push(await startRun(d.urls[i % 2], limited.apiKey, sessionId, { ...run, max_tokens: 8 }));
        // One run at a time in a session: the next starts once this one has ended (its hold settled).
        await passes(async () => expect((await balance(d.urls[0], limited.apiKey)).held).toBe(0), 10_000);
      }
      expect(answers.map((a) => a.status)).toEqual([202, 202, 429]);
      expect(answers[1].headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(answers[2].body.error).toMatchObject({ code: 'rate_limit_exceeded', param: 'requests_per_minute' });
      expect(answers[2].headers.get('retry-after')).toMatch(/^\d+$/);
    });

    it('when session runs start at once in several sessions, or embeddings are asked, under a spend limit, then what is held and charged never passes it and the key counts each charge', async () => {
      const { apiKey } = await limitedKey({ spend_total: 40_000 }, { scopes: ['compat'] });
      const limits = async () => (await json(`${d.urls[0]}/api/distribution/api-credit/limits`, { headers: { authorization: `Bearer ${apiKey}` } })).body.spend_usage.key;
      // Each run holds its body's bytes at the input price plus 20 tokens at the output price
      // (about 16,000): six started at once, slowed so that they overlap, cannot all be held.
      const run = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 };
      const sessions = await Promise.all(Array.from({ length: 6 }, () => newSession(d.urls[0], apiKey)));
      const started = await Promise.all(sessions.map((id, i) => startRun(d.urls[i % 2], apiKey, id, run, { 'x-sim-directive': 'tokens=20; stream-delay=20' })));
      const statuses = started.map((s) => s.status);
      expect(statuses.every((s) => s === 202 || s === 402)).toBe(true);
      expect(statuses.filter((s) => s === 202).length).toBeGreaterThan(0);
      expect(started.filter((s) => s.status === 402).map((s) => s.body.error)).toEqual(statuses.filter((s) => s === 402).map(() => expect.objectContaining({ code: 'spend_limit_exceeded', param: 'spend_total' })));
      expect(statuses).toContain(402);
      await passes(async () => expect((await balance(d.urls[0], apiKey)).held).toBe(0), 20_000);
      const afterRuns = 1_000_000_000 - (await balance(d.urls[0], apiKey)).balance;
      expect(afterRuns).toBeGreaterThan(0);
      expect(afterRuns).toBeLessThanOrEqual(40_000);
      expect(await limits()).toMatchObject({ spend_total: afterRuns, held: 0 });
      // Embeddings: held at the input's bytes × 20 against what is left, charged the provider's count.
      const left = 40_000 - afterRuns;
      const embed = (input: string) => json(`${d.urls[1]}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-embed', input }) });
      const over = await embed('x'.repeat(Math.floor(left / 20) + 1));
      expect([over.status, over.body.error?.code, over.body.error?.param]).toEqual([402, 'spend_limit_exceeded', 'spend_total']);
      const fits = await embed('x'.repeat(Math.floor(left / 20)));
      expect(fits.status).toBe(200);
      const charged = Number(fits.headers.get('x-payg-charged'));
      expect(charged).toBe(fits.body.usage.prompt_tokens * 20);
      expect(await balance(d.urls[0], apiKey)).toMatchObject({ balance: 1_000_000_000 - afterRuns - charged, held: 0 });
      expect(await limits()).toMatchObject({ spend_total: afterRuns + charged, held: 0 });
    });

    it('when a key spent before its spend limit was set, then the limit counts that spend; a rotated key\'s successor goes on with the same count', async () => {
      const { accountId } = await fundedAccount(d.urls[0], 1_000_000_000);
      const key = await admin(d.urls[0], `/admin/v1/accounts/${accountId}/api-keys`, {});
      const apiKey = key.body.apiKey as string;
      const call = (url: string, credential: string) => chat(url, credential, { ...hello, max_tokens: 16 }, { headers: { 'x-sim-directive': 'tokens=16' } });
      // No limit yet: served from the funds lease, and still counted as the key's.
      const charges: number[] = [];
      for (let i = 0; i < 3; i++) {
        const answer = await call(d.urls[i % 2], apiKey);
        expect(answer.status).toBe(200);
        charges.push(Number(answer.headers.get('x-payg-charged')));
      }
      const spent = charges.reduce((a, b) => a + b, 0);
      // What the key and the account have spent, as the limits count it (read before any limit is set).
      // The account's held counts what its funds leases still lock (these calls were carved from one); the key's, its own open holds.
      const counted = { spend_per_day: spent, spend_per_month: spent, spend_total: spent, held: 0 };
      const accountCounted = { ...counted, held: expect.any(Number), leased: expect.any(Number) };
      const spendUsage = async (url: string, credential: string) => (await json(`${url}/api/distribution/api-credit/limits`, { headers: { authorization: `Bearer ${credential}` } })).body.spend_usage;
      expect(await spendUsage(d.urls[1], apiKey)).toEqual({ account: accountCounted, key: counted });
      // A day limit that leaves room for less than one more call.
      expect((await patch(`/admin/v1/api-keys/${key.body.apiKeyId}`, { limits: { spend_per_day: spent + charges[0] - 1 } })).status).toBe(200);
      await sleep(CACHE_BOUND_MS + 50);
      expect(await call(d.urls[1], apiKey)).toMatchObject({ status: 402, body: { error: { code: 'spend_limit_exceeded', param: 'spend_per_day' } } });
      // The rotated key keeps the limit and the count: still refused, on either instance.
      const rotated = await admin(d.urls[0], `/admin/v1/api-keys/${key.body.apiKeyId}/rotate`, {});
      expect(rotated.status).toBe(201);
      await sleep(CACHE_BOUND_MS + 50);
      for (const url of d.urls) expect(await call(url, rotated.body.apiKey as string)).toMatchObject({ status: 402, body: { error: { code: 'spend_limit_exceeded', param: 'spend_per_day' } } });
      // The successor shows the chain's count; a second key of the account shows its own (none).
      expect(await spendUsage(d.urls[0], rotated.body.apiKey as string)).toEqual({ account: accountCounted, key: counted });
      const other = await admin(d.urls[0], `/admin/v1/accounts/${accountId}/api-keys`, {});
      expect(await spendUsage(d.urls[0], other.body.apiKey as string)).toEqual({ account: accountCounted, key: { spend_per_day: 0, spend_per_month: 0, spend_total: 0, held: 0 } });
      // Raised by one call's worth, the successor is served again.
      expect((await patch(`/admin/v1/api-keys/${rotated.body.apiKeyId}`, { limits: { spend_per_day: spent + 2 * charges[0] } })).status).toBe(200);
      await sleep(CACHE_BOUND_MS + 50);
      expect((await call(d.urls[0], rotated.body.apiKey as string)).status).toBe(200);
    });

    it('when 1,000 calls race through the instances, then no more are admitted than the request limit and no more is charged than the spend limit', async () => {
      await insideOneWindow(25_000);
      const rate = await limitedKey({}, { account: { requests_per_minute: 100 } });
      const spend = await limitedKey({}, { account: { spend_per_day: 300_000 } });
      const race = (key: string) => Promise.all(Array.from({ length: 1000 }, (_, i) => chat(d.urls[i % 2], key, { ...hello, max_tokens: 20 }, { headers: { 'x-sim-directive': 'tokens=20' } })));
      const [rated, spent] = await Promise.all([race(rate.apiKey), race(spend.apiKey)]);
      expect(rated.filter((r) => r.status === 200)).toHaveLength(100);
      for (const r of rated.filter((x) => x.status !== 200)) expect([r.status, r.body.error?.code]).toEqual([429, 'rate_limit_exceeded']);
      for (const r of spent.filter((x) => x.status !== 200)) expect([r.status, r.body.error?.code]).toEqual([402, 'spend_limit_exceeded']);
      const charged = spent.filter((r) => r.status === 200).reduce((sum, r) => sum + Number(r.headers.get('x-payg-charged') ?? 0), 0);
      const after = await balance(d.urls[0], spend.apiKey);
      expect(after.held).toBe(0);
      expect(1_000_000_000 - after.balance).toBeLessThanOrEqual(300_000);
      expect(1_000_000_000 - after.balance).toBeGreaterThanOrEqual(charged);
    });

    it('when the limits are read, then the key and the account show them, and a bad limit is refused naming it', async () => {
      const { accountId, apiKeyId } = await limitedKey({ tokens_per_minute: 5000 }, { account: { spend_per_month: 7 } });
      const detail = await json(`${d.urls[1]}/admin/v1/accounts/${accountId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(detail.body).toMatchObject({ limits: { spend_per_month: 7 } });
      expect(detail.body.keys.find((k: { apiKeyId: string }) => k.apiKeyId === apiKeyId)).toMatchObject({ limits: { tokens_per_minute: 5000 } });
      expect(await patch(`/admin/v1/api-keys/${apiKeyId}`, { limits: { requests_per_minute: 0 } })).toMatchObject({ status: 400, body: { error: { param: 'limits.requests_per_minute' } } });
      expect(await patch(`/admin/v1/api-keys/${apiKeyId}`, { limits: { per_hour: 1 } })).toMatchObject({ status: 400 });
      expect(await patch('/admin/v1/api-keys/key_none', { limits: {} })).toMatchObject({ status: 404, body: { error: { code: 'api_key_not_found' } } });
    });

    it('when the official SDKs get a 429, then they wait its Retry-After and their retry is served (OpenAI wire headers; the Anthropic shape and headers on /v1/messages)', async () => {
      const openaiKey = await limitedKey({ requests_per_minute: 1 }, { scopes: ['compat'] });
      const anthropicKey = await limitedKey({ requests_per_minute: 1 }, { scopes: ['compat'] });
      // Both keys spend their one request near the end of a window; the SDKs' calls are refused and retried in the next.
      const left = 60_000 - (Date.now() % 60_000);
      await sleep(left >= 3000 ? left - 4000 : left + 56_000);
      expect((await chat(d.urls[0], openaiKey.apiKey, hello)).status).toBe(200);
      const direct = await json(`${d.urls[1]}/v1/messages`, {
        method: 'POST', headers: { 'x-api-key': anthropicKey.apiKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(direct.status).toBe(200);
      expect(direct.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
      const refusedMessage = await json(`${d.urls[1]}/v1/messages`, {
        method: 'POST', headers: { 'x-api-key': anthropicKey.apiKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(refusedMessage.status).toBe(429);
      expect(refusedMessage.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
      expect(refusedMessage.headers.get('anthropic-ratelimit-requests-limit')).toBe('1');
      expect(refusedMessage.headers.get('retry-after')).toEqual(expect.any(String));
      const openai = new OpenAI({ baseURL: `${d.urls[0]}/v1`, apiKey: openaiKey.apiKey, maxRetries: 2 });
      const anthropic = new Anthropic({ baseURL: d.urls[1], apiKey: anthropicKey.apiKey, maxRetries: 2 });
      const started = Date.now();
      const [completion, message] = await Promise.all([
        openai.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 }),
        anthropic.messages.create({ model: 'sim-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      ]);
      expect(completion.object).toBe('chat.completion');
      expect(message.type).toBe('message');
      // Served in the next window: they waited for it rather than failing.
      expect(Date.now() - started).toBeLessThan(20_000);
    }, 120_000);

    itConformsToOpenApi(openApi);
  });
}
