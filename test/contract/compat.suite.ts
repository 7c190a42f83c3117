// Issue 5 end to end, the same cases against the embedded process and the Dapr topology: the
// Anthropic variant of the chat route, wire translation over real HTTP, the compatibility routes
// behind their gate (driven by the official openai and @anthropic-ai/sdk packages), the OAuth
// member family and its funding pool, and the capability gates.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { admin, balance, chat, fundedAccount, hello, image, json, picture } from '../support/api';
import { eventually } from '../support/eventually';
import type { OAuthIssuer } from '../support/oauth';
import type { Upstream } from '../support/upstream';
import { onebitPng, pdf } from '../support/media';
import { itConformsToOpenApi, recordAnswers } from '../support/openapi-conformance';
import { ROOT } from '../support/processes';
import { sseEvents as parseSseEvents, type SseEvent } from '../support/sse';

export const COMPAT_TEST_ENV = {
  GATEWAY_COMPAT_ENABLED: 'true',
  // agent_run's channel is deliberately not accepted: its delivery gate stays closed.
  GATEWAY_CAPABILITY_DELIVERY: 'signing:response_header,evidence:evidence_export,media:artifact_url',
};

export interface CompatDeployment {
  url: string;
  upstream: Upstream;
  issuer: OAuthIssuer;
  ledgerBalance(accountId: string, pool: string): Promise<number>;
  /** Every app's /metrics (embedded: the one process; Dapr: gateway, actors and ledger apps). */
  metricsUrls: string[];
  close(): Promise<void>;
}

const PRICE = { input: 100, output: 400 };
/** sim-embed's TEXT_INPUT price (catalog/default-catalog.json), nano-USD per prompt token. */
const EMBED_PRICE = 20;
const cost = (input: number, output: number) => input * PRICE.input + output * PRICE.output;

async function sseEvents(response: Response): Promise<SseEvent[]> {
  return parseSseEvents(await response.text());
}

function post(url: string, credential: Record<string, string>, body: unknown) {
  return json(url, { method: 'POST', headers: { 'content-type': 'application/json', ...credential }, body: JSON.stringify(body) });
}

const execFileAsync = promisify(execFile);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const anthropicHello = { max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] };

export function compatSuite(hostName: string, start: () => Promise<CompatDeployment>): void {
  describe(`compatibility, Anthropic wire, OAuth and capability gates on the ${hostName} host`, () => {
    let d: CompatDeployment;
    const openApi = recordAnswers(() => d?.url);
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    async function keyWith(accountId: string, scopes: string[]): Promise<string> {
      const key = await admin(d.url, `/admin/v1/accounts/${accountId}/api-keys`, { scopes });
      if (key.status !== 201) throw new Error(`api key: ${key.status} ${JSON.stringify(key.body)}`);
      return key.body.apiKey;
    }

    async function compatAccount(amount = 50_000_000): Promise<{ accountId: string; apiKey: string; compatKey: string }> {
      const account = await fundedAccount(d.url, amount);
      return { ...account, compatKey: await keyWith(account.accountId, ['compat']) };
    }

    async function memberAccount(pool3: number, member: number) {
      const account = await fundedAccount(d.url, pool3);
      if (member > 0) {
        const credit = await admin(d.url, `/admin/v1/accounts/${account.accountId}/credits`, { amount: member, reference: 'entitlement', pool: 'member' });
        expect(credit.status).toBe(200);
      }
      const token = await d.issuer.mint({ sub: 'member-1', account: account.accountId, scope: 'chat' });
      return { ...account, token };
    }

    async function pools(accountId: string, apiKey: string, token?: string) {
      const pool3 = (await balance(d.url, apiKey)).balance;
      const member = token ? (await json(`${d.url}/api/member/v1/entitlement`, { headers: bearer(token) })).body.balance : undefined;
      return { pool3, member };
    }

    // ---- 1. The Anthropic variant of the chat route -------------------------------------------

    describe('POST /api/open/v1/models/{id}/chat/anthropic', () => {
      it('when called with x-api-key, then it answers a Messages object and bills like the chat route', async () => {
        const { accountId, apiKey } = await fundedAccount(d.url, 10_000_000);
        const response = await post(`${d.url}/api/open/v1/models/sim-chat/chat/anthropic`, { 'x-api-key': apiKey, 'x-sim-directive': 'tokens=5' }, anthropicHello);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ type: 'message', role: 'assistant', model: 'sim-chat', stop_reason: 'end_turn', content: [{ type: 'text', text: 'tok0 tok1 tok2 tok3 tok4' }] });
        const { input_tokens, output_tokens } = response.body.usage;
        expect(output_tokens).toBe(5);
        expect(Number(response.headers.get('x-payg-charged'))).toBe(cost(input_tokens, 5));
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000 - cost(input_tokens, 5), held: 0 });
        await eventually(() => d.ledgerBalance(accountId, 'pool-3'), (b) => b === 10_000_000 - cost(input_tokens, 5));
      });

      it('when streamed, then the events follow Anthropic\'s sequence and the charge is the final usage', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const response = await fetch(`${d.url}/api/open/v1/models/sim-chat/chat/anthropic`, {
          method: 'POST',
          headers: { ...bearer(apiKey), 'content-type': 'application/json', 'x-sim-directive': 'tokens=3' },
          body: JSON.stringify({ ...anthropicHello, stream: true }),
        });
        expect(response.headers.get('content-type')).toContain('text/event-stream');
        const events = await sseEvents(response);
        const names = events.map((e) => e.event).filter((n) => n !== 'ping');
        expect(names).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
        for (const e of events) expect(JSON.parse(e.data).type).toBe(e.event);
        const start = JSON.parse(events[0].data);
        expect(start.message.model).toBe('sim-chat');
        const text = events.filter((e) => e.event === 'content_block_delta').map((e) => JSON.parse(e.data).delta.text).join('');
        expect(text).toBe('tok0 tok1 tok2');
        const delta = JSON.parse(events.find((e) => e.event === 'message_delta')!.data);
        expect(delta.delta.stop_reason).toBe('end_turn');
        const charged = cost(start.message.usage.input_tokens, delta.usage.output_tokens);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000 - charged, held: 0 });
      });

      it('when a limit is broken or the profile speaks the other wire, then 400 with its code and nothing moves', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const url = (id: string) => `${d.url}/api/open/v1/models/${id}/chat/anthropic`;
        const cases: [string, unknown, string][] = [
          ['sim-chat', { ...anthropicHello, max_tokens: 8193 }, 'max_tokens_out_of_range'],
          ['sim-chat', { ...anthropicHello, thinking: { type: 'enabled', budget_tokens: 9 } }, 'thinking_budget_invalid'],
          ['sim-chat', { max_tokens: 8, messages: [] }, 'invalid_request'],
          ['6f1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e01', anthropicHello, 'wire_format_mismatch'],
        ];
        for (const [id, body, code] of cases) {
          const response = await post(url(id), bearer(apiKey), body);
          expect([response.status, response.body.error?.code]).toEqual([400, code]);
        }
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      });
    });

    describe('the Anthropic wire: native upstream, cut streams, unbillable fields', () => {
      it('when a model is served by the Anthropic adapter, then JSON and stream go to its /v1/messages natively and bill its usage', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const url = `${d.url}/api/open/v1/models/upstream-anthropic-chat/chat/anthropic`;
        const response = await post(url, { 'x-api-key': apiKey }, { ...anthropicHello, max_tokens: 3, top_k: 5, stop_sequences: ['END'] });
        expect(response.status).toBe(200);
        expect(d.upstream.lastMessagesBody).toMatchObject({ model: 'up-claude', max_tokens: 3, top_k: 5, stop_sequences: ['END'], messages: [{ role: 'user', content: 'hello' }] });
        expect(response.body).toMatchObject({ type: 'message', model: 'upstream-anthropic-chat', stop_reason: 'max_tokens', content: [{ type: 'text', text: 'tok0 tok1 tok2' }] });
        const first = cost(response.body.usage.input_tokens, 3);
        const stream = await fetch(url, { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ ...anthropicHello, max_tokens: 2, stream: true }) });
        const events = await sseEvents(stream);
        expect(events.map((e) => e.event).filter((n) => n !== 'ping')).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
        const start = JSON.parse(events[0].data);
        expect(start.message.model).toBe('upstream-anthropic-chat');
        const second = cost(start.message.usage.input_tokens, JSON.parse(events.find((e) => e.event === 'message_delta')!.data).usage.output_tokens);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000 - first - second, held: 0 });
      });

      it('when the client leaves an Anthropic stream midway, then what was relayed is charged and nothing stays held', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const abort = new AbortController();
        const response = await fetch(`${d.url}/api/open/v1/models/sim-chat/chat/anthropic`, {
          method: 'POST',
          headers: { ...bearer(apiKey), 'content-type': 'application/json', 'x-sim-directive': 'tokens=200;stream-delay=20' },
          body: JSON.stringify({ ...anthropicHello, max_tokens: 200, stream: true }),
          signal: abort.signal,
        });
        const reader = response.body!.getReader();
        let text = '';
        while ((text.match(/content_block_delta/g) ?? []).length < 6) text += new TextDecoder().decode((await reader.read()).value);
        abort.abort();
        // Under a funds lease nothing shows as held: wait for the charge itself (the settle lands after the client left).
        const after = await eventually(() => balance(d.url, apiKey), (b) => b.held === 0 && b.balance < 10_000_000);
        // At least the six relayed deltas and the reported input; never the whole 200-token hold.
        expect(after.balance).toBeLessThanOrEqual(10_000_000 - 6 * PRICE.output);
        expect(after.balance).toBeGreaterThan(10_000_000 - cost(100, 200));
      });

      it('when a request carries what the estimate cannot bound, then 400 naming it and nothing is held or sent', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const calls = d.upstream.messagesRequests;
        const url = `${d.url}/api/open/v1/models/upstream-anthropic-chat/chat/anthropic`;
        const cases: [unknown, string][] = [
          [{ ...anthropicHello, mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'x' }] }, 'mcp_servers'],
          [{ ...anthropicHello, service_tier: 'auto' }, 'service_tier'],
          [{ ...anthropicHello, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0].type'],
          [{ max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://img.example/x.png' } }] }] }, 'messages[0].content[0].source'],
          // The same, nested in a tool result, and a file stored with the provider.
          [{ max_tokens: 8, messages: [{ role: 'user', content: 'look' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'fetch', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'here' }, { type: 'image', source: { type: 'url', url: 'https://img.example/x.png' } }] }] }] }, 'messages[2].content[0].content[1].source'],
          [{ max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_011' } }] }] }, 'messages[0].content[0].source'],
          [{ max_tokens: 8, messages: [{ role: 'robot', content: 'hello' }] }, 'messages.0.role'],
        ];
        for (const [body, param] of cases) {
          const response = await post(url, bearer(apiKey), body);
          expect([response.status, response.body.error.code, response.body.error.param]).toEqual([400, 'invalid_request', param]);
        }
        expect(d.upstream.messagesRequests).toBe(calls);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      });

      it('when a request offers an Anthropic-defined client tool, then the 400 says why that tool, not a server tool\'s fees', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const url = `${d.url}/api/open/v1/models/upstream-anthropic-chat/chat/anthropic`;
        const server = await post(url, bearer(apiKey), { ...anthropicHello, tools: [{ type: 'web_search_20250305', name: 'web_search' }] });
        expect(server.body.error.message).toContain('server tool "web_search_20250305"');
        for (const type of ['bash_20250124', 'text_editor_20250429', 'computer_20250124']) {
          const response = await post(url, bearer(apiKey), { ...anthropicHello, tools: [{ type, name: 'tool' }] });
          expect([response.status, response.body.error.param]).toEqual([400, 'tools[0].type']);
          expect(response.body.error.message).toContain(`Anthropic-defined tool "${type}"`);
          expect(response.body.error.message).toContain('define the tool as a custom tool');
        }
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      });
    });

    describe('the OpenAI wire: fields the catalog does not price', () => {
      it('when a chat asks for a dearer service tier, web search, audio or content the provider fetches, then 400 naming the field and nothing is held or sent; the standard tier and inline images pass', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const calls = d.upstream.requests;
        const openAiHello = { messages: [{ role: 'user', content: 'hello' }], max_tokens: 4 };
        const cases: [unknown, string][] = [
          [{ ...openAiHello, service_tier: 'priority' }, 'service_tier'],
          [{ ...openAiHello, service_tier: 'flex' }, 'service_tier'],
          [{ ...openAiHello, web_search_options: {} }, 'web_search_options'],
          [{ ...openAiHello, modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
          [{ ...openAiHello, modalities: ['audio'] }, 'modalities'],
          // Content the provider fetches or prices apart: its tokens are not bounded by the body's bytes.
          [{ ...openAiHello, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url: 'https://img.example/x.png' } }] }] }, 'messages[0].content[1].image_url.url'],
          [{ ...openAiHello, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: 'https://img.example/x.png' }] }] }, 'messages[0].content[0].image_url'],
          [{ ...openAiHello, messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] }, 'messages[0].content[0].file.file_id'],
          [{ ...openAiHello, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }] }, 'messages[0].content[0].input_audio'],
        ];
        for (const [body, param] of cases) {
          const response = await chat(d.url, apiKey, body, { model: 'upstream-chat' });
          expect([response.status, response.body.error.code, response.body.error.param]).toEqual([400, 'invalid_request', param]);
        }
        expect(d.upstream.requests).toBe(calls);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
        const standard = await chat(d.url, apiKey, { ...openAiHello, service_tier: 'default', modalities: ['text'] }, { model: 'upstream-chat' });
        expect(standard.status).toBe(200);
        expect(d.upstream.lastBody).toMatchObject({ service_tier: 'default', modalities: ['text'] });
        const inline = [{ type: 'text', text: 'what is it?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }];
        const inlined = await chat(d.url, apiKey, { ...openAiHello, messages: [{ role: 'user', content: inline }] }, { model: 'upstream-chat' });
        expect(inlined.status).toBe(200);
        expect(d.upstream.lastBody).toMatchObject({ messages: [{ role: 'user', content: inline }] });
      });
    });

    describe('inline images and PDFs: held by their pixels and pages, not their bytes', () => {
      // What the hold was before images were bounded by their pixels: every body byte a prompt token, plus max_tokens.
      const byteEstimate = (body: unknown, maxTokens: number) => cost(Buffer.byteLength(JSON.stringify(body)), maxTokens);
      const base64 = (bytes: Buffer) => bytes.toString('base64');
      const topUp = async (accountId: string, amount: number) => {
        expect((await admin(d.url, `/admin/v1/accounts/${accountId}/credits`, { amount, reference: `top-up-${amount}` })).status).toBe(200);
      };

      it('when a tiny PNG of 1568×1568 goes to an Anthropic upstream and the balance covers only its bytes, then 402 before any upstream call; topped up, it is served and charged the upstream\'s count', async () => {
        const data = base64(onebitPng(1568, 1568));
        expect(data.length).toBeLessThan(1000);
        const body = { max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }, { type: 'text', text: 'what is it?' }] }] };
        const url = `${d.url}/api/open/v1/models/upstream-anthropic-chat/chat/anthropic`;
        const funded = byteEstimate(body, 8);
        const { accountId, apiKey } = await fundedAccount(d.url, funded);
        const calls = d.upstream.messagesRequests;
        const refused = await post(url, { 'x-api-key': apiKey }, body);
        expect([refused.status, refused.body.error.code]).toEqual([402, 'insufficient_funds']);
        expect(d.upstream.messagesRequests).toBe(calls);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: funded, held: 0 });
        // Anthropic's most for one image, 1,600 tokens, in place of the bytes that carry it.
        await topUp(accountId, (1600 - data.length) * PRICE.input);
        const served = await post(url, { 'x-api-key': apiKey }, body);
        expect(served.status).toBe(200);
        expect(d.upstream.messagesRequests).toBe(calls + 1);
        const charge = cost(served.body.usage.input_tokens, served.body.usage.output_tokens);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: funded + (1600 - data.length) * PRICE.input - charge, held: 0 });
      });

      it('when a PDF goes to an Anthropic upstream, then each page it has is held at an image and 3,000 tokens of text', async () => {
        const data = base64(pdf(2));
        const body = { max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } }, { type: 'text', text: 'sum it up' }] }] };
        const url = `${d.url}/api/open/v1/models/upstream-anthropic-chat/chat/anthropic`;
        const held = byteEstimate(body, 8) + (2 * (1600 + 3000) - data.length) * PRICE.input;
        const { accountId, apiKey } = await fundedAccount(d.url, held - 1);
        const calls = d.upstream.messagesRequests;
        expect((await post(url, { 'x-api-key': apiKey }, body)).status).toBe(402);
        expect(d.upstream.messagesRequests).toBe(calls);
        await topUp(accountId, 1);
        expect((await post(url, { 'x-api-key': apiKey }, body)).status).toBe(200);
      });

      it('when a wide PNG goes to an OpenAI upstream, then it is held at OpenAI\'s 8 tiles (8 × 170 + 85); with detail "low" at 85, within its bytes', async () => {
        const url = `data:image/png;base64,${base64(onebitPng(2048, 768))}`;
        const body = (detail: string) => ({ max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url, detail } }] }] });
        const held = byteEstimate(body('high'), 4) + (8 * 170 + 85 - url.length) * PRICE.input;
        const { accountId, apiKey } = await fundedAccount(d.url, held - 1);
        const calls = d.upstream.requests;
        const refused = await chat(d.url, apiKey, body('high'), { model: 'upstream-chat' });
        expect([refused.status, refused.body.error.code]).toEqual([402, 'insufficient_funds']);
        expect(d.upstream.requests).toBe(calls);
        const low = await chat(d.url, apiKey, body('low'), { model: 'upstream-chat' });
        expect(low.status).toBe(200);
        const charge = cost(low.body.usage.prompt_tokens, low.body.usage.completion_tokens);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: held - 1 - charge, held: 0 });
        await topUp(accountId, charge + 1);
        expect((await chat(d.url, apiKey, body('high'), { model: 'upstream-chat' })).status).toBe(200);
        expect(d.upstream.requests).toBe(calls + 2);
      });
    });

    // ---- 4. Wire translation over real HTTP -----------------------------------------------------

    describe('a request served by a profile of the other wire', () => {
      it('when an OpenAI-wire request is exact, then the Anthropic upstream serves it and the answer is OpenAI-shaped', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const before = d.upstream.messagesRequests;
        const body = { messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello' }], max_tokens: 4, temperature: 0.5, stop: ['END'] };
        const response = await chat(d.url, apiKey, body, { model: 'upstream-anthropic-chat' });
        expect(response.status).toBe(200);
        expect(d.upstream.messagesRequests).toBe(before + 1);
        expect(d.upstream.lastMessagesBody).toMatchObject({ model: 'up-claude', system: 'be brief', max_tokens: 4, temperature: 0.5, stop_sequences: ['END'], messages: [{ role: 'user', content: 'hello' }] });
        expect(response.body).toMatchObject({ object: 'chat.completion', model: 'upstream-anthropic-chat', choices: [{ message: { content: 'tok0 tok1 tok2 tok3' }, finish_reason: 'length' }] });
        const { prompt_tokens, completion_tokens } = response.body.usage;
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000 - cost(prompt_tokens, completion_tokens) });

        const stream = await fetch(`${d.url}/api/open/v1/models/upstream-anthropic-chat/chat`, {
          method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }),
        });
        const data = (await sseEvents(stream)).map((e) => e.data);
        expect(data.at(-1)).toBe('[DONE]');
        const content = data.slice(0, -1).map((x) => JSON.parse(x).choices[0]?.delta?.content ?? '').join('');
        expect(content).toBe('tok0 tok1 tok2 tok3');
      });

      it('when an Anthropic-wire request is exact, then the OpenAI upstream serves it and the answer is a Messages object', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const response = await post(`${d.url}/api/open/v1/models/upstream-chat/chat/anthropic`, bearer(apiKey), { ...anthropicHello, max_tokens: 3, system: 'be brief' });
        expect(response.status).toBe(200);
        expect(d.upstream.lastBody).toMatchObject({ model: 'up-model', max_tokens: 3, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello' }] });
        expect(response.body).toMatchObject({ type: 'message', model: 'upstream-chat', stop_reason: 'max_tokens', content: [{ type: 'text', text: 'tok0 tok1 tok2' }] });
        const stream = await fetch(`${d.url}/api/open/v1/models/upstream-chat/chat/anthropic`, {
          method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ ...anthropicHello, max_tokens: 3, stream: true }),
        });
        const events = await sseEvents(stream);
        expect(events[0].event).toBe('message_start');
        expect(events.at(-1)?.event).toBe('message_stop');
        const delta = JSON.parse(events.find((e) => e.event === 'message_delta')!.data);
        expect(delta).toMatchObject({ delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 3 } });
      });

      it('when the translation would not be exact, then 400 wire_translation_inexact names the field and nothing is held or sent', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const openAiCalls = d.upstream.requests;
        const anthropicCalls = d.upstream.messagesRequests;
        const toAnthropic = await chat(d.url, apiKey, { ...hello, logprobs: true }, { model: 'upstream-anthropic-chat' });
        expect(toAnthropic.status).toBe(400);
        expect(toAnthropic.body.error).toMatchObject({ code: 'wire_translation_inexact', param: 'logprobs' });
        const hot = await chat(d.url, apiKey, { ...hello, temperature: 1.5 }, { model: 'upstream-anthropic-chat' });
        expect(hot.body.error).toMatchObject({ code: 'wire_translation_inexact', param: 'temperature' });
        const toOpenAi = await post(`${d.url}/api/open/v1/models/upstream-chat/chat/anthropic`, bearer(apiKey), { ...anthropicHello, top_k: 5 });
        expect(toOpenAi.body.error).toMatchObject({ code: 'wire_translation_inexact', param: 'top_k' });
        expect([d.upstream.requests, d.upstream.messagesRequests]).toEqual([openAiCalls, anthropicCalls]);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      });
    });

    // ---- 2. The compatibility gate ---------------------------------------------------------------

    describe('the compatibility gate', () => {
      it('when the key lacks the compat scope, then 403 compat_scope_required in each route\'s shape', async () => {
        const { apiKey } = await fundedAccount(d.url, 10_000_000);
        const openAi = await post(`${d.url}/v1/chat/completions`, bearer(apiKey), { model: 'sim-chat', ...hello });
        expect(openAi.status).toBe(403);
        expect(openAi.body.error).toMatchObject({ code: 'compat_scope_required', type: 'permission_error', condition: 'scope' });
        const messages = await post(`${d.url}/v1/messages`, { 'x-api-key': apiKey }, { model: 'sim-chat', ...anthropicHello });
        expect(messages.status).toBe(403);
        expect(messages.body).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'compat_scope_required' } });
        const models = await json(`${d.url}/v1/models`, { headers: bearer(apiKey) });
        expect([models.status, models.body.error.code]).toEqual([403, 'compat_scope_required']);
      });

      it('when an OpenAI-wire route is sent the key as x-api-key, then it is not read there: 401 without Authorization, and beside a Bearer key it names no second credential', async () => {
        const { compatKey } = await compatAccount();
        for (const [path, body] of [['/v1/chat/completions', { model: 'sim-chat', ...hello }], ['/v1/embeddings', { model: 'sim-embed', input: 'hi' }]] as const) {
          const alone = await post(`${d.url}${path}`, { 'x-api-key': compatKey }, body);
          expect([path, alone.status, alone.body.error?.code]).toEqual([path, 401, 'unauthorized']);
          const beside = await post(`${d.url}${path}`, { ...bearer(compatKey), 'x-api-key': 'sk-payg-not-a-key' }, body);
          expect([path, beside.status]).toEqual([path, 200]);
        }
      });

      it('when the model has no eligible price, then 403 compat_model_not_eligible; an unknown model is 404', async () => {
        const { compatKey, apiKey } = await compatAccount();
        const unpriced = await post(`${d.url}/v1/chat/completions`, bearer(compatKey), { model: 'unpriced-chat', ...hello });
        expect([unpriced.status, unpriced.body.error.code]).toEqual([403, 'compat_model_not_eligible']);
        const unknown = await post(`${d.url}/v1/messages`, bearer(compatKey), { model: 'no-such-model', ...anthropicHello });
        expect([unknown.status, unknown.body.error.type]).toEqual([404, 'not_found_error']);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 50_000_000, held: 0 });
      });

      it('when the account has no available balance, then 403 compat_account_unfunded', async () => {
        const { compatKey } = await compatAccount(0);
        for (const [path, body] of [['/v1/chat/completions', { model: 'sim-chat', ...hello }], ['/v1/messages', { model: 'sim-chat', ...anthropicHello }]] as const) {
          const response = await post(`${d.url}${path}`, bearer(compatKey), body);
          expect(response.status).toBe(403);
          expect(JSON.stringify(response.body)).toContain('compat_account_unfunded');
        }
        const models = await json(`${d.url}/v1/models`, { headers: bearer(compatKey) });
        expect([models.status, models.body.error.code]).toEqual([403, 'compat_account_unfunded']);
      });

      it('when an OAuth token is sent, then 403 credential_family_mismatch and no pool moves', async () => {
        const { accountId, apiKey, token } = await memberAccount(10_000_000, 10_000_000);
        await keyWith(accountId, ['compat']);
        const before = await pools(accountId, apiKey, token);
        const openAi = await post(`${d.url}/v1/chat/completions`, bearer(token), { model: 'sim-chat', ...hello });
        expect([openAi.status, openAi.body.error.code]).toEqual([403, 'credential_family_mismatch']);
        const messages = await post(`${d.url}/v1/messages`, bearer(token), { model: 'sim-chat', ...anthropicHello });
        expect([messages.status, messages.body.error.code]).toEqual([403, 'credential_family_mismatch']);
        expect(await pools(accountId, apiKey, token)).toEqual(before);
      });

      it('when the gate passes, then a call costs exactly what the open route charges, from pool-3', async () => {
        const { accountId, apiKey, compatKey } = await compatAccount(10_000_000);
        const open = await chat(d.url, apiKey, { ...hello, max_tokens: 6 }, { headers: { 'x-sim-directive': 'tokens=6' } });
        const compat = await post(`${d.url}/v1/chat/completions`, { ...bearer(compatKey), 'x-sim-directive': 'tokens=6' }, { model: 'sim-chat', ...hello, max_tokens: 6 });
        expect(compat.status).toBe(200);
        expect(compat.headers.get('x-payg-charged')).toBe(open.headers.get('x-payg-charged'));
        const charged = 2 * Number(open.headers.get('x-payg-charged'));
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000 - charged, held: 0 });
        await eventually(() => d.ledgerBalance(accountId, 'pool-3'), (b) => b === 10_000_000 - charged);
      });
    });

    // ---- 3. The official SDKs, unmodified but for base URL and key --------------------------------

    describe('the official SDKs', () => {
      it('openai: lists models, completes, streams, and raises typed errors', async () => {
        const { compatKey } = await compatAccount();
        const client = new OpenAI({ baseURL: `${d.url}/v1`, apiKey: compatKey, maxRetries: 0 });
        const models = [];
        for await (const model of client.models.list()) models.push(model.id);
        expect(models).toEqual(expect.arrayContaining(['sim-chat', 'upstream-chat', 'upstream-anthropic-chat']));
        expect(models).not.toContain('unpriced-chat');
        expect(await client.models.retrieve('sim-chat')).toEqual({ id: 'sim-chat', object: 'model', created: 0, owned_by: 'payg-gateway' });
        await expect(client.models.retrieve('unpriced-chat')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
        await expect(client.models.retrieve('no-such-model')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
        const completion = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 4 });
        expect(completion.choices[0].message.content).toBe('tok0 tok1 tok2 tok3');
        // Defaults spelled out ask for nothing: a model served by an Anthropic profile takes them.
        const defaults = { frequency_penalty: 0, presence_penalty: 0, logprobs: false, store: false, response_format: { type: 'text' as const } };
        const spelled = await client.chat.completions.create({ model: 'upstream-anthropic-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 2, ...defaults });
        expect(spelled.choices[0].message.content).toBe('tok0 tok1');
        expect(d.upstream.lastMessagesBody).toEqual({ model: 'up-claude', max_tokens: 2, messages: [{ role: 'user', content: 'hello' }] });
        expect(completion.usage?.completion_tokens).toBe(4);
        const stream = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 3, stream: true, stream_options: { include_usage: true } });
        let text = '';
        let usage;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? '';
          usage = chunk.usage ?? usage;
        }
        expect(text).toBe('tok0 tok1 tok2');
        expect(usage?.completion_tokens).toBe(3);
        const refused = client.chat.completions.create({ model: 'unpriced-chat', messages: [{ role: 'user', content: 'hello' }] });
        await expect(refused).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
        await expect(refused).rejects.toMatchObject({ status: 403, code: 'compat_model_not_eligible' });
        const invalid = client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 9_999_999 });
        await expect(invalid).rejects.toBeInstanceOf(OpenAI.BadRequestError);
        await expect(invalid).rejects.toMatchObject({ code: 'max_tokens_out_of_range', param: 'max_tokens' });
        const stranger = new OpenAI({ baseURL: `${d.url}/v1`, apiKey: 'sk-payg-unknown', maxRetries: 0 });
        await expect(stranger.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      });

      it('openai: when the upstream calls a tool or gives logprobs, then the JSON answer carries them as the stream does', async () => {
        const { compatKey } = await compatAccount();
        const client = new OpenAI({ baseURL: `${d.url}/v1`, apiKey: compatKey, maxRetries: 0 });
        const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
        const completion = await client.chat.completions.create({ model: 'upstream-chat', messages: [{ role: 'user', content: 'weather?' }], max_tokens: 8, tools, tool_choice: 'auto', parallel_tool_calls: false });
        expect(d.upstream.lastBody).toMatchObject({ tools, tool_choice: 'auto', parallel_tool_calls: false });
        expect(completion.choices[0].finish_reason).toBe('tool_calls');
        expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{}' } }] });
        expect(completion.system_fingerprint).toBe('fp_up');
        const scored = await client.chat.completions.create({ model: 'upstream-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 2, logprobs: true, top_logprobs: 1 });
        expect(scored.choices[0].message.content).toBe('tok0 tok1');
        expect(scored.choices[0].logprobs?.content?.map((l) => l.token)).toEqual(['tok0', 'tok1']);
      });

      it('openai: when n or stream is null, as the SDK\'s types allow, then it is OpenAI\'s default (one completion, not streamed)', async () => {
        const { compatKey } = await compatAccount();
        const client = new OpenAI({ baseURL: `${d.url}/v1`, apiKey: compatKey, maxRetries: 0 });
        const completion = await client.chat.completions.create({ model: 'upstream-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 2, n: null, stream: null });
        expect(completion.choices.map((c) => c.message.content)).toEqual(['tok0 tok1']);
        expect(d.upstream.lastBody).not.toHaveProperty('n');
        expect(d.upstream.lastBody).not.toHaveProperty('stream');
      });

      it('@anthropic-ai/sdk: lists models, creates, streams, and raises typed errors', async () => {
        const { compatKey } = await compatAccount();
        const client = new Anthropic({ baseURL: d.url, apiKey: compatKey, maxRetries: 0 });
        const models = [];
        for await (const model of client.models.list()) models.push(model.id);
        expect(models).toEqual(expect.arrayContaining(['sim-chat', 'upstream-anthropic-chat']));
        expect(await client.models.retrieve('upstream-anthropic-chat')).toMatchObject({ type: 'model', id: 'upstream-anthropic-chat', created_at: new Date(0).toISOString() });
        await expect(client.models.retrieve('no-such-model')).rejects.toBeInstanceOf(Anthropic.NotFoundError);
        const { data: message, response, request_id: requestId } = await client.messages.create({ model: 'sim-chat', max_tokens: 4, messages: [{ role: 'user', content: 'hello' }] }).withResponse();
        expect(message.content).toEqual([{ type: 'text', text: 'tok0 tok1 tok2 tok3' }]);
        // The request's id where Anthropic's SDK reads it (request-id), the same as x-request-id.
        expect(requestId).toBe(response.headers.get('x-request-id'));
        const missing = await client.models.retrieve('no-such-model').catch((error: unknown) => error);
        expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
        expect((missing as InstanceType<typeof Anthropic.NotFoundError>).requestID).toEqual(expect.any(String));
        expect((missing as InstanceType<typeof Anthropic.NotFoundError>).requestID).toBe((missing as InstanceType<typeof Anthropic.NotFoundError>).headers?.get('x-request-id'));
        expect(message.usage.output_tokens).toBe(4);
        const translated = await client.messages.create({ model: 'upstream-chat', max_tokens: 2, system: 'be brief', messages: [{ role: 'user', content: 'hello' }], thinking: { type: 'disabled' } });
        expect(translated.content).toEqual([{ type: 'text', text: 'tok0 tok1' }]);
        const stream = client.messages.stream({ model: 'sim-chat', max_tokens: 3, messages: [{ role: 'user', content: 'hello' }] });
        let text = '';
        stream.on('text', (delta) => (text += delta));
        const final = await stream.finalMessage();
        expect(text).toBe('tok0 tok1 tok2');
        expect(final.stop_reason).toBe('max_tokens');
        expect(final.usage.output_tokens).toBe(3);
        const refused = client.messages.create({ model: 'unpriced-chat', max_tokens: 4, messages: [{ role: 'user', content: 'hello' }] });
        await expect(refused).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
        const invalid = client.messages.create({ model: 'sim-chat', max_tokens: 8193, messages: [{ role: 'user', content: 'hello' }] });
        await expect(invalid).rejects.toBeInstanceOf(Anthropic.BadRequestError);
        await expect(invalid).rejects.toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error', code: 'max_tokens_out_of_range' } } });
      });

      it('@anthropic-ai/sdk: counts a prompt\'s tokens free of charge: the provider\'s own count, else the profile\'s tokenizer, else the byte estimate', async () => {
        const { apiKey, compatKey } = await compatAccount();
        const client = new Anthropic({ baseURL: d.url, apiKey: compatKey, maxRetries: 0 });
        const messages = [{ role: 'user' as const, content: 'hello' }];
        const before = await balance(d.url, apiKey);
        // The simulated provider counts as its answers bill: a quarter of the JSON of { system, messages }.
        expect(await client.messages.countTokens({ model: 'sim-chat', messages })).toEqual({ input_tokens: Math.ceil(JSON.stringify({ messages }).length / 4) });
        // An Anthropic upstream is asked (only the fields its count_tokens takes), its cache counts included in its answer.
        const upstreamCount = await client.messages.countTokens({ model: 'cached-anthropic-chat', system: 'be brief', messages });
        expect(upstreamCount.input_tokens).toBe(Math.ceil(JSON.stringify({ system: 'be brief', messages }).length / 4) + 150);
        expect(d.upstream.lastCountTokensBody).toEqual({ model: 'up-claude', system: 'be brief', messages });
        // An OpenAI upstream cannot count: its profile's tokenizer does (OpenAI counts "hello" as 8), else the byte estimate.
        expect(await client.messages.countTokens({ model: 'tokenized-chat', messages })).toEqual({ input_tokens: 8 });
        expect(await client.messages.countTokens({ model: 'upstream-chat', messages })).toEqual({ input_tokens: Math.ceil(JSON.stringify(messages).length / 4) });
        expect(await balance(d.url, apiKey)).toEqual(before);
        await expect(client.messages.countTokens({ model: 'no-such-model', messages })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
        await expect(client.messages.countTokens({ model: 'unpriced-chat', messages })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
        const refused = client.messages.countTokens({ model: 'sim-chat', messages: [] });
        await expect(refused).rejects.toMatchObject({ status: 400, error: { error: { type: 'invalid_request_error' } } });
        const failing = await post(`${d.url}/v1/messages/count_tokens`, { 'x-api-key': compatKey, 'x-sim-directive': 'fail-before-output' }, { model: 'sim-chat', messages });
        expect([failing.status, failing.body.type, failing.body.error?.code]).toEqual([502, 'error', 'provider_error']);
        expect(await balance(d.url, apiKey)).toEqual(before);
      });

      it('the Python SDKs (openai, anthropic): list, retrieve, complete, stream past the charge comment, embed, count tokens, and raise typed errors', async () => {
        const { apiKey, compatKey } = await compatAccount();
        const before = await balance(d.url, apiKey);
        const python = (await execFileAsync('bash', ['scripts/ensure-python-sdks.sh'], { cwd: ROOT })).stdout.trim();
        const run = await execFileAsync(python, ['test/python/compat_sdks.py'], { cwd: ROOT, env: { ...process.env, GATEWAY_URL: d.url, COMPAT_KEY: compatKey } });
        const { openai: o, anthropic: a } = JSON.parse(run.stdout);
        expect(o.models).toEqual(expect.arrayContaining(['sim-chat', 'upstream-chat']));
        expect(o.model).toEqual({ id: 'sim-chat', object: 'model', created: 0, owned_by: 'payg-gateway' });
        expect(o.completion).toMatchObject({ content: 'tok0 tok1 tok2 tok3', usage: { completion_tokens: 4 } });
        expect(Number(o.completion.charged)).toBe(cost(o.completion.usage.prompt_tokens, 4));
        expect(o.stream).toMatchObject({ text: 'tok0 tok1 tok2', usage: { completion_tokens: 3 } });
        // Two texts of 5 bytes: the simulated provider counts ceil(5/4) each, at sim-embed's 20 nano-USD a token.
        expect(o.embeddings).toEqual({ count: 2, dimensions: 16, prompt_tokens: 4, charged: '80' });
        // Named encodings: the float answer's numbers are the base64 answer's float32 values; 12 bytes are 3 prompt tokens each.
        expect(o.embedding_encodings.float).toHaveLength(8);
        expect(o.embedding_encodings.base64).toEqual(o.embedding_encodings.float);
        expect(o.embedding_encodings.prompt_tokens).toEqual([3, 3]);
        // Token-id arrays: one vector each, their ids the prompt tokens.
        expect(o.token_arrays).toEqual({ count: 2, prompt_tokens: 4, charged: String(4 * EMBED_PRICE) });
        expect([o.not_found.error, o.not_found.status, o.unauthenticated.error, o.unauthenticated.status]).toEqual(['NotFoundError', 404, 'AuthenticationError', 401]);
        expect(a.models).toEqual(expect.arrayContaining(['sim-chat', 'upstream-anthropic-chat']));
        expect(a.message).toMatchObject({ text: 'tok0 tok1 tok2 tok3', usage: { output_tokens: 4 } });
        expect(a.message.request_id).toEqual(expect.any(String));
        expect(a.message.request_id).toBe(a.message.x_request_id);
        expect(a.stream).toEqual({ text: 'tok0 tok1 tok2', stop_reason: 'max_tokens', output_tokens: 3 });
        expect(a.count_tokens).toBe(8);
        expect([a.bad_request.error, a.bad_request.status, a.bad_request.body.error.code]).toEqual(['BadRequestError', 400, 'max_tokens_out_of_range']);
        expect([a.not_eligible.error, a.not_eligible.status]).toEqual(['PermissionDeniedError', 403]);
        // Two chats, the four embeddings calls and two messages were billed, nothing else (the count is free).
        const embedded = 80 + 2 * 3 * EMBED_PRICE + 4 * EMBED_PRICE;
        const billed = cost(o.completion.usage.prompt_tokens, 4) + cost(o.stream.usage.prompt_tokens, 3) + embedded + cost(a.message.usage.input_tokens, 4) + cost(a.message.usage.input_tokens, 3);
        expect(await eventually(() => balance(d.url, apiKey), (b) => b.held === 0 && b.balance < before.balance)).toMatchObject({ balance: before.balance - billed });
      });
    });

    // ---- 5. The OAuth member/business family -----------------------------------------------------

    describe('the OAuth member family', () => {
      it('when a member token calls a member route, then the member pool pays and pool-3 does not move', async () => {
        const { accountId, apiKey, token } = await memberAccount(10_000_000, 20_000_000);
        const response = await post(`${d.url}/api/member/v1/models/sim-chat/chat`, { ...bearer(token), 'x-sim-directive': 'tokens=2' }, { ...hello, max_tokens: 2 });
        expect(response.status).toBe(200);
        const charged = Number(response.headers.get('x-payg-charged'));
        expect(charged).toBeGreaterThan(0);
        expect(await pools(accountId, apiKey, token)).toEqual({ pool3: 10_000_000, member: 20_000_000 - charged });
        await eventually(() => d.ledgerBalance(accountId, 'member'), (b) => b === 20_000_000 - charged);
        const anthropic = await post(`${d.url}/api/member/v1/models/sim-chat/chat/anthropic`, bearer(token), anthropicHello);
        expect(anthropic.status).toBe(200);
        expect((await pools(accountId, apiKey, token)).pool3).toBe(10_000_000);
      });

      it('when the credential is of the other family, then 403 credential_family_mismatch on every route pair and no pool moves', async () => {
        const { accountId, apiKey, token } = await memberAccount(10_000_000, 10_000_000);
        const compatKey = await keyWith(accountId, ['compat']);
        const before = await pools(accountId, apiKey, token);
        const refusals = [
          // API keys (with or without the compat scope) on member routes.
          await post(`${d.url}/api/member/v1/models/sim-chat/chat`, bearer(apiKey), hello),
          await post(`${d.url}/api/member/v1/models/sim-chat/chat/anthropic`, bearer(compatKey), anthropicHello),
          await json(`${d.url}/api/member/v1/entitlement`, { headers: bearer(apiKey) }),
          // Member tokens on open pool-3 routes.
          await chat(d.url, token, hello),
          await post(`${d.url}/api/open/v1/models/sim-chat/chat/anthropic`, bearer(token), anthropicHello),
          await image(d.url, token, picture),
        ];
        for (const response of refusals) expect([response.status, response.body.error.code]).toEqual([403, 'credential_family_mismatch']);
        expect(await pools(accountId, apiKey, token)).toEqual(before);
      });

      it('when a token is forged, expired, for another audience or names no account, then 401 and nothing moves', async () => {
        const { accountId, apiKey, token } = await memberAccount(10_000_000, 10_000_000);
        const before = await pools(accountId, apiKey, token);
        const bad = [
          await d.issuer.mint({ sub: 'm', account: accountId }, { signWith: 'other-key' }),
          await d.issuer.mint({ sub: 'm', account: accountId, expiresInS: -60 }),
          await d.issuer.mint({ sub: 'm', account: accountId, aud: 'someone-else' }),
          await d.issuer.mint({ sub: 'm', account: 'acct_00000000000000000000000000000000' }),
        ];
        for (const t of bad) {
          const response = await post(`${d.url}/api/member/v1/models/sim-chat/chat`, bearer(t), hello);
          expect([response.status, response.body.error.code]).toEqual([401, 'unauthorized']);
        }
        expect(await pools(accountId, apiKey, token)).toEqual(before);
      });

      it('when console and order routes are called, then a member token and the API key see the same account', async () => {
        const { accountId, apiKey, token } = await memberAccount(7_000_000, 1_000_000);
        const byKey = await json(`${d.url}/api/distribution/api-credit/balance`, { headers: bearer(apiKey) });
        const byToken = await json(`${d.url}/api/distribution/api-credit/balance`, { headers: bearer(token) });
        expect(byToken.status).toBe(200);
        expect(byToken.body).toEqual(byKey.body);
        expect(byToken.body).toMatchObject({ accountId, pool: 'pool-3', balance: 7_000_000 });
        // On Dapr the credit reaches the ledger over pub/sub: a moment after the balance shows it.
        const bills = await eventually(() => json(`${d.url}/api/distribution/api-credit/bills/page`, { headers: bearer(token) }), (r) => r.body.items?.length > 0);
        expect(bills.body.items.map((i: { kind: string }) => i.kind)).toEqual(['credit']);
        const order = await post(`${d.url}/api/consumer/orders`, bearer(token), { amount: 5_000_000 });
        expect(order.status).toBe(201);
        const read = await json(`${d.url}/api/consumer/orders/${order.body.orderId}`, { headers: bearer(apiKey) });
        expect([read.status, read.body.accountId]).toEqual([200, accountId]);
        const other = await memberAccount(1_000_000, 0);
        const hidden = await json(`${d.url}/api/consumer/orders/${order.body.orderId}`, { headers: bearer(other.token) });
        expect(hidden.status).toBe(404);
      });
    });

    // ---- 7. Embeddings, billed per prompt token ---------------------------------------------------

    describe('POST /v1/embeddings', () => {
      type UsageRow = { unit: string; quantity: number; unitPrice: number; charged: number };
      const usageRows = (apiKey: string, count: number) => eventually(
        () => json(`${d.url}/api/distribution/api-credit/usage/page?size=100`, { headers: bearer(apiKey) }),
        (r) => r.body.items?.length === count,
      ).then((r) => r.body.items as UsageRow[]);
      const sdk = (key: string, headers: Record<string, string> = {}) => new OpenAI({ baseURL: `${d.url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers });
      /** A base64 vector's float32 values (little-endian). */
      const floats = (base64: string) => {
        const bytes = Buffer.from(base64, 'base64');
        return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
      };

      it('openai: when texts are embedded, then one vector each comes back and exactly usage.prompt_tokens × TEXT_INPUT is charged, from pool-3', async () => {
        const { accountId, apiKey, compatKey } = await compatAccount(10_000_000);
        const { data: answer, response } = await sdk(compatKey).embeddings.create({ model: 'sim-embed', input: ['hello', 'wörld'], encoding_format: 'float' }).withResponse();
        expect(answer.model).toBe('sim-embed');
        expect(answer.data.map((e) => [e.index, e.embedding.length])).toEqual([[0, 16], [1, 16]]);
        expect(Math.hypot(...answer.data[0].embedding)).toBeCloseTo(1, 5);
        // The simulated provider's count: ceil(5 / 4) + ceil(6 / 4) prompt tokens.
        expect(answer.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
        const charged = 4 * EMBED_PRICE;
        expect(Number(response.headers.get('x-payg-charged'))).toBe(charged);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000 - charged, held: 0 });
        const [row] = await usageRows(apiKey, 1);
        expect(row).toMatchObject({ unit: 'TEXT_INPUT', quantity: 4, unitPrice: EMBED_PRICE, charged });
        await eventually(() => d.ledgerBalance(accountId, 'pool-3'), (b) => b === 10_000_000 - charged);
      });

      it('openai: when base64 is asked, or left to the SDK (which asks base64 and decodes), then the vectors are the float ones', async () => {
        const { compatKey } = await compatAccount();
        const client = sdk(compatKey);
        const float = await client.embeddings.create({ model: 'sim-embed', input: 'a lighthouse', encoding_format: 'float', dimensions: 8 });
        const base64 = await client.embeddings.create({ model: 'sim-embed', input: 'a lighthouse', encoding_format: 'base64', dimensions: 8 });
        const decoded = await client.embeddings.create({ model: 'sim-embed', input: 'a lighthouse', dimensions: 8 });
        expect(float.data[0].embedding).toHaveLength(8);
        expect(typeof base64.data[0].embedding).toBe('string');
        expect(floats(base64.data[0].embedding as unknown as string)).toEqual(float.data[0].embedding);
        expect(decoded.data[0].embedding).toEqual(float.data[0].embedding);
      });

      it('when token arrays are embedded, then each array is a vector and its ids are its prompt tokens', async () => {
        const { apiKey, compatKey } = await compatAccount(10_000_000);
        const { data: answer, response } = await sdk(compatKey).embeddings.create({ model: 'sim-embed', input: [[1, 2, 3], [4]], encoding_format: 'float' }).withResponse();
        expect(answer.data).toHaveLength(2);
        expect(answer.usage.prompt_tokens).toBe(4);
        expect(Number(response.headers.get('x-payg-charged'))).toBe(4 * EMBED_PRICE);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000 - 4 * EMBED_PRICE, held: 0 });
      });

      it('when the model is served by the OpenAI adapter, then its /v1/embeddings is called and its usage.prompt_tokens is billed', async () => {
        const { apiKey, compatKey } = await compatAccount(10_000_000);
        const before = d.upstream.embeddingsRequests;
        const { data: answer, response } = await sdk(compatKey).embeddings.create({ model: 'upstream-embed', input: ['one', 'two'], encoding_format: 'base64', user: 'u-7' }).withResponse();
        expect(d.upstream.embeddingsRequests).toBe(before + 1);
        expect(d.upstream.lastEmbeddingsBody).toEqual({ model: 'up-embed', input: ['one', 'two'], encoding_format: 'base64', user: 'u-7' });
        expect(answer.data.map((e) => floats(e.embedding as unknown as string).length)).toEqual([8, 8]);
        expect(answer.model).toBe('upstream-embed');
        const charged = answer.usage.prompt_tokens * EMBED_PRICE;
        expect(charged).toBeGreaterThan(0);
        expect(Number(response.headers.get('x-payg-charged'))).toBe(charged);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000 - charged, held: 0 });
      });

      it('when a request is refused or the provider fails, then the SDK raises the typed error and no money moves', async () => {
        const { apiKey, compatKey } = await compatAccount(10_000_000);
        const client = sdk(compatKey);
        const refusals: [Promise<unknown>, unknown, Record<string, unknown>][] = [
          [client.embeddings.create({ model: 'sim-embed', input: '' }), OpenAI.BadRequestError, { code: 'invalid_request', param: 'input' }],
          [client.embeddings.create({ model: 'sim-embed', input: ['ok', ''] }), OpenAI.BadRequestError, { code: 'invalid_request', param: 'input.1' }],
          [client.embeddings.create({ model: 'sim-embed', input: 'x', encoding_format: 'int8' as 'float' }), OpenAI.BadRequestError, { code: 'invalid_request', param: 'encoding_format' }],
          [client.embeddings.create({ model: 'sim-chat', input: 'x' }), OpenAI.BadRequestError, { code: 'wire_format_mismatch' }],
          [client.embeddings.create({ model: 'unpriced-embed', input: 'x' }), OpenAI.PermissionDeniedError, { code: 'compat_model_not_eligible' }],
          [client.embeddings.create({ model: 'no-such-model', input: 'x' }), OpenAI.NotFoundError, { code: 'model_not_found' }],
          [client.embeddings.create({ model: 'sim-embed', input: 'x', dimensions: 4096 }), OpenAI.BadRequestError, { code: 'provider_rejected' }],
          [sdk(compatKey, { 'x-sim-directive': 'fail-before-output' }).embeddings.create({ model: 'sim-embed', input: 'x' }), OpenAI.InternalServerError, { status: 502, code: 'provider_error' }],
          [sdk(apiKey).embeddings.create({ model: 'sim-embed', input: 'x' }), OpenAI.PermissionDeniedError, { code: 'compat_scope_required' }],
        ];
        for (const [call, type, fields] of refusals) {
          await expect(call).rejects.toBeInstanceOf(type);
          await expect(call).rejects.toMatchObject(fields);
        }
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      });

      it('when the input\'s bound costs more than is available, then 402 insufficient_funds and nothing is held', async () => {
        // 100 nano-USD: a 10-byte text is held at 10 × 20 = 200 before the provider counts it.
        const { apiKey, compatKey } = await compatAccount(100);
        const refused = sdk(compatKey).embeddings.create({ model: 'sim-embed', input: '0123456789' });
        await expect(refused).rejects.toMatchObject({ status: 402, code: 'insufficient_funds' });
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 100, held: 0 });
        const fits = await sdk(compatKey).embeddings.create({ model: 'sim-embed', input: '01234' }).withResponse();
        expect(fits.response.headers.get('x-payg-charged')).toBe(String(2 * EMBED_PRICE));
      });

      it('when models are listed, then the OpenAI list has the eligible embeddings models and the Anthropic list does not', async () => {
        const { compatKey } = await compatAccount();
        const ids = [];
        for await (const model of sdk(compatKey).models.list()) ids.push(model.id);
        expect(ids).toEqual(expect.arrayContaining(['sim-embed', 'upstream-embed', 'sim-chat']));
        expect(ids).not.toContain('unpriced-embed');
        expect(await sdk(compatKey).models.retrieve('sim-embed')).toEqual({ id: 'sim-embed', object: 'model', created: 0, owned_by: 'payg-gateway' });
        const anthropic = new Anthropic({ baseURL: d.url, apiKey: compatKey, maxRetries: 0 });
        const claudeIds = [];
        for await (const model of anthropic.models.list()) claudeIds.push(model.id);
        expect(claudeIds).toContain('sim-chat');
        expect(claudeIds).not.toContain('sim-embed');
        await expect(anthropic.models.retrieve('sim-embed')).rejects.toBeInstanceOf(Anthropic.NotFoundError);
      });
    });

    describe('metrics of these calls', () => {
      it('when the calls above were made, then the apps\' /metrics count requests by family, billed tokens, events and holds', async () => {
        const texts = await Promise.all(d.metricsUrls.map(async (url) => {
          const response = await fetch(url);
          expect(response.status).toBe(200);
          return response.text();
        }));
        const gateway = texts[0];
        expect(gateway).toMatch(/payg_http_requests_total\{[^}]*family="compat"[^}]*\} [1-9]/);
        expect(gateway).toMatch(/payg_http_requests_total\{[^}]*family="member"[^}]*\} [1-9]/);
        expect(gateway).toMatch(/payg_tokens_billed_total\{unit="TEXT_OUTPUT"\} [1-9]/);
        const all = texts.join('\n');
        expect(all).toMatch(/payg_events_published_total\{topic="billing"\} [1-9]/);
        expect(all).toMatch(/payg_events_acknowledged_total\{topic="usage"\} [1-9]/);
        expect(all).toMatch(/payg_holds_open 0/);
        if (d.metricsUrls.length > 1) expect(all).toMatch(/payg_ledger_events_consumed_total\{[^}]*outcome="appended"[^}]*\} [1-9]/);
      });
    });

    // ---- 6. Capability gates ---------------------------------------------------------------------

    describe('capability gates', () => {
      it('when readiness is read, then every capability reports its four gates and the candidate-contract notice', async () => {
        const caps = await json(`${d.url}/api/open/v1/capabilities`);
        expect(caps.body.notice).toMatch(/candidate contract/);
        expect(caps.body.notice).toMatch(/not production enablement/);
        for (const capability of ['agent_run', 'signing', 'evidence', 'media']) {
          expect(Object.keys(caps.body.capability_gates[capability].gates)).toEqual(['source', 'scopes', 'price', 'delivery']);
        }
        expect(caps.body.capability_gates.signing).toMatchObject({ ready: true, ready_models: ['capable-chat'] });
        expect(caps.body.capability_gates.agent_run).toMatchObject({ ready: false, gates: { delivery: { passes: false } } });
        expect(caps.body.compatibility_gate).toMatchObject({ open: true, conditions: [{ condition: 'deployment', state: 'passes' }, { condition: 'scope' }, { condition: 'model_price' }, { condition: 'funded' }] });
      });

      it('when each gate is closed in turn, then the use is refused naming that gate and nothing is charged', async () => {
        const { accountId, apiKey } = await fundedAccount(d.url, 10_000_000);
        const scoped = await keyWith(accountId, ['signing', 'agent_run']);
        const use = (key: string, model: string, capability: string) => chat(d.url, key, hello, { model, headers: { 'x-payg-capabilities': capability } });
        const cases: [string, string, string, string][] = [
          [scoped, 'sim-chat', 'signing', 'source'],
          [apiKey, 'capable-chat', 'signing', 'scopes'],
          [scoped, 'capable-unpriced-chat', 'signing', 'price'],
          [scoped, 'capable-chat', 'agent_run', 'delivery'],
        ];
        for (const [key, model, capability, gate] of cases) {
          const response = await use(key, model, capability);
          expect([response.status, response.body.error.code, response.body.error.capability, response.body.error.gate, response.body.error.param]).toEqual([403, 'capability_gate_closed', capability, gate, 'X-Payg-Capabilities']);
        }
        const unknown = await use(scoped, 'capable-chat', 'telepathy');
        expect([unknown.status, unknown.body.error.param]).toEqual([400, 'X-Payg-Capabilities']);
        expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      });

      it('when all four gates pass, then the capability is granted on the call, for an OAuth scope as for a key scope', async () => {
        const { accountId } = await fundedAccount(d.url, 1_000_000);
        const scoped = await keyWith(accountId, ['signing']);
        const granted = await chat(d.url, scoped, hello, { model: 'capable-chat', headers: { 'x-payg-capabilities': 'signing' } });
        expect(granted.status).toBe(200);
        expect(granted.headers.get('x-payg-capabilities')).toBe('signing');
        const unaffordable = await chat(d.url, scoped, { ...hello, max_tokens: 8192 }, { model: 'capable-chat', headers: { 'x-payg-capabilities': 'signing' } });
        expect([unaffordable.status, unaffordable.headers.get('x-payg-capabilities')]).toEqual([402, null]);
        const credit = await admin(d.url, `/admin/v1/accounts/${accountId}/credits`, { amount: 1_000_000, reference: 'entitlement', pool: 'member' });
        expect(credit.status).toBe(200);
        const withScope = await d.issuer.mint({ sub: 'm', account: accountId, scope: 'chat signing' });
        const withoutScope = await d.issuer.mint({ sub: 'm', account: accountId, scope: 'chat' });
        const member = (token: string) => post(`${d.url}/api/member/v1/models/capable-chat/chat`, { ...bearer(token), 'x-payg-capabilities': 'signing' }, hello);
        expect((await member(withScope)).status).toBe(200);
        expect((await member(withoutScope)).body.error).toMatchObject({ code: 'capability_gate_closed', gate: 'scopes' });
      });
    });

    itConformsToOpenApi(openApi);
  });
}
