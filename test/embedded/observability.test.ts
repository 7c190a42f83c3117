// Observability against the real embedded process: a full session over every route family, then
// what /metrics says about it and what the process logged (docs/observability.md). The logs of
// the whole run are searched for every credential the session used: none may appear.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { admin, apiKeyFor, chat, fundedAccount, hello, image, json, picture } from '../support/api';
import { writeTestCatalog } from '../support/catalog';
import { eventually } from '../support/eventually';
import { startOAuthIssuer, type OAuthIssuer } from '../support/oauth';
import { ADMIN_TOKEN, startGateway, type GatewayProcess } from '../support/processes';
import { startUpstream, type Upstream } from '../support/upstream';

jest.setTimeout(60_000);

type Labels = Record<string, string>;

/** The samples of one metric in a Prometheus text exposition, with their labels. */
function samples(text: string, name: string): { labels: Labels; value: number }[] {
  const found: { labels: Labels; value: number }[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    found.push({ labels, value: Number(match[3]) });
  }
  return found;
}

function total(text: string, name: string, where: Labels = {}): number {
  return samples(text, name)
    .filter((s) => Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

const TRACE_ID = '5c1f3e7a9b2d4f60a8e1c3b5d7f90a12';
const REQUEST_FIELDS = ['level', 'time', 'service', 'msg', 'requestId', 'traceId', 'method', 'family', 'route', 'status', 'durationMs', 'aborted'];

describe('observability of the embedded gateway', () => {
  let gateway: GatewayProcess;
  let upstream: Upstream;
  let issuer: OAuthIssuer;
  const secrets: string[] = [ADMIN_TOKEN];
  const billed = { input: 0, output: 0 };
  let tracedRequestId = '';

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-observe-'));
    upstream = await startUpstream();
    issuer = await startOAuthIssuer();
    gateway = await startGateway({
      ...issuer.env(),
      GATEWAY_LOG_LEVEL: 'info',
      GATEWAY_COMPAT_ENABLED: 'true',
      GATEWAY_DATA_DIR: join(dir, 'data'),
      GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
    });
    const url = gateway.url;

    // Accounts, keys (one with the compat scope), credits in both pools.
    const { accountId, apiKey } = await fundedAccount(url, 1_000_000_000);
    const secondKey = await apiKeyFor(url, accountId);
    const compat = await admin(url, `/admin/v1/accounts/${accountId}/api-keys`, { scopes: ['compat'] });
    expect(compat.status).toBe(201);
    const compatKey: string = compat.body.apiKey;
    expect((await admin(url, `/admin/v1/accounts/${accountId}/credits`, { amount: 100_000_000, reference: 'member', pool: 'member' })).status).toBe(200);
    const token = await issuer.mint({ account: accountId, scope: 'chat' });
    secrets.push(apiKey, secondKey, compatKey, token);

    // Chats: JSON (simulated and over HTTP to the OpenAI upstream), a stream, one that fails.
    for (const model of ['sim-chat', 'upstream-chat']) {
      const answer = await chat(url, apiKey, { ...hello, max_tokens: 4 }, { model, headers: { traceparent: `00-${TRACE_ID}-1111111111111111-01` } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('traceparent')).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
      tracedRequestId = answer.headers.get('x-request-id') ?? '';
      billed.input += answer.body.usage.prompt_tokens;
      billed.output += answer.body.usage.completion_tokens;
    }
    const stream = await fetch(`${url}/api/open/v1/models/sim-chat/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secondKey}`, 'content-type': 'application/json', 'x-sim-directive': 'tokens=3' },
      body: JSON.stringify({ ...hello, stream: true, stream_options: { include_usage: true } }),
    });
    const usage = (await stream.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((c) => c.usage)?.usage;
    billed.input += usage.prompt_tokens;
    billed.output += usage.completion_tokens;
    const failed = await chat(url, apiKey, hello, { headers: { 'x-sim-directive': 'fail-before-output' } });
    expect(failed.status).toBe(502);
    // A client that gives up on a JSON call: not a provider error.
    await expect(fetch(`${url}/api/open/v1/models/sim-chat/chat`, {
      method: 'POST', signal: AbortSignal.timeout(300),
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': 'hang' }, body: JSON.stringify(hello),
    })).rejects.toThrow();

    // An image, a compatibility call with x-api-key, a member-token call, console and catalog reads.
    expect((await image(url, apiKey, picture)).status).toBe(200);
    const messages = await json(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': compatKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(messages.status).toBe(200);
    billed.input += messages.body.usage.input_tokens;
    billed.output += messages.body.usage.output_tokens;
    const member = await chat(url, token, { ...hello, max_tokens: 2 }, { headers: {} });
    expect(member.status).toBe(403);
    const memberChat = await json(`${url}/api/member/v1/models/sim-chat/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...hello, max_tokens: 2 }),
    });
    expect(memberChat.status).toBe(200);
    billed.input += memberChat.body.usage.prompt_tokens;
    billed.output += memberChat.body.usage.completion_tokens;
    expect((await json(`${url}/api/distribution/api-credit/bills/page?page=1&size=5`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
    expect((await json(`${url}/api/open/v1/catalog/models`)).status).toBe(200);
  });

  afterAll(async () => {
    await gateway?.stop();
    await issuer?.close();
    await upstream?.close();
  });

  it('when /metrics is scraped, then it is Prometheus text with the session counted by family and status', async () => {
    const response = await fetch(`${gateway.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    const requests = (where: Labels) => total(text, 'payg_http_requests_total', where);
    expect(requests({ family: 'open', method: 'POST', status: '200' })).toBe(4);
    expect(requests({ family: 'open', method: 'POST', status: '502' })).toBe(1);
    expect(requests({ family: 'open', method: 'POST', status: '403' })).toBe(1);
    expect(requests({ family: 'open', method: 'POST', status: '499' })).toBe(1);
    expect(requests({ family: 'compat', method: 'POST', status: '200' })).toBe(1);
    expect(requests({ family: 'member', method: 'POST', status: '200' })).toBe(1);
    expect(requests({ family: 'console', method: 'GET', status: '200' })).toBe(1);
    expect(requests({ family: 'catalog', method: 'GET', status: '200' })).toBe(1);
    expect(requests({ family: 'admin', method: 'POST', status: '201' })).toBe(4);
    expect(requests({ family: 'admin', method: 'POST', status: '200' })).toBe(2);
    expect(requests({ family: 'health', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(total(text, 'payg_http_request_duration_seconds_count', { family: 'open' })).toBe(7);
    expect(samples(text, 'payg_http_requests_total').every((s) => !('path' in s.labels))).toBe(true);
  });

  it('when the session is over, then tokens and images billed match what was answered, and provider errors are counted', async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(billed.output).toBeGreaterThan(0);
    expect(total(text, 'payg_tokens_billed_total', { unit: 'TEXT_INPUT' })).toBe(billed.input);
    expect(total(text, 'payg_tokens_billed_total', { unit: 'TEXT_OUTPUT' })).toBe(billed.output);
    expect(total(text, 'payg_images_billed_total')).toBe(1);
    expect(total(text, 'payg_provider_errors_total', { kind: 'unavailable' })).toBeGreaterThanOrEqual(1);
    // The client that gave up is not counted (the simulated provider reports a stopped call as protocol).
    expect(total(text, 'payg_provider_errors_total', { kind: 'protocol' })).toBe(0);
  });

  it('when every hold has ended, then payg_holds_open is back to 0 and every event published was acknowledged', async () => {
    const text = await eventually(async () => (await fetch(`${gateway.url}/metrics`)).text(), (t) => total(t, 'payg_holds_open') === 0);
    expect(total(text, 'payg_holds_open')).toBe(0);
    const published = total(text, 'payg_events_published_total');
    const acknowledged = total(text, 'payg_events_acknowledged_total');
    expect(acknowledged).toBeGreaterThan(0);
    expect(published).toBeGreaterThanOrEqual(acknowledged);
    expect(total(text, 'payg_events_acknowledged_total', { topic: 'usage' })).toBe(5 + 1);
  });

  it('when the output is read, then every line is JSON, and each line of a request carries its request id and trace id', async () => {
    await fetch(`${gateway.url}/healthz`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = gateway.output().split('\n').filter((line) => line.trim() !== '');
    const parsed = lines.map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
    // Start-up lines belong to no request: which catalog file is in force, where the gateway listens.
    const lifecycle = ['catalog loaded', 'gateway listening'];
    for (const line of parsed) {
      if (lifecycle.includes(line.msg as string)) continue;
      expect(line).toMatchObject({ requestId: expect.any(String), traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    }
    const access = parsed.filter((line) => line.msg === 'request completed');
    expect(access.length).toBeGreaterThanOrEqual(20);
    for (const line of access) {
      expect(line).toMatchObject({ level: 30, method: expect.any(String), family: expect.any(String), status: expect.any(Number), durationMs: expect.any(Number) });
      expect(Object.keys(line).filter((key) => !REQUEST_FIELDS.includes(key))).toEqual([]);
    }
    const traced = access.filter((line) => line.traceId === TRACE_ID);
    expect(traced).toHaveLength(2);
    expect(traced.map((line) => line.requestId)).toContain(tracedRequestId);
    // The failed chat's error line belongs to its request.
    expect(parsed.find((line) => line.msg === 'request failed')).toMatchObject({ requestId: expect.any(String), traceId: expect.any(String) });
  });

  it('when the whole output is searched, then no credential and no authorization header is in it', () => {
    const output = gateway.output();
    expect(secrets).toHaveLength(5);
    for (const secret of secrets) expect(output.includes(secret)).toBe(false);
    expect(output.toLowerCase()).not.toContain('authorization');
  });
});
