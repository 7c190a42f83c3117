// Whether a refusal can be retried, as the answers tell the official SDKs (docs/api.md, "Retries"):
// x-should-retry: false on a 409 or 5xx no retry of the same request can change, nothing on one
// a retry may fix; and the real Python SDKs, with their default retries, sending such a refusal
// once and a retryable one three times.

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { IMAGE_TEST_ENV } from '../contract/images.suite';
import { chat, fundedAccount, hello, image, imageTask, picture } from '../support/api';
import { CHECKOUT_SECRET, createOrder } from '../support/orders';
import { ROOT, startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(120_000);
const execFileAsync = promisify(execFile);

let gateway: GatewayProcess;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-retry-'));
  gateway = await startGateway({ ...IMAGE_TEST_ENV, GATEWAY_CHECKOUT_SECRET: CHECKOUT_SECRET, GATEWAY_DATA_DIR: join(dir, 'data') });
});
afterAll(() => gateway?.stop());

const hint = (answer: { headers: Headers }) => answer.headers.get('x-should-retry');

describe('x-should-retry', () => {
  it('when the same Idempotency-Key comes with another payload (image, order), then 409 says x-should-retry: false; the answers before it say nothing', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 100_000_000);
    const key = crypto.randomUUID();
    const made = await image(gateway.url, apiKey, picture, { key });
    const reused = await image(gateway.url, apiKey, { ...picture, prompt: 'a blue circle' }, { key });
    expect([made.status, hint(made), reused.status, reused.body.error.code, hint(reused)]).toEqual([200, null, 409, 'idempotency_key_reused', 'false']);
    const ordered = await createOrder(gateway.url, apiKey, { amount: 1000 }, { 'idempotency-key': key });
    const another = await createOrder(gateway.url, apiKey, { amount: 2000 }, { 'idempotency-key': key });
    expect([ordered.status, hint(ordered), another.status, another.body.error.code, hint(another)]).toEqual([201, null, 409, 'idempotency_key_reused', 'false']);
  });

  it('when an image task failed for good, then its 502 says x-should-retry: false; while unresolved its 503 says nothing, nor does a chat\'s 502', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 100_000_000);
    const first = await image(gateway.url, apiKey, picture, { headers: { 'x-sim-directive': 'fail-before-output' } });
    expect([first.status, first.body.status, hint(first)]).toEqual([503, 'unresolved', null]);
    const failed = await imageTask(gateway.url, apiKey, first.body.taskId);
    expect([failed.status, failed.body.status, failed.body.error.code, hint(failed)]).toEqual([502, 'failed', 'provider_error', 'false']);
    const chatFailed = await chat(gateway.url, apiKey, { ...hello, max_tokens: 2 }, { headers: { 'x-sim-directive': 'fail-before-output' } });
    expect([chatFailed.status, chatFailed.body.error.code, hint(chatFailed)]).toEqual([502, 'provider_error', null]);
  });

  it('the Python SDKs (openai, anthropic) with their default retries send a 409 idempotency_key_reused once, and a chat\'s 502 three times', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 100_000_000);
    const imageKey = crypto.randomUUID();
    const orderKey = crypto.randomUUID();
    expect((await image(gateway.url, apiKey, picture, { key: imageKey })).status).toBe(200);
    expect((await createOrder(gateway.url, apiKey, { amount: 1000 }, { 'idempotency-key': orderKey })).status).toBe(201);
    const python = (await execFileAsync('bash', ['scripts/ensure-python-sdks.sh'], { cwd: ROOT })).stdout.trim();
    const run = await execFileAsync(python, ['test/python/retry_sdks.py'], { cwd: ROOT, env: { ...process.env, GATEWAY_URL: gateway.url, API_KEY: apiKey, IMAGE_KEY: imageKey, ORDER_KEY: orderKey } });
    expect(JSON.parse(run.stdout)).toEqual({
      image_reused: { error: 'ConflictError', status: 409, code: 'idempotency_key_reused', requests: 1 },
      order_reused: { error: 'ConflictError', status: 409, code: 'idempotency_key_reused', requests: 1 },
      chat_failed: { error: 'InternalServerError', status: 502, code: 'provider_error', requests: 3 },
    });
  });
});
