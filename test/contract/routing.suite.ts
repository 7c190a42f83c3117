// End-to-end suite of provider routing (docs/providers.md, "Routing"), the same cases against the
// embedded process and the Dapr topology: profiles served by a list of upstreams, one of them
// failing each way (refused, 5xx, 429 with Retry-After, slow first byte, cut mid-stream, a
// confirmed rejection) in front of a healthy one. Statuses, attempts, charges and circuits.
//
// Each failing upstream weighs 1000 against the healthy one's 1: the smooth weighted round robin
// sends a profile's first attempts to it (deterministically) until its circuit opens.

import { readFileSync, writeFileSync } from 'node:fs';
import { balance, chat, fundedAccount, hello, image, json, picture } from '../support/api';
import { writeTestCatalog } from '../support/catalog';
import { eventually } from '../support/eventually';
import { sseData } from '../support/sse';
import type { Upstream } from '../support/upstream';

export interface RoutingDeploymentUnderTest {
  url: string;
  upstream: Upstream;
  close(): Promise<void>;
}

/** What the suite's gateways are started with: attempts given up fast, circuits opened by three failures for a minute. */
export const ROUTING_ENV = {
  GATEWAY_UPSTREAM_ATTEMPT_TIMEOUT_MS: '400',
  GATEWAY_CIRCUIT_FAILURES: '3',
  GATEWAY_CIRCUIT_COOLDOWN_MS: '60000',
  GATEWAY_PROVIDER_TIMEOUT_MS: '5000',
};

/** The failing upstreams, by provider entry: each in front of `local-healthy` in its own model. */
const FAILING = {
  'local-refused': { model: 'fallback-refused-chat', baseUrl: 'http://127.0.0.1:1/v1' },
  'local-503': { model: 'fallback-503-chat', behaviour: 'status=503' },
  'local-429': { model: 'fallback-429-chat', behaviour: 'status=429,retry-after=1' },
  'local-slow': { model: 'fallback-slow-chat', behaviour: 'delay=3000' },
  // Its answer's headers at once, its body after the attempt timeout: begun, so not given up.
  'local-slow-body': { model: 'fallback-slow-body-chat', behaviour: 'body-delay=1000' },
  'local-cut': { model: 'fallback-cut-chat', behaviour: 'break-after=3' },
  'local-400': { model: 'fallback-rejected-chat', behaviour: 'status=400' },
  // OpenAI's opening chunk (the role, no text), then the connection is cut: nothing shown yet.
  'local-cut-opening': { model: 'fallback-cut-opening-chat', behaviour: 'opening-chunk,break-after=1' },
} as const;

/** The test catalog plus the routed models; the healthy upstream serves its own model name. */
export function writeRoutingCatalog(path: string, upstreamUrl: string): string {
  const base = JSON.parse(readFileSync(writeTestCatalog(path, upstreamUrl), 'utf8'));
  const chatModel = base.models[0];
  const { provider: _provider, upstream_model: _model, ...profile } = chatModel.profiles[0];
  base.providers['local-healthy'] = { kind: 'openai', baseUrl: upstreamUrl };
  Object.entries(FAILING).forEach(([provider, failing], i) => {
    base.providers[provider] = { kind: 'openai', baseUrl: 'baseUrl' in failing ? failing.baseUrl : upstreamUrl, ...('behaviour' in failing ? { headers: { 'x-upstream-behaviour': failing.behaviour } } : {}) };
    base.models.push({
      ...chatModel,
      id: failing.model,
      profiles: [{ ...profile, profile_id: `6e2f8a52-3c1e-4c8e-9a55-1d2a7b0c9e${String(i).padStart(2, '0')}`, upstream_model: 'up-model-a', providers: [{ provider, weight: 1000 }, { provider: 'local-healthy', weight: 1, upstream_model: 'up-model-b' }] }],
    });
  });
  // Every upstream failing: nothing to fall back to.
  base.models.push({
    ...chatModel,
    id: 'all-down-chat',
    profiles: [{ ...profile, profile_id: '6e2f8a52-3c1e-4c8e-9a55-1d2a7b0c9e99', upstream_model: 'up-model-a', providers: [{ provider: 'local-down-a' }, { provider: 'local-down-b' }] }],
  });
  base.providers['local-down-a'] = { kind: 'openai', baseUrl: 'http://127.0.0.1:1/v1' };
  // An image model whose first pick fails without confirming (a 5xx: the outcome is unknown).
  const imageModel = base.models.find((m: { id: string }) => m.id === 'sim-image');
  const { provider: _ip, upstream_model: _im, ...imageProfile } = imageModel.profiles[0];
  base.providers['local-image-503'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'status=503' } };
  base.models.push({
    ...imageModel,
    id: 'routed-image',
    profiles: [{ ...imageProfile, profile_id: '6e2f8a52-3c1e-4c8e-9a55-1d2a7b0c9e98', upstream_model: 'up-image-a', providers: [{ provider: 'local-image-503', weight: 1000 }, { provider: 'local-healthy', weight: 1, upstream_model: 'up-image-b' }] }],
  });
  // An image model whose one upstream answers 429: the provider refused to run it.
  base.providers['local-image-429'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'status=429,retry-after=1' } };
  base.models.push({ ...imageModel, id: 'limited-image', profiles: [{ ...imageProfile, profile_id: '6e2f8a52-3c1e-4c8e-9a55-1d2a7b0c9e97', upstream_model: 'up-image-a', providers: [{ provider: 'local-image-429' }] }] });
  base.providers['local-down-b'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'status=502' } };
  // Profiles of one upstream: a stream cut after output, an answer slower than the call's deadline, a 429.
  for (const [i, [provider, model, behaviour]] of ([['local-solo-cut', 'solo-cut-chat', 'break-after=3'], ['local-solo-slow', 'solo-slow-chat', 'delay=6000'], ['local-solo-429', 'solo-429-chat', 'status=429']] as const).entries()) {
    base.providers[provider] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': behaviour } };
    base.models.push({ ...chatModel, id: model, profiles: [{ ...profile, profile_id: `6e2f8a52-3c1e-4c8e-9a55-1d2a7b0c9e9${i}`, upstream_model: 'up-model-a', providers: [{ provider }] }] });
  }
  // An upstream that ignores max_tokens: it streams 1,000 words whatever it is asked for.
  base.providers['local-ignores-max'] = { kind: 'openai', baseUrl: upstreamUrl, headers: { 'x-upstream-behaviour': 'ignore-max-tokens', 'x-upstream-tokens': '1000' } };
  base.models.push({ ...chatModel, id: 'ignores-max-chat', profiles: [{ ...profile, profile_id: '6e2f8a52-3c1e-4c8e-9a55-1d2a7b0c9e89', upstream_model: 'up-model-a', providers: [{ provider: 'local-ignores-max' }] }] });
  writeFileSync(path, JSON.stringify(base, null, 2));
  return path;
}

/** payg_upstream_attempts_total by `provider/outcome`, from the gateway's /metrics. */
async function attempts(url: string): Promise<Record<string, number>> {
  const text = (await json(`${url}/metrics`)).body as string;
  const out: Record<string, number> = {};
  for (const match of text.matchAll(/^payg_upstream_attempts_total\{provider="([^"]+)",outcome="([^"]+)"\} (\d+)/gm)) out[`${match[1]}/${match[2]}`] = Number(match[3]);
  return out;
}

export function routingSuite(hostName: string, start: () => Promise<RoutingDeploymentUnderTest>): void {
  describe(`provider routing on the ${hostName} host`, () => {
    let d: RoutingDeploymentUnderTest;
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    /** A stream of up to 8 tokens from `model`, as the raw response. */
    const streamed = (apiKey: string, model: string) =>
      fetch(`${d.url}/api/open/v1/models/${model}/chat`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...hello, max_tokens: 8, stream: true }) });
    const circuits = async () => (await json(`${d.url}/readyz`)).body.upstreams as Record<string, { state: string; consecutive_failures: number; open_until: string | null }>;
    /** A chat on `model` from a fresh account: its answer, and what it cost the account once nothing is held. */
    const charged = async (model: string, body: object = { ...hello, max_tokens: 4 }) => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const answer = await chat(d.url, apiKey, body, { model });
      const after = await eventually(() => balance(d.url, apiKey), (b) => b.held === 0 && (answer.status !== 200 || b.balance < 10_000_000));
      return { answer, cost: 10_000_000 - after.balance, apiKey };
    };
    /** The route on the usage rows of an account's one call (every row of the call carries it). */
    const routeOf = async (apiKey: string) => {
      const page = await eventually(
        () => json(`${d.url}/api/distribution/api-credit/usage/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } }),
        (r) => r.body.items?.length >= 2,
      );
      const routes = (page.body.items as { route?: unknown }[]).map((row) => row.route);
      expect(routes.every((route) => JSON.stringify(route) === JSON.stringify(routes[0]))).toBe(true);
      const route = routes[0] as { upstream: string; attempts: { upstream: string; outcome: string; durationMs: number; platformBorne?: boolean }[] };
      return { upstream: route.upstream, attempts: route.attempts.map(({ durationMs: _ms, ...attempt }) => attempt) };
    };
    const price = (usage: { prompt_tokens: number; completion_tokens: number }) => usage.prompt_tokens * 100 + usage.completion_tokens * 400;

    it('when an upstream refuses connections, then each call falls back to the next one (its own model name), is charged once, and three failures open the refused one\'s circuit', async () => {
      for (let i = 0; i < 3; i++) {
        const { answer, cost, apiKey } = await charged('fallback-refused-chat');
        expect(answer.status).toBe(200);
        expect(cost).toBe(price(answer.body.usage));
        expect(Number(answer.headers.get('x-payg-charged'))).toBe(cost);
        expect((d.upstream.lastBody as { model: string }).model).toBe('up-model-b');
        expect(await routeOf(apiKey)).toEqual({ upstream: 'local-healthy', attempts: [{ upstream: 'local-refused', outcome: 'refused' }, { upstream: 'local-healthy', outcome: 'served' }] });
      }
      expect((await circuits())['local-refused']).toMatchObject({ state: 'open', consecutive_failures: 3 });
      // Open: the healthy upstream goes first; the refused one is not tried.
      const { answer, apiKey } = await charged('fallback-refused-chat');
      expect(answer.status).toBe(200);
      expect(await routeOf(apiKey)).toEqual({ upstream: 'local-healthy', attempts: [{ upstream: 'local-healthy', outcome: 'served' }] });
      expect(await attempts(d.url)).toMatchObject({ 'local-refused/refused': 3 });
      const stream = await fetch(`${d.url}/api/open/v1/models/fallback-refused-chat/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${(await fundedAccount(d.url, 10_000_000)).apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...hello, max_tokens: 3, stream: true }),
      });
      expect(sseData(await stream.text()).at(-1)).toBe('[DONE]');
    });

    it('when an upstream answers 5xx before any output, then the next one serves the call, charged once', async () => {
      const before = await attempts(d.url);
      const { answer, cost } = await charged('fallback-503-chat');
      expect(answer.status).toBe(200);
      expect(cost).toBe(price(answer.body.usage));
      const after = await attempts(d.url);
      expect((after['local-503/unavailable'] ?? 0) - (before['local-503/unavailable'] ?? 0)).toBe(1);
      expect((await circuits())['local-503']).toMatchObject({ state: 'closed', consecutive_failures: 1 });
    });

    it('when an upstream answers 429 with Retry-After, then the next one serves, and the limited one is left alone that long, then probed', async () => {
      const { answer } = await charged('fallback-429-chat');
      expect(answer.status).toBe(200);
      const limited = (await circuits())['local-429'];
      expect(limited.state).toBe('open');
      expect(Date.parse(limited.open_until!) - Date.now()).toBeLessThanOrEqual(1000);
      expect((await charged('fallback-429-chat')).answer.status).toBe(200);
      expect((await attempts(d.url))['local-429/rate_limited']).toBe(1);
      // After its Retry-After the next call probes it again (and is served by the other).
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await circuits())['local-429'].state).toBe('half_open');
      expect((await charged('fallback-429-chat')).answer.status).toBe(200);
      expect((await attempts(d.url))['local-429/rate_limited']).toBe(2);
    });

    it('when an upstream sends no first byte within the attempt timeout, then it is given up and the next one serves the call well before the provider timeout', async () => {
      const started = Date.now();
      const { answer, cost, apiKey } = await charged('fallback-slow-chat');
      expect(answer.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2500);
      expect(cost).toBe(price(answer.body.usage));
      // The slow upstream may have run (and billed) the call: its attempt is the platform's cost, never the customer's.
      expect(await routeOf(apiKey)).toEqual({ upstream: 'local-healthy', attempts: [{ upstream: 'local-slow', outcome: 'timeout', platformBorne: true }, { upstream: 'local-healthy', outcome: 'served' }] });
      expect((await attempts(d.url))['local-slow/timeout']).toBe(1);
    });

    it('when an upstream has begun its JSON answer (its headers) but its body takes longer than the attempt timeout, then it is not given up: it serves the call, charged once', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const answer = await chat(d.url, apiKey, { ...hello, max_tokens: 3 }, { model: 'fallback-slow-body-chat' });
      expect(answer.status).toBe(200);
      expect(await routeOf(apiKey)).toEqual({ upstream: 'local-slow-body', attempts: [{ upstream: 'local-slow-body', outcome: 'served' }] });
    });

    it('when a stream breaks after output, then it is not retried: it ends with the error event, charged for what was produced', async () => {
      const before = await attempts(d.url);
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const response = await streamed(apiKey, 'fallback-cut-chat');
      const events = sseData(await response.text());
      expect(events.at(-1)).not.toBe('[DONE]');
      expect(JSON.parse(events.at(-1)!)).toMatchObject({ error: { code: 'provider_error' } });
      const prompt = Math.ceil(Buffer.byteLength(JSON.stringify(hello.messages)) / 4);
      const after = await eventually(() => balance(d.url, apiKey), (b) => b.held === 0 && b.balance < 10_000_000);
      expect(10_000_000 - after.balance).toBe(prompt * 100 + 3 * 400);
      expect(await routeOf(apiKey)).toEqual({ upstream: 'local-cut', attempts: [{ upstream: 'local-cut', outcome: 'broken' }] });
      const now = await attempts(d.url);
      expect((now['local-cut/broken'] ?? 0) - (before['local-cut/broken'] ?? 0)).toBe(1);
      expect((now['local-healthy/served'] ?? 0) - (before['local-healthy/served'] ?? 0)).toBe(0);
    });

    it('when an upstream ignores max_tokens, then its stream is cut past 8 × max_tokens + 64 pieces of output with the error event, and charged for max_tokens', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const response = await streamed(apiKey, 'ignores-max-chat');
      const events = sseData(await response.text());
      const pieces = events.filter((e) => e !== '[DONE]' && typeof JSON.parse(e).choices?.[0]?.delta?.content === 'string' && JSON.parse(e).choices[0].delta.content !== '');
      expect(pieces).toHaveLength(8 * 8 + 64);
      expect(JSON.parse(events.at(-1)!)).toMatchObject({ error: { code: 'provider_error' } });
      const prompt = Math.ceil(Buffer.byteLength(JSON.stringify(hello.messages)) / 4);
      const after = await eventually(() => balance(d.url, apiKey), (b) => b.held === 0 && b.balance < 10_000_000);
      expect(10_000_000 - after.balance).toBe(prompt * 100 + 8 * 400);
    });

    it('when a stream of a one-upstream profile breaks after output, then its attempt is counted broken and its circuit told, as with several', async () => {
      const before = await attempts(d.url);
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const response = await streamed(apiKey, 'solo-cut-chat');
      expect(JSON.parse(sseData(await response.text()).at(-1)!)).toMatchObject({ error: { code: 'provider_error' } });
      const now = await attempts(d.url);
      expect((now['local-solo-cut/broken'] ?? 0) - (before['local-solo-cut/broken'] ?? 0)).toBe(1);
      expect((await circuits())['local-solo-cut']).toMatchObject({ state: 'closed', consecutive_failures: 1 });
    });

    it('when the only upstream answers 429, then the call is 502 provider_error (the provider\'s rate, not the request\'s fault), nothing charged', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const answer = await chat(d.url, apiKey, { ...hello, max_tokens: 8 }, { model: 'solo-429-chat' });
      expect([answer.status, answer.body.error?.code]).toEqual([502, 'provider_error']);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
    });

    it('when a call reaches its own deadline before the upstream answers, then it is 504 and the upstream\'s circuit is untouched', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const answer = await chat(d.url, apiKey, { ...hello, max_tokens: 8 }, { model: 'solo-slow-chat' });
      expect([answer.status, answer.body.error?.code]).toEqual([504, 'provider_timeout']);
      expect((await circuits())['local-solo-slow']).toMatchObject({ state: 'closed', consecutive_failures: 0 });
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
    });

    it('when a stream is cut after its opening chunk, before any text, then the next upstream serves it whole, charged once', async () => {
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const response = await streamed(apiKey, 'fallback-cut-opening-chat');
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(sseData(text).at(-1)).toBe('[DONE]');
      const charged = Number(/^: x-payg-charged (\d+)$/m.exec(text)?.[1]);
      const after = await eventually(() => balance(d.url, apiKey), (b) => b.held === 0 && b.balance < 10_000_000);
      expect(10_000_000 - after.balance).toBe(charged);
      expect(await routeOf(apiKey)).toEqual({ upstream: 'local-healthy', attempts: [{ upstream: 'local-cut-opening', outcome: 'unavailable' }, { upstream: 'local-healthy', outcome: 'served' }] });
    });

    it('when an upstream confirms a rejection (400), then it is not retried elsewhere and nothing is charged', async () => {
      const before = await attempts(d.url);
      const { answer, cost } = await charged('fallback-rejected-chat');
      expect([answer.status, answer.body.error.code, cost]).toEqual([400, 'provider_rejected', 0]);
      const after = await attempts(d.url);
      expect((after['local-400/rejected'] ?? 0) - (before['local-400/rejected'] ?? 0)).toBe(1);
      expect((after['local-healthy/served'] ?? 0) - (before['local-healthy/served'] ?? 0)).toBe(0);
      // A rejection is the request's fault, not the upstream's: its circuit is untouched.
      expect((await circuits())['local-400']).toMatchObject({ state: 'closed', consecutive_failures: 0 });
    });

    it('when every upstream fails, then 502 provider_error, the hold released, nothing charged', async () => {
      const { answer, cost } = await charged('all-down-chat');
      expect([answer.status, answer.body.error.code, cost]).toEqual([502, 'provider_error', 0]);
      const seen = await attempts(d.url);
      expect([seen['local-down-a/refused'], seen['local-down-b/unavailable']]).toEqual([1, 1]);
    });

    it('when an image task\'s upstream fails without confirming, then the task stays with it: unresolved, even once new tasks go to another upstream', async () => {
      const { apiKey } = await fundedAccount(d.url, 200_000_000);
      const model = (body: unknown) => (body as { model: string }).model;
      const [one, two, three, four] = Array.from({ length: 4 }, () => crypto.randomUUID());
      const first = await image(d.url, apiKey, picture, { model: 'routed-image', key: one });
      expect([first.status, first.body.error.code, model(d.upstream.lastImageBody)]).toEqual([503, 'image_unresolved', 'up-image-a']);
      // Two more new tasks fail the same way: three failures open its circuit.
      for (const key of [two, three]) expect((await image(d.url, apiKey, picture, { model: 'routed-image', key })).status).toBe(503);
      expect((await circuits())['local-image-503'].state).toBe('open');
      // A new task now goes to the healthy upstream (its own model name) and succeeds.
      const fresh = await image(d.url, apiKey, picture, { model: 'routed-image', key: four });
      expect([fresh.status, model(d.upstream.lastImageBody)]).toEqual([200, 'up-image-b']);
      // The first task's retry is still the first task, on its own upstream: never run again elsewhere.
      const calls = d.upstream.imageRequests;
      const retried = await image(d.url, apiKey, picture, { model: 'routed-image', key: one });
      expect([retried.status, retried.body.taskId, retried.body.status]).toEqual([503, first.body.taskId, 'unresolved']);
      // Whatever the retry asked upstream, it asked the task's own.
      if (d.upstream.imageRequests > calls) expect(model(d.upstream.lastImageBody)).toBe('up-image-a');
      // Three unresolved tasks hold their price, one is charged it.
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 160_000_000, held: 120_000_000 });
    });

    it('when an image task\'s only upstream answers 429, then the task has failed for good (nothing was produced), nothing is held or charged, its retry answers the same, and the upstream is left alone for its Retry-After', async () => {
      const { apiKey } = await fundedAccount(d.url, 200_000_000);
      const key = crypto.randomUUID();
      const failed = await image(d.url, apiKey, picture, { model: 'limited-image', key });
      expect([failed.status, failed.body.status, failed.body.error?.code, failed.body.error?.message]).toEqual([502, 'failed', 'provider_error', expect.stringContaining("limiting the platform's rate (429)")]);
      expect((await circuits())['local-image-429'].state).toBe('open');
      const retried = await image(d.url, apiKey, picture, { model: 'limited-image', key });
      expect([retried.status, retried.body.taskId]).toEqual([502, failed.body.taskId]);
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 200_000_000, held: 0 });
    });

    it('when /metrics is read, then each upstream\'s circuit state is a gauge (2 open, 0 closed)', async () => {
      const text = (await json(`${d.url}/metrics`)).body as string;
      expect(text).toMatch(/^payg_upstream_circuit_state\{provider="local-refused"\} 2$/m);
      expect(text).toMatch(/^payg_upstream_circuit_state\{provider="local-healthy"\} 0$/m);
    });
  });
}
