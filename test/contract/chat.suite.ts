// End-to-end chat suite over HTTP: the same cases against the embedded process and the Dapr topology.

import { randomUUID } from 'node:crypto';
import { balance, chat, fundedAccount, hello, json } from '../support/api';
import { eventually } from '../support/eventually';
import { onebitPng } from '../support/media';
import { itConformsToOpenApi, recordAnswers } from '../support/openapi-conformance';
import { ADMIN_TOKEN } from '../support/processes';
import { sseComments, sseData } from '../support/sse';

export interface DeploymentUnderTest {
  url: string;
  /** Restarts (embedded: the process; Dapr: the apps and sidecars) and returns the gateway URL. */
  restart?: () => Promise<string>;
  /** Kills the process that holds the request in flight (kill -9) and starts it again. */
  crashAndRestart?: () => Promise<string>;
  ledgerBalance(accountId: string): Promise<number>;
  close(): Promise<void>;
}

/** Reads an SSE response: the data payloads in order. */
async function sse(response: Response): Promise<string[]> {
  return sseData(await response.text());
}

export function chatSuite(hostName: string, start: () => Promise<DeploymentUnderTest>): void {
  describe(`PAYG chat on the ${hostName} host`, () => {
    let d: DeploymentUnderTest;
    const openApi = recordAnswers(() => d?.url);
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    it('when the catalog and capabilities are read anonymously, then both answer with the default models', async () => {
      const catalog = await json(`${d.url}/api/open/v1/catalog/models`);
      expect(catalog.status).toBe(200);
      const chatModel = catalog.body.data.find((m: { id: string }) => m.id === 'sim-chat');
      expect(chatModel.capabilities_profile_id).toBe(chatModel.profiles[0].profile_id);
      expect(chatModel.pricing_status).toMatchObject({ TEXT_OUTPUT: 'ready' });
      const caps = await json(`${d.url}/api/open/v1/capabilities`);
      expect(caps.status).toBe(200);
      expect(caps.body.candidate_contract).toBe(true);
      const openapi = await json(`${d.url}/api/open/v1/openapi.json`);
      expect(openapi.status).toBe(200);
      expect(Object.keys(openapi.body.paths)).toContain('/api/open/v1/models/{id}/chat');
    });

    it('when the deployment has not enabled the compatibility routes, then each answers 403 compat_disabled in its own shape', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const post = (path: string, body: unknown) => json(`${d.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const completions = await post('/v1/chat/completions', { model: 'sim-chat', ...hello });
      expect(completions.status).toBe(403);
      expect(completions.body.error).toMatchObject({ code: 'compat_disabled', type: 'permission_error', condition: 'deployment' });
      const messages = await post('/v1/messages', { model: 'sim-chat', max_tokens: 8, ...hello });
      expect(messages.body).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'compat_disabled' } });
      const models = await json(`${d.url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}`, 'anthropic-version': '2023-06-01' } });
      expect([models.status, models.body.type, models.body.error.code]).toEqual([403, 'error', 'compat_disabled']);
      const caps = await json(`${d.url}/api/open/v1/capabilities`);
      expect(caps.body.compatibility_gate).toMatchObject({ open: false, conditions: [{ condition: 'deployment', state: 'fails' }, {}, {}, {}] });
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
    });

    it('when the credential is missing, unknown or an OAuth token, then 401, 401 and 403 credential_family_mismatch', async () => {
      expect((await chat(d.url, '', hello, { headers: { authorization: '' } })).status).toBe(401);
      expect((await chat(d.url, 'sk-payg-unknown', hello)).body.error.code).toBe('unauthorized');
      const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
      const refused = await chat(d.url, jwt, hello);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'credential_family_mismatch' });
      expect(refused.body.error.request_id).toBeTruthy();
    });

    it('when a chat succeeds, then it is charged input×100 + output×400 and balance and ledger agree', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, 10_000_000);
      const response = await chat(d.url, apiKey, { ...hello, max_tokens: 8 }, { headers: { 'x-sim-directive': 'tokens=5' } });
      expect(response.status).toBe(200);
      expect(response.body.choices[0].message.content).toBe('tok0 tok1 tok2 tok3 tok4');
      const { prompt_tokens, completion_tokens } = response.body.usage;
      const charge = prompt_tokens * 100 + completion_tokens * 400;
      expect(Number(response.headers.get('x-payg-charged'))).toBe(charge);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000 - charge, held: 0 });
      expect(await eventually(() => d.ledgerBalance(accountId), (b) => b === 10_000_000 - charge)).toBe(10_000_000 - charge);
    });

    it('when max_tokens is given, then the provider is asked for exactly that frozen limit', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const response = await chat(d.url, apiKey, { ...hello, max_tokens: 3 }, { headers: { 'x-sim-directive': 'tokens=40' } });
      expect(response.body.usage.completion_tokens).toBe(3);
      expect(response.body.choices[0].finish_reason).toBe('length');
    });

    it('when any text limit is broken, then 400 with its own code and the balance does not move', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const cases: [unknown, string][] = [
        [{ ...hello, max_tokens: 1_048_577 }, 'max_tokens_out_of_range'],
        [{ ...hello, max_tokens: 8193 }, 'max_tokens_out_of_range'],
        [{ ...hello, max_tokens: -1 }, 'max_tokens_out_of_range'],
        [{ ...hello, max_completion_tokens: 10 }, 'max_completion_tokens_unsupported'],
        [{ ...hello, n: 2 }, 'n_unsupported'],
        [{ ...hello, max_tokens: 10, thinking: { budget_tokens: 11 } }, 'thinking_budget_invalid'],
        [{ ...hello, thinking: { budget_tokens: '5' } }, 'thinking_budget_invalid'],
        [{ ...hello, thinking: { budget_tokens: -1 } }, 'thinking_budget_invalid'],
        [{ messages: [] }, 'invalid_request'],
        [[1, 2], 'invalid_request'],
      ];
      for (const [body, code] of cases) {
        const response = await chat(d.url, apiKey, body);
        expect([response.status, response.body.error?.code]).toEqual([400, code]);
      }
      const nonFinite = await chat(d.url, apiKey, undefined, { raw: '{"messages":[{"role":"user","content":"x"}],"thinking":{"budget_tokens":1e400}}' });
      expect(nonFinite.body.error.code).toBe('thinking_budget_invalid');
      const broken = await chat(d.url, apiKey, undefined, { raw: '{"messages": [' });
      expect([broken.status, broken.body.error.code]).toEqual([400, 'invalid_json']);
      const form = await chat(d.url, apiKey, undefined, { raw: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(form.status).toBe(415);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
    });

    it('when the model is not eligible or unknown, then it is refused before anything is held', async () => {
      const { apiKey } = await fundedAccount(d.url, 1_000_000);
      expect((await chat(d.url, apiKey, hello, { model: 'unpriced-chat' })).body.error.code).toBe('model_not_eligible');
      expect((await chat(d.url, apiKey, hello, { model: 'no-such-model' })).status).toBe(404);
      expect((await chat(d.url, apiKey, hello, { model: '6f1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e02' })).body.error.code).toBe('wire_format_mismatch');
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 1_000_000, held: 0 });
    });

    it('when the body is larger than the effective limit, then 413 and nothing is held', async () => {
      const { apiKey } = await fundedAccount(d.url, 1_000_000_000);
      const big = await chat(d.url, apiKey, { messages: [{ role: 'user', content: 'x'.repeat(300_000) }] });
      expect([big.status, big.body.error?.code]).toEqual([413, 'payload_too_large']);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 1_000_000_000, held: 0 });
    });

    it('when the reservation estimate does not fit, then 402 insufficient_funds and nothing is held', async () => {
      const { apiKey } = await fundedAccount(d.url, 1000);
      const response = await chat(d.url, apiKey, hello);
      expect([response.status, response.body.error.code]).toEqual([402, 'insufficient_funds']);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 1000, held: 0 });
    });

    it('when the provider fails before any output, then the hold is released and nothing is charged', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const failed = await chat(d.url, apiKey, hello, { headers: { 'x-sim-directive': 'fail-before-output' } });
      expect([failed.status, failed.body.error.code]).toEqual([502, 'provider_error']);
      const rejected = await chat(d.url, apiKey, hello, { headers: { 'x-sim-directive': 'reject' } });
      expect(rejected.body.error.code).toBe('provider_rejected');
      const streamed = await chat(d.url, apiKey, { ...hello, stream: true }, { headers: { 'x-sim-directive': 'fail-before-output' } });
      expect(streamed.status).toBe(502);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      // Each release bill says what its answer said: the provider's failure, or its rejection of the request.
      const byRequest = new Map([[failed.headers.get('x-request-id'), 'provider_failed'], [rejected.headers.get('x-request-id'), 'provider_rejected'], [streamed.headers.get('x-request-id'), 'provider_failed']]);
      const releases = await eventually(() => json(`${d.url}/api/distribution/api-credit/bills/page?kind=release`, { headers: { authorization: `Bearer ${apiKey}` } }), (r) => r.body.items?.length === 3);
      expect(new Map(releases.body.items.map((item: { requestId: string; reference: string }) => [item.requestId, item.reference]))).toEqual(byRequest);
    });

    it('when streaming, then chunks arrive as SSE ending with [DONE], usage only on request, and the charge matches', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const plain = await fetch(`${d.url}/api/open/v1/models/sim-chat/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': 'tokens=4' },
        body: JSON.stringify({ ...hello, stream: true }),
      });
      expect(plain.headers.get('content-type')).toMatch(/text\/event-stream/);
      const events = await sse(plain);
      expect(events[events.length - 1]).toBe('[DONE]');
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toContain('tok3');
      expect(chunks.every((c) => c.model === 'sim-chat' && !c.usage)).toBe(true);
      const withUsage = await fetch(`${d.url}/api/open/v1/models/sim-chat/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': 'tokens=4' },
        body: JSON.stringify({ ...hello, stream: true, stream_options: { include_usage: true } }),
      });
      const usage = (await sse(withUsage)).filter((e) => e !== '[DONE]').map((e) => JSON.parse(e)).find((c) => c.usage)?.usage;
      expect(usage).toMatchObject({ completion_tokens: 4 });
      const perChat = usage.prompt_tokens * 100 + usage.completion_tokens * 400;
      expect(await eventually(() => balance(d.url, apiKey), (b) => b.held === 0)).toMatchObject({ balance: 10_000_000 - 2 * perChat });
    });

    it('when the client disconnects mid-stream, then the upstream call stops and only what was produced is charged', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const controller = new AbortController();
      const response = await fetch(`${d.url}/api/open/v1/models/sim-chat/chat`, {
        method: 'POST',
        signal: controller.signal,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': 'tokens=200; stream-delay=20' },
        body: JSON.stringify({ ...hello, stream: true, max_tokens: 200 }),
      });
      const reader = response.body!.getReader();
      let received = '';
      while ((received.match(/tok/g) ?? []).length < 3) received += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      // Under a funds lease nothing shows as held: wait for the charge itself (the settle lands after the client left).
      const after = await eventually(() => balance(d.url, apiKey), (b) => b.held === 0 && b.balance < 10_000_000);
      const charged = 10_000_000 - after.balance;
      expect(charged).toBeGreaterThan(0);
      expect(charged).toBeLessThan(Math.ceil(200 / 4) * 100 + 100 * 400); // far less than 200 output tokens
    });

    it('when the provider hangs past the timeout, then 504 and the hold is released', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const response = await chat(d.url, apiKey, hello, { headers: { 'x-sim-directive': 'hang' } });
      expect([response.status, response.body.error.code]).toEqual([504, 'provider_timeout']);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
    });

    it('when a model is served by an OpenAI-compatible upstream over HTTP, then chat and stream work through the adapter', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const response = await chat(d.url, apiKey, { ...hello, max_tokens: 6 }, { model: 'upstream-chat' });
      expect(response.status).toBe(200);
      expect(response.body.usage.completion_tokens).toBe(6);
      const streamed = await fetch(`${d.url}/api/open/v1/models/upstream-chat/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...hello, stream: true, max_tokens: 4 }),
      });
      const events = await sse(streamed);
      expect(events[events.length - 1]).toBe('[DONE]');
    });

    it('when an upstream states a token count no call can have (negative, 1e15), then the call fails as the provider\'s error, nothing is priced from it, and the account goes on working', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000_000);
      const stream = (model: string) => fetch(`${d.url}/api/open/v1/models/${model}/chat`, {
        method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...hello, stream: true, max_tokens: 4 }),
      });
      // Stated before any output (a JSON answer, an Anthropic stream's message_start): 502, nothing charged.
      for (const model of ['misreporting-chat', 'misreporting-anthropic-chat']) {
        const answer = await chat(d.url, apiKey, { ...hello, max_tokens: 4 }, { model });
        expect([model, answer.status, answer.body.error?.code]).toEqual([model, 502, 'provider_error']);
      }
      const anthropicStream = await stream('misreporting-anthropic-chat');
      // Its message_start is its preamble: the stream is refused before anything is relayed.
      expect([anthropicStream.status, ((await anthropicStream.json()) as { error: { code: string } }).error.code]).toEqual([502, 'provider_error']);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000_000, held: 0 });
      // Stated at the end of an OpenAI stream, after its output: the stream ends in an error and is charged as one cut there (what it relayed).
      const openAiStream = await stream('misreporting-chat');
      expect(openAiStream.status).toBe(200);
      const text = await openAiStream.text();
      expect(text).toContain('provider_error');
      const charged = Number(/^: x-payg-charged (\d+)$/m.exec(text)?.[1]);
      expect(charged).toBeGreaterThan(0);
      expect(charged).toBeLessThan(1_000_000);
      expect(await eventually(() => balance(d.url, apiKey), (b) => b.held === 0)).toMatchObject({ balance: 10_000_000_000 - charged });
      expect((await chat(d.url, apiKey, hello)).status).toBe(200);
      expect((await chat(d.url, apiKey, hello, { model: 'upstream-anthropic-chat' })).status).toBe(200);
    });

    it('when an upstream states more output than the max_tokens it was asked for, then the call is billed for max_tokens at most, and a tokens_per_minute counts what was billed', async () => {
      // Rate windows are whole minutes: start well inside one.
      const left = 60_000 - (Date.now() % 60_000);
      if (left < 8000) await new Promise((resolve) => setTimeout(resolve, left + 100));
      const { accountId, apiKey } = await fundedAccount(d.url, 10_000_000_000);
      const limits = await json(`${d.url}/admin/v1/accounts/${accountId}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ limits: { tokens_per_minute: 1_000_000 } }) });
      expect(limits.status).toBe(200);
      // The gateway reads an account's limits within a second.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const answer = await chat(d.url, apiKey, { ...hello, max_tokens: 4 }, { model: 'overstating-chat' });
      // The answer relays what the provider said; the bill is what it could have produced.
      expect([answer.status, answer.body.usage.completion_tokens]).toEqual([200, 1000]);
      const prompt = answer.body.usage.prompt_tokens as number;
      const rows = await eventually(
        () => json(`${d.url}/api/distribution/api-credit/usage/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } }),
        (r) => r.body.items?.length === 2,
      );
      expect(rows.body.items.find((row: { unit: string }) => row.unit === 'TEXT_OUTPUT')).toMatchObject({ quantity: 4 });
      const counted = await eventually(
        () => json(`${d.url}/api/distribution/api-credit/limits`, { headers: { authorization: `Bearer ${apiKey}` } }),
        (r) => r.body.rate_usage?.account.tokens === prompt + 4,
        5000,
      );
      expect(counted.body.rate_usage.account).toEqual({ requests: 1, tokens: prompt + 4 });
    });

    it('when a stream is charged, then its charge comes before its end as an SSE comment (`: x-payg-charged <n>`) on both wires, equal to its usage rows', async () => {
      for (const path of ['chat', 'chat/anthropic']) {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const response = await fetch(`${d.url}/api/open/v1/models/sim-chat/${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ ...hello, stream: true, max_tokens: 3 }),
        });
        const text = await response.text();
        const comments = sseComments(text);
        expect(comments).toHaveLength(1);
        const charged = Number(/^ ?x-payg-charged (\d+)$/.exec(comments[0])?.[1]);
        expect(charged).toBeGreaterThan(0);
        // Nothing but the wire's end after it.
        const after = text.slice(text.indexOf(': x-payg-charged'));
        expect(after.replace(/^: x-payg-charged \d+\n\n/, '')).toBe(path === 'chat' ? 'data: [DONE]\n\n' : '');
        const rows = await eventually(
          () => json(`${d.url}/api/distribution/api-credit/usage/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } }),
          (r) => r.body.items?.length === 2,
        );
        expect(rows.body.items.reduce((sum: number, row: { charged: number }) => sum + row.charged, 0)).toBe(charged);
      }
    });

    describe('prompt-cache units (upstreams reporting cached prompt tokens)', () => {
      type UsageRow = { unit: string; quantity: number; unitPrice: number; cost: number; charged: number; requestId: string; reasoningTokens?: number };
      /** The usage rows of a fresh account's one call, by unit, once the ledger has them. */
      const rowsOf = async (apiKey: string, units: number): Promise<Record<string, UsageRow>> => {
        const page = await eventually(
          () => json(`${d.url}/api/distribution/api-credit/usage/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } }),
          (r) => r.body.items?.length === units,
        );
        return Object.fromEntries((page.body.items as UsageRow[]).map((row) => [row.unit, row]));
      };
      const post = (model: string, path: 'chat' | 'chat/anthropic', apiKey: string, body: unknown) =>
        json(`${d.url}/api/open/v1/models/${model}/${path}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
      const quantities = (rows: Record<string, UsageRow>) => Object.fromEntries(Object.entries(rows).map(([unit, row]) => [unit, [row.quantity, row.unitPrice]]));
      const chargedOf = (rows: Record<string, UsageRow>) => Object.values(rows).reduce((sum, row) => sum + row.charged, 0);

      it('when an OpenAI upstream read part of the prompt from its cache and reasoned, then the cached part is billed at the cache-read price, the reasoning as output (recorded apart), and the answer says both', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const answer = await post('cached-chat', 'chat', apiKey, { ...hello, max_tokens: 4 });
        expect(answer.status).toBe(200);
        expect(answer.body.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 40 }, completion_tokens: 4, completion_tokens_details: { reasoning_tokens: 2 } });
        const rows = await rowsOf(apiKey, 3);
        expect(quantities(rows)).toEqual({ TEXT_INPUT: [answer.body.usage.prompt_tokens - 40, 1000], TEXT_INPUT_CACHE_READ: [40, 100], TEXT_OUTPUT: [4, 4000] });
        expect([rows.TEXT_OUTPUT.reasoningTokens, rows.TEXT_INPUT.reasoningTokens]).toEqual([2, undefined]);
        const csv = await fetch(`${d.url}/api/distribution/api-credit/usage/export`, { headers: { authorization: `Bearer ${apiKey}` } }).then((r) => r.text());
        const [header, ...lines] = csv.trim().split('\n');
        const column = header.split(',').indexOf('reasoningTokens');
        expect(column).toBeGreaterThan(0);
        expect(lines.map((line) => line.split(',')[column]).sort()).toEqual(['', '', '2']);
        for (const row of Object.values(rows)) expect(row.cost).toBe(row.quantity * row.unitPrice);
        expect(Number(answer.headers.get('x-payg-charged'))).toBe(chargedOf(rows));
      });

      it('when an Anthropic upstream read from and wrote to its cache, then each is billed at its unit (one-hour writes apart), on its own wire and translated to OpenAI\'s', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const answer = await post('cached-anthropic-chat', 'chat/anthropic', apiKey, { ...hello, max_tokens: 4 });
        expect(answer.status).toBe(200);
        expect(answer.body.usage).toMatchObject({ cache_read_input_tokens: 100, cache_creation_input_tokens: 50, cache_creation: { ephemeral_5m_input_tokens: 30, ephemeral_1h_input_tokens: 20 }, output_tokens: 4 });
        const rows = await rowsOf(apiKey, 5);
        expect(quantities(rows)).toEqual({
          TEXT_INPUT: [answer.body.usage.input_tokens, 1000], TEXT_INPUT_CACHE_READ: [100, 100], TEXT_INPUT_CACHE_WRITE: [30, 1250], TEXT_INPUT_CACHE_WRITE_1H: [20, 2000], TEXT_OUTPUT: [4, 4000],
        });
        expect(Number(answer.headers.get('x-payg-charged'))).toBe(chargedOf(rows));

        // The same upstream answering an OpenAI-wire request: the cached part in the answer's details.
        const other = await fundedAccount(d.url, 10_000_000);
        const translated = await post('cached-anthropic-chat', 'chat', other.apiKey, { ...hello, max_tokens: 4 });
        expect(translated.status).toBe(200);
        expect(translated.body.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 100 }, completion_tokens: 4 });
        const translatedRows = await rowsOf(other.apiKey, 5);
        expect(translated.body.usage.prompt_tokens).toBe(translatedRows.TEXT_INPUT.quantity + 150);
        expect(Number(translated.headers.get('x-payg-charged'))).toBe(chargedOf(translatedRows));
      });

      it('when an Anthropic stream reports cache counts, then the stream is billed by unit like the JSON answer', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const streamed = await fetch(`${d.url}/api/open/v1/models/cached-anthropic-chat/chat/anthropic`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ ...hello, stream: true, max_tokens: 3 }),
        });
        expect(streamed.status).toBe(200);
        await streamed.text();
        const rows = await rowsOf(apiKey, 5);
        expect(Object.fromEntries(Object.entries(quantities(rows)).filter(([unit]) => unit !== 'TEXT_INPUT'))).toEqual({
          TEXT_INPUT_CACHE_READ: [100, 100], TEXT_INPUT_CACHE_WRITE: [30, 1250], TEXT_INPUT_CACHE_WRITE_1H: [20, 2000], TEXT_OUTPUT: [3, 4000],
        });
      });

      /** A stream's SSE text, asked on the model's route of one wire. */
      const stream = (model: string, path: 'chat' | 'chat/anthropic', apiKey: string, body: object) =>
        fetch(`${d.url}/api/open/v1/models/${model}/${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ ...body, stream: true }),
        }).then((r) => r.text());
      /** A fresh account's one stream: its SSE text and its usage rows by unit. */
      const streamedRows = async (model: string, path: 'chat' | 'chat/anthropic', units: number, body: object = { ...hello, max_tokens: 4 }) => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const text = await stream(model, path, apiKey, body);
        return { text, rows: await rowsOf(apiKey, units) };
      };

      it('when a stream did not ask for usage, then the upstream was asked all the same and its exact counts are billed, cache units included, with no usage chunk relayed', async () => {
        const { text, rows } = await streamedRows('cached-chat', 'chat', 3);
        expect(sseData(text).filter((e) => e !== '[DONE]').map((e) => JSON.parse(e)).some((chunk) => 'usage' in chunk)).toBe(false);
        expect(sseData(text).at(-1)).toBe('[DONE]');
        expect(quantities(rows)).toMatchObject({ TEXT_INPUT_CACHE_READ: [40, 100], TEXT_OUTPUT: [4, 4000] });
      });

      it('when an OpenAI stream is cut before its usage, then its prompt is counted by the profile\'s tokenizer, at the lowest prompt price, and costs less than the same stream completed', async () => {
        const whole = await streamedRows('tokenized-chat', 'chat', 3);
        // OpenAI counts a user message "hello" 8 prompt tokens; this upstream read 5 of them from its cache.
        expect(quantities(whole.rows)).toEqual({ TEXT_INPUT: [3, 1000], TEXT_INPUT_CACHE_READ: [5, 100], TEXT_OUTPUT: [4, 4000] });
        const cut = await streamedRows('tokenized-cut-chat', 'chat', 2);
        expect(sseData(cut.text).at(-1)).not.toBe('[DONE]');
        expect(JSON.parse(sseData(cut.text).at(-1)!)).toMatchObject({ error: { code: 'provider_error' } });
        // How much the cache served is unknown: the whole prompt at the cache-read price, the lowest.
        expect(quantities(cut.rows)).toEqual({ TEXT_INPUT: [8, 100], TEXT_OUTPUT: [3, 4000] });
        expect(chargedOf(cut.rows)).toBeLessThan(chargedOf(whole.rows));
      });

      it('when an OpenAI stream without a tokenizer is cut, then its prompt is the byte estimate of its messages, which is what this upstream counts, never more', async () => {
        const whole = await streamedRows('upstream-chat', 'chat', 2);
        const cut = await streamedRows('upstream-cut-chat', 'chat', 2);
        const prompt = Math.ceil(Buffer.byteLength(JSON.stringify(hello.messages)) / 4);
        expect([quantities(whole.rows), quantities(cut.rows)]).toEqual([{ TEXT_INPUT: [prompt, 100], TEXT_OUTPUT: [4, 400] }, { TEXT_INPUT: [prompt, 100], TEXT_OUTPUT: [3, 400] }]);
      });

      it('when an OpenAI stream with an inline image is cut before its usage, then the image is charged what OpenAI\'s rule computes for its pixels on top of the text\'s count, at the lowest prompt price', async () => {
        // A 1568×1568 PNG in about 500 characters: OpenAI fits it to 768×768, 4 tiles, 4 × 170 + 85 tokens.
        const url = `data:image/png;base64,${onebitPng(1568, 1568).toString('base64')}`;
        const messages = [{ role: 'user', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url } }] }];
        const body = { messages, max_tokens: 4 };
        // By the tokenizer, which counts the text (this upstream counts the text alone too, whole; 5 of it from its cache).
        const whole = await streamedRows('tokenized-chat', 'chat', 3, body);
        const text = whole.rows.TEXT_INPUT.quantity + 5;
        const cut = await streamedRows('tokenized-cut-chat', 'chat', 2, body);
        expect(quantities(cut.rows)).toEqual({ TEXT_INPUT: [text + 765, 100], TEXT_OUTPUT: [3, 4000] });
        // By the bytes of the messages, less the image's characters, which are not what it costs.
        const bytes = await streamedRows('upstream-cut-chat', 'chat', 2, body);
        const textBytes = Buffer.byteLength(JSON.stringify(messages)) - url.length;
        expect(quantities(bytes.rows)).toEqual({ TEXT_INPUT: [Math.ceil(textBytes / 4) + 765, 100], TEXT_OUTPUT: [3, 400] });
      });

      it.each(['chat/anthropic', 'chat'] as const)('when an Anthropic stream is cut, then it is billed the prompt Anthropic stated at its start, each cache unit at its price, and the output sent (route %s)', async (route) => {
        const whole = await streamedRows('cached-anthropic-chat', route, 5);
        const cut = await streamedRows('cached-anthropic-cut-chat', route, 5);
        expect(cut.text).toContain(route === 'chat' ? '"error"' : 'event: error');
        const prompt = (rows: Record<string, UsageRow>) => Object.fromEntries(Object.entries(quantities(rows)).filter(([unit]) => unit !== 'TEXT_OUTPUT'));
        expect(prompt(cut.rows)).toEqual(prompt(whole.rows));
        expect(prompt(cut.rows)).toMatchObject({ TEXT_INPUT_CACHE_READ: [100, 100], TEXT_INPUT_CACHE_WRITE: [30, 1250], TEXT_INPUT_CACHE_WRITE_1H: [20, 2000] });
        expect([quantities(whole.rows).TEXT_OUTPUT, quantities(cut.rows).TEXT_OUTPUT]).toEqual([[4, 4000], [2, 4000]]);
        expect(chargedOf(cut.rows)).toBeLessThan(chargedOf(whole.rows));
      });

      it('when the model does not price the cache units, then cache tokens are billed at its input price, never more', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const answer = await post('cache-unpriced-chat', 'chat/anthropic', apiKey, { ...hello, max_tokens: 4 });
        expect(answer.status).toBe(200);
        const rows = await rowsOf(apiKey, 5);
        expect(quantities(rows)).toEqual({
          TEXT_INPUT: [answer.body.usage.input_tokens, 100], TEXT_INPUT_CACHE_READ: [100, 100], TEXT_INPUT_CACHE_WRITE: [30, 100], TEXT_INPUT_CACHE_WRITE_1H: [20, 100], TEXT_OUTPUT: [4, 400],
        });
      });
    });

    it('when 40 chats race on a balance that covers at most 5, then at most 5 succeed, the rest 402, and balance = credits − Σ charges = ledger', async () => {
      // Each chat produces its full 1,000 output tokens: it reserves ≈406,000 and is charged ≈401,000,
      // so the balance covers at most 5 chats however the 40 interleave.
      const credits = 2_100_000;
      const { accountId, apiKey } = await fundedAccount(d.url, credits);
      const responses = await Promise.all(Array.from({ length: 40 }, () => chat(d.url, apiKey, { ...hello, max_tokens: 1000 }, { headers: { 'x-sim-directive': 'tokens=1000' } })));
      const ok = responses.filter((r) => r.status === 200);
      expect(ok.length).toBeGreaterThan(0);
      expect(ok.length).toBeLessThanOrEqual(5);
      expect(responses.filter((r) => r.status !== 200).every((r) => r.status === 402)).toBe(true);
      const charged = ok.reduce((sum, r) => sum + Number(r.headers.get('x-payg-charged')), 0);
      const after = await balance(d.url, apiKey);
      expect(after).toMatchObject({ balance: credits - charged, held: 0 });
      expect(await eventually(() => d.ledgerBalance(accountId), (b) => b === credits - charged)).toBe(credits - charged);
    });

    it('when the deployment restarts, then no money and no open hold is lost, and the hold still expires', async () => {
      if (!d.crashAndRestart) return;
      const { accountId, apiKey } = await fundedAccount(d.url, 10_000_000);
      await chat(d.url, apiKey, hello, { headers: { 'x-sim-directive': 'tokens=3' } });
      const before = await balance(d.url, apiKey);
      // A request in flight (the provider hangs) holds funds when the process is killed.
      const inFlight = chat(d.url, apiKey, { ...hello, stream: true }, { headers: { 'x-sim-directive': 'hang' } }).catch(() => undefined);
      // Held, or carved from the gateway's funds lease (Dapr: GATEWAY_FUNDS_LEASE on).
      await eventually(() => balance(d.url, apiKey), (b) => b.held + (b.leased ?? 0) > 0);
      d.url = await d.crashAndRestart();
      await inFlight;
      const after = await balance(d.url, apiKey);
      expect(after.balance).toBe(before.balance);
      // The hold (or lease) survived the crash, and its expiry reminder releases it without a charge.
      const released = await eventually(() => balance(d.url, apiKey), (b) => b.held + (b.leased ?? 0) === 0, 30_000);
      expect(released).toMatchObject({ balance: before.balance, held: 0 });
      expect(released.leased ?? 0).toBe(0);
      expect(await eventually(() => d.ledgerBalance(accountId), (b) => b === before.balance)).toBe(before.balance);
      if (d.restart) {
        d.url = await d.restart();
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: before.balance, held: 0 });
      }
    });

    it('when the same account is used after all of this, then its key still works and ids are not reused', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const one = await chat(d.url, apiKey, hello, { headers: { 'x-request-id': `req-${randomUUID()}` } });
      expect(one.status).toBe(200);
    });

    itConformsToOpenApi(openApi);
  });
}
