// End-to-end image suite over HTTP (UNKNOWN_IMAGE_V1): the same cases against the embedded
// process and the Dapr topology. Each row of the image state table and error table (docs/images.md) has a
// case; after every path the balance the gateway reports and the ledger agree.
//
// The deployment runs in test mode with a short deadline (DEADLINE_MS) and provider timeout
// (PROVIDER_TIMEOUT_MS), and a catalog with models served by a local upstream (test/support).

import { randomUUID } from 'node:crypto';
import type { AccountLedgerView } from '../../services/ledger/entries';
import { admin, apiKeyFor, balance, fundedAccount, image, imageTask, picture } from '../support/api';
import { passes } from '../support/eventually';
import type { Upstream } from '../support/upstream';
import { itConformsToOpenApi, recordAnswers } from '../support/openapi-conformance';

export const IMAGE_TEST_ENV = {
  GATEWAY_TEST_MODE: 'true',
  GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS: '6000',
  GATEWAY_PROVIDER_TIMEOUT_MS: '1000',
  GATEWAY_IMAGE_ARTIFACT_WAIT_MS: '20000',
};
// Long enough for a gateway restart on a loaded machine to fit inside it (the restart case below).
const DEADLINE_MS = Number(IMAGE_TEST_ENV.GATEWAY_IMAGE_UNKNOWN_DEADLINE_MS);
const PRICE = 40_000_000;
const FUNDS = 100_000_000;

export interface ImageDeploymentUnderTest {
  url: string;
  upstream: Upstream;
  /** Restarts the gateway (embedded: the process; Dapr: the gateway app); returns its URL. */
  restartGateway(): Promise<string>;
  /** Rewrites the catalog with these models withdrawn and restarts the gateway; returns its URL. */
  withdraw(modelIds: string[]): Promise<string>;
  ledger(accountId: string): Promise<AccountLedgerView>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function imageSuite(hostName: string, start: () => Promise<ImageDeploymentUnderTest>): void {
  describe(`PAYG images (UNKNOWN_IMAGE_V1) on the ${hostName} host`, () => {
    let d: ImageDeploymentUnderTest;
    const openApi = recordAnswers(() => d?.url);
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    /**
     * The gateway's balance has nothing held and equals the ledger's; `rows`: the ledger also holds
     * this many usage events and bills (waited for: events reach the ledger a moment after their
     * turn, each topic on its own, and a release or a usage row moves no balance). Returns the
     * ledger view.
     */
    async function agree(accountId: string, apiKey: string, expected: number, rows: { usage?: number; bills?: number } = {}): Promise<AccountLedgerView> {
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: expected, held: 0, available: expected });
      return passes(async () => {
        const ledger = await d.ledger(accountId);
        expect(ledger.balance).toBe(expected);
        if (rows.usage !== undefined) expect(ledger.usage).toBe(rows.usage);
        if (rows.bills !== undefined) expect(ledger.bills).toBe(rows.bills);
        return ledger;
      });
    }

    /** The reasons on the account's release bills (the ledger may take a moment on Dapr). */
    async function releaseReasons(apiKey: string, count: number): Promise<unknown[]> {
      return passes(async () => {
        const page = await fetch(`${d.url}/api/distribution/api-credit/bills/page?kind=release`, { headers: { authorization: `Bearer ${apiKey}` } });
        expect(page.status).toBe(200);
        const reasons = ((await page.json()) as { items: { reference?: unknown }[] }).items.map((item) => item.reference);
        expect(reasons).toHaveLength(count);
        return reasons;
      });
    }

    it('when the request is refused (key missing, not canonical, n≠1, bad prompt, OAuth, unpriced, chat model, bad directive), then a clear 4xx and nothing is held', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const cases: Array<[Parameters<typeof image>[3] & { body?: unknown }, number, string]> = [
        [{ key: null }, 400, 'idempotency_key_required'],
        [{ key: 'not-a-uuid' }, 400, 'idempotency_key_invalid'],
        [{ key: randomUUID().toUpperCase() }, 400, 'idempotency_key_invalid'],
        [{ key: `{${randomUUID()}}` }, 400, 'idempotency_key_invalid'],
        [{ key: randomUUID().replaceAll('-', '') }, 400, 'idempotency_key_invalid'],
        [{ body: { ...picture, n: 2 } }, 400, 'n_unsupported'],
        [{ body: { ...picture, n: '1' } }, 400, 'n_unsupported'],
        [{ body: { prompt: '' } }, 400, 'invalid_request'],
        [{ body: { prompt: 7 } }, 400, 'invalid_request'],
        [{ body: { prompt: 'x', response_format: 'gif' } }, 400, 'invalid_request'],
        [{ body: [picture] }, 400, 'invalid_request'],
        [{ raw: '{"prompt":' }, 400, 'invalid_json'],
        [{ model: 'unpriced-image' }, 403, 'model_not_eligible'],
        [{ model: 'sim-chat' }, 400, 'wire_format_mismatch'],
        [{ model: 'no-such-model' }, 404, 'model_not_found'],
        [{ headers: { 'x-sim-directive': 'explode' } }, 400, 'invalid_request'],
      ];
      for (const [options, status, code] of cases) {
        const response = await image(d.url, apiKey, options.body ?? picture, options);
        expect([options, response.status, response.body.error?.code]).toEqual([options, status, code]);
        expect(response.body.error.request_id).toBeTruthy();
        expect(response.body.taskId).toBeUndefined();
      }
      const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
      expect((await image(d.url, jwt, picture)).body.error.code).toBe('credential_family_mismatch');
      await agree(accountId, apiKey, FUNDS, { usage: 0 });
    });

    it('when an image is generated, then 200 with the image as asked, one IMAGE charge, and a retry (quoted key) returns the same task without a second charge', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const key = randomUUID();
      const first = await image(d.url, apiKey, picture, { key });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ status: 'succeeded', model: 'sim-image', charged: PRICE });
      expect(first.body.taskId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(first.body.data).toHaveLength(1);
      expect(Buffer.from(first.body.data[0].b64_json, 'base64').subarray(1, 4).toString()).toBe('PNG');
      expect(first.headers.get('x-payg-charged')).toBe(String(PRICE));
      const retry = await image(d.url, apiKey, { response_format: 'b64_json', prompt: 'a red square' }, { key: `"${key}"` });
      expect(retry.status).toBe(200);
      expect(retry.body).toEqual(first.body);
      // A replay: the task's one charge again, nothing new (checked by the ledger below).
      expect([first.headers.get('x-payg-replayed'), retry.headers.get('x-payg-replayed'), retry.headers.get('x-payg-charged')]).toEqual([null, 'true', String(PRICE)]);
      const asUrl = await image(d.url, apiKey, { prompt: 'a blue square' });
      expect(asUrl.status).toBe(200);
      expect(asUrl.body.data[0].url).toMatch(/^data:image\/png;base64,/);
      expect(asUrl.body.data[0].b64_json).toBeUndefined();
      const recovered = await imageTask(d.url, apiKey, first.body.taskId);
      expect(recovered.status).toBe(200);
      expect(recovered.body.data).toEqual(first.body.data);
      await agree(accountId, apiKey, FUNDS - 2 * PRICE, { usage: 2 });
    });

    it('when an image comes from an OpenAI-compatible upstream, then it is fetched over HTTP with the task id as its idempotency reference', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const before = d.upstream.imageRequests;
      const response = await image(d.url, apiKey, { prompt: 'a harbour', size: '256x256' }, { model: 'upstream-image' });
      expect(response.status).toBe(200);
      expect(response.body.data[0].url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\//);
      expect(d.upstream.imageRequests - before).toBe(1);
      expect(d.upstream.lastImageBody).toMatchObject({ model: 'up-image', prompt: 'a harbour', n: 1, size: '256x256', response_format: 'url' });
      expect(d.upstream.lastImageHeaders?.['idempotency-key']).toBe(response.body.taskId);
      await agree(accountId, apiKey, FUNDS - PRICE);
    });

    it('when the balance does not cover the image, then 402 and no task; once funded, the same key makes the image', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, PRICE - 1);
      const key = randomUUID();
      const refused = await image(d.url, apiKey, picture, { key });
      expect([refused.status, refused.body.error.code, refused.body.taskId]).toEqual([402, 'insufficient_funds', undefined]);
      expect(await balance(d.url, apiKey)).toMatchObject({ held: 0, balance: PRICE - 1 });
      await admin(d.url, `/admin/v1/accounts/${accountId}/credits`, { amount: PRICE, reference: 'top-up' });
      const made = await image(d.url, apiKey, picture, { key });
      expect([made.status, made.body.status]).toEqual([200, 'succeeded']);
      await agree(accountId, apiKey, PRICE - 1);
    });

    it('when the same key comes with another payload, then 409 idempotency_key_reused, nothing held, nothing called', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const key = randomUUID();
      expect((await image(d.url, apiKey, picture, { key })).status).toBe(200);
      const before = d.upstream.imageRequests;
      for (const [body, model] of [[{ ...picture, prompt: 'another' }, 'sim-image'], [picture, 'upstream-image']] as const) {
        const reused = await image(d.url, apiKey, body, { key, model });
        expect(reused.status).toBe(409);
        expect(reused.body.error.code).toBe('idempotency_key_reused');
      }
      expect(d.upstream.imageRequests).toBe(before);
      await agree(accountId, apiKey, FUNDS - PRICE);
    });

    it('when 20 identical requests with one key arrive at once, then the provider is called once, charged once, and all get the same task', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const key = randomUUID();
      const before = d.upstream.imageRequests;
      const responses = await Promise.all(Array.from({ length: 20 }, () => image(d.url, apiKey, picture, { key, model: 'slow-upstream-image' })));
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(new Set(responses.map((r) => r.body.taskId)).size).toBe(1);
      expect(new Set(responses.map((r) => JSON.stringify(r.body.data))).size).toBe(1);
      expect(d.upstream.imageRequests - before).toBe(1);
      await agree(accountId, apiKey, FUNDS - PRICE, { usage: 1 });
    });

    it('when a client retries with its own X-Request-Id repeated (one key, while the first runs), then the provider is still called once: only the first request owns the task', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const key = randomUUID();
      const headers = { 'x-request-id': `client-${randomUUID()}` };
      const before = d.upstream.imageRequests;
      const first = image(d.url, apiKey, picture, { key, model: 'slow-upstream-image', headers });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const retries = await Promise.all(Array.from({ length: 5 }, () => image(d.url, apiKey, picture, { key, model: 'slow-upstream-image', headers })));
      const responses = [await first, ...retries];
      expect(responses.map((r) => [r.status, r.headers.get('x-payg-replayed')])).toEqual([[200, null], ...Array(5).fill([200, 'true'])]);
      expect(new Set(responses.map((r) => r.body.taskId)).size).toBe(1);
      expect(d.upstream.imageRequests - before).toBe(1);
      await agree(accountId, apiKey, FUNDS - PRICE, { usage: 1 });
    });

    it('when the provider confirms a rejection, then 400 failed with the taskId, the hold released, and a retry answers the same', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const key = randomUUID();
      const headers = { 'x-sim-directive': 'reject' };
      const failed = await image(d.url, apiKey, picture, { key, headers });
      expect(failed.status).toBe(400);
      expect(failed.body).toMatchObject({ status: 'failed', error: { code: 'provider_rejected' } });
      expect(failed.body.taskId).toBeTruthy();
      expect(failed.body.data).toBeUndefined();
      const retry = await image(d.url, apiKey, picture, { key, headers });
      expect([retry.status, retry.body.taskId, retry.body.status]).toEqual([400, failed.body.taskId, 'failed']);
      expect((await imageTask(d.url, apiKey, failed.body.taskId)).status).toBe(400);
      await agree(accountId, apiKey, FUNDS, { usage: 0 });
      // The bill says what the answer says: the provider rejected the request.
      expect(await releaseReasons(apiKey, 1)).toEqual(['provider_rejected']);
    });

    it('when the provider never answers, then 503 unresolved with taskId and Retry-After; only the original key sees the task; past the deadline it is UNKNOWN, released, and the provider is not called again', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const otherKey = await apiKeyFor(d.url, accountId);
      const stranger = await fundedAccount(d.url, FUNDS);
      const key = randomUUID();
      const before = d.upstream.imageRequests;
      const unresolved = await image(d.url, apiKey, picture, { key, model: 'hanging-upstream-image' });
      expect(unresolved.status).toBe(503);
      expect(unresolved.body).toMatchObject({ status: 'unresolved', error: { code: 'image_unresolved' } });
      expect(unresolved.headers.get('retry-after')).toBe('5');
      expect(JSON.stringify(unresolved.body)).not.toMatch(/b64_json|"url"|"data"/);
      const { taskId } = unresolved.body;
      expect((await balance(d.url, apiKey)).held).toBe(PRICE);

      const retry = await image(d.url, apiKey, picture, { key, model: 'hanging-upstream-image' });
      expect([retry.status, retry.body.taskId, retry.headers.get('x-payg-replayed')]).toEqual([503, taskId, 'true']);
      expect((await imageTask(d.url, apiKey, taskId, 'hanging-upstream-image')).status).toBe(503);
      // Another key of the same owner, another owner, another model path, an unknown id: nothing.
      for (const [k, id, model] of [[otherKey, taskId, 'hanging-upstream-image'], [stranger.apiKey, taskId, 'hanging-upstream-image'], [apiKey, taskId, 'sim-image'], [apiKey, randomUUID(), 'hanging-upstream-image'], [apiKey, 'not-a-task', 'hanging-upstream-image']]) {
        const hidden = await imageTask(d.url, k, id, model);
        expect([hidden.status, hidden.body.error.code, hidden.body.taskId]).toEqual([404, 'not_found', undefined]);
      }
      // The same Idempotency-Key under another API key is another scope: another task.
      const switched = await image(d.url, otherKey, picture, { key, model: 'hanging-upstream-image' });
      expect(switched.status).toBe(503);
      expect(switched.body.taskId).not.toBe(taskId);
      expect(d.upstream.imageRequests - before).toBe(2);

      await sleep(DEADLINE_MS);
      const unknown = await passes(async () => {
        const response = await imageTask(d.url, apiKey, taskId, 'hanging-upstream-image');
        expect(response.body.status).toBe('unknown');
        return response;
      });
      expect(unknown.status).toBe(503);
      expect(unknown.body).toMatchObject({ taskId, resolution: 'image_unknown_resolved', error: { code: 'image_unknown' } });
      expect(unknown.headers.get('retry-after')).toBeTruthy();
      expect(JSON.stringify(unknown.body)).not.toMatch(/b64_json|"url"|"data"/);
      expect((await image(d.url, apiKey, picture, { key, model: 'hanging-upstream-image' })).body.status).toBe('unknown');
      await passes(async () => expect((await imageTask(d.url, otherKey, switched.body.taskId, 'hanging-upstream-image')).body.status).toBe('unknown'));
      expect(d.upstream.imageRequests - before).toBe(2);
      await agree(accountId, apiKey, FUNDS, { usage: 0 }); // no zero usage invented
    });

    it('when a genuine artifact arrives after UNKNOWN, then it is released only with a zero-charge IMAGE event in the ledger, and UNKNOWN stays the record', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const headers = { 'x-sim-directive': `late-artifact=${DEADLINE_MS + 2500}` };
      const first = await image(d.url, apiKey, picture, { headers });
      expect(first.status).toBe(503);
      const { taskId } = first.body;
      const unknown = await passes(async () => {
        const response = await imageTask(d.url, apiKey, taskId);
        expect(response.body.status).toBe('unknown');
        return response;
      }, DEADLINE_MS + 10_000);
      expect(unknown.status).toBe(503);
      expect(await balance(d.url, apiKey)).toMatchObject({ held: 0, balance: FUNDS });
      const late = await passes(async () => {
        const response = await imageTask(d.url, apiKey, taskId);
        expect(response.status).toBe(200);
        return response;
      }, 15_000);
      expect(late.body).toMatchObject({ taskId, status: 'unknown', resolution: 'image_unknown_resolved', late_artifact: true, charged: 0 });
      expect(late.body.data[0].b64_json).toBeTruthy();
      await agree(accountId, apiKey, FUNDS, { usage: 1 }); // the real IMAGE quantity-1 event, charged 0
    });

    it('when the provider failed before any output, then 503 at first and the recovery query, asking the provider, resolves it as failed (the provider\'s failure) and releases the hold', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const first = await image(d.url, apiKey, picture, { headers: { 'x-sim-directive': 'fail-before-output' } });
      expect([first.status, first.body.status]).toEqual([503, 'unresolved']);
      const recovered = await imageTask(d.url, apiKey, first.body.taskId);
      // The provider's failure, not the request's: 502 provider_error, as the same failure answered at once would be.
      expect([recovered.status, recovered.body.status, recovered.body.error.code]).toEqual([502, 'failed', 'provider_error']);
      expect(recovered.body.error.message).toMatch(/^the provider reports the image failed: /);
      expect((await imageTask(d.url, apiKey, first.body.taskId)).status).toBe(502);
      await agree(accountId, apiKey, FUNDS);
      // Released as the provider's failure, as the 502 says, not as a rejection of the request.
      expect(await releaseReasons(apiKey, 1)).toEqual(['provider_failed']);
    });

    it('when the gateway restarts while the provider is working, then the recovery query asks the provider and delivers the image once', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const first = await image(d.url, apiKey, picture, { headers: { 'x-sim-directive': 'late-artifact=1500' } });
      expect(first.status).toBe(503);
      d.url = await d.restartGateway();
      const pending = await imageTask(d.url, apiKey, first.body.taskId);
      if (pending.status === 503) expect(pending.body.status).toBe('unresolved');
      const done = await passes(async () => {
        const response = await imageTask(d.url, apiKey, first.body.taskId);
        expect(response.status).toBe(200);
        return response;
      }, 10_000);
      expect(done.body).toMatchObject({ status: 'succeeded', charged: PRICE });
      await agree(accountId, apiKey, FUNDS - PRICE, { usage: 1 });
    });

    it('when the model is withdrawn and the gateway restarted, then new images are refused but retries (same key and payload) and recovery still answer, and the deadline still fires once', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, FUNDS);
      const hangKey = randomUUID();
      const hang = { 'x-sim-directive': 'hang' };
      const first = await image(d.url, apiKey, picture, { key: hangKey, headers: hang });
      expect(first.status).toBe(503);
      const madeKey = randomUUID();
      const made = await image(d.url, apiKey, picture, { key: madeKey });
      expect(made.status).toBe(200);
      d.url = await d.withdraw(['sim-image']);
      expect((await image(d.url, apiKey, picture)).body.error.code).toBe('model_not_found');
      // A client that lost the first answer has only its key: the retry is a replay, charged nothing new.
      const replayed = await image(d.url, apiKey, picture, { key: madeKey });
      expect([replayed.status, replayed.headers.get('x-payg-replayed'), replayed.headers.get('x-payg-charged')]).toEqual([200, 'true', String(PRICE)]);
      expect(replayed.body).toEqual(made.body);
      const stillOpen = await image(d.url, apiKey, picture, { key: hangKey, headers: hang });
      expect([stillOpen.status, stillOpen.body.taskId, stillOpen.headers.get('x-payg-replayed')]).toEqual([503, first.body.taskId, 'true']);
      // The same key with another payload is not a retry: the model is refused, as for a new key.
      expect((await image(d.url, apiKey, { ...picture, prompt: 'another' }, { key: madeKey })).body.error.code).toBe('model_not_found');
      const during = await imageTask(d.url, apiKey, first.body.taskId);
      expect([during.status, during.body.taskId]).toEqual([503, first.body.taskId]);
      const unknown = await passes(async () => {
        const response = await imageTask(d.url, apiKey, first.body.taskId);
        expect(response.body.status).toBe('unknown');
        return response;
      }, DEADLINE_MS + 10_000);
      expect(unknown.status).toBe(503);
      await agree(accountId, apiKey, FUNDS - PRICE, { bills: 3 }); // the credit, the image's charge and one release
      // And no second one.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await agree(accountId, apiKey, FUNDS - PRICE)).bills).toBe(3);
      d.url = await d.withdraw([]);
    });

    itConformsToOpenApi(openApi);
  });
}
