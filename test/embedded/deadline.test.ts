// The provider deadline fires for every call, under load: hanging calls on the open chat route
// (JSON and stream) and on /v1/messages are all answered within the deadline plus slack, and a
// slow stream is cut at the deadline and charged for what it relayed. The gateway runs with a
// small young generation so the garbage collector runs often, as it does under real traffic:
// a deadline that the collector can take (AbortSignal.timeout inside AbortSignal.any on Node 20)
// then never fires.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMPAT_TEST_ENV } from '../contract/compat.suite';
import { admin, balance, fundedAccount, hello } from '../support/api';
import { startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(120_000);

const DEADLINE_MS = 2000;
/** What a loaded 2-core machine may add to the deadline before the answer arrives. */
const SLACK_MS = 3000;
/** Where the client gives up: an answer this late means the deadline never fired. */
const CLIENT_GIVES_UP_MS = 15_000;

interface Answer {
  status: number | 'no answer';
  body: string;
  ms: number;
}

async function timed(url: string, init: RequestInit): Promise<Answer> {
  const started = Date.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(CLIENT_GIVES_UP_MS) });
    const body = await response.text();
    return { status: response.status, body, ms: Date.now() - started };
  } catch {
    return { status: 'no answer', body: '', ms: Date.now() - started };
  }
}

/** Streams and JSON answers in a loop until stopped: garbage for the collector, work for the loop. */
function backgroundLoad(url: string, apiKey: string, workers: number): { stop: () => Promise<void>; count: () => number } {
  let running = true;
  let count = 0;
  const loops = Array.from({ length: workers }, async (_, i) => {
    while (running) {
      await fetch(`${url}/api/open/v1/models/sim-chat/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': 'tokens=200' },
        body: JSON.stringify({ ...hello, max_tokens: 300, stream: i % 2 === 0 }),
      }).then((r) => r.text()).catch(() => undefined);
      count += 1;
    }
  });
  return { stop: async () => { running = false; await Promise.all(loops); }, count: () => count };
}

describe('the provider deadline under load (embedded)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-deadline-'));
  let gateway: GatewayProcess;

  beforeAll(async () => {
    gateway = await startGateway({
      ...COMPAT_TEST_ENV,
      GATEWAY_DATA_DIR: join(dir, 'data'),
      GATEWAY_PROVIDER_TIMEOUT_MS: String(DEADLINE_MS),
      GATEWAY_HOLD_TTL_MS: '600000',
      // A small young generation: scavenges every few hundred kilobytes of garbage.
      NODE_OPTIONS: '--max-semi-space-size=1',
    });
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('when the provider hangs while other traffic runs, then every call (chat JSON and stream, /v1/messages JSON and stream) is answered provider_timeout within the deadline', async () => {
    const { accountId, apiKey } = await fundedAccount(gateway.url, 1_000_000_000);
    const key = await admin(gateway.url, `/admin/v1/accounts/${accountId}/api-keys`, { scopes: ['compat'] });
    const compatKey: string = key.body.apiKey;
    const load = backgroundLoad(gateway.url, apiKey, 4);
    await new Promise((r) => setTimeout(r, 500));
    const open = (stream: boolean) => timed(`${gateway.url}/api/open/v1/models/sim-chat/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': 'hang' },
      body: JSON.stringify({ ...hello, max_tokens: 50, stream }),
    });
    const messages = (stream: boolean) => timed(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': compatKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-sim-directive': 'hang' },
      body: JSON.stringify({ model: 'sim-chat', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }], stream }),
    });
    // Two waves, each started while the other traffic runs.
    const answers: { kind: string; answer: Answer }[] = [];
    for (let wave = 0; wave < 2; wave++) {
      const calls = Array.from({ length: 4 }, () => [
        open(false).then((answer) => ({ kind: 'chat JSON', answer })),
        open(true).then((answer) => ({ kind: 'chat stream', answer })),
        messages(false).then((answer) => ({ kind: 'messages JSON', answer })),
        messages(true).then((answer) => ({ kind: 'messages stream', answer })),
      ]).flat();
      answers.push(...(await Promise.all(calls)));
    }
    await load.stop();
    expect(load.count()).toBeGreaterThan(4);
    const late = answers.filter(({ answer }) => answer.status !== 504 || answer.ms > DEADLINE_MS + SLACK_MS);
    expect(late.map(({ kind, answer }) => `${kind}: ${answer.status} after ${answer.ms} ms`)).toEqual([]);
    for (const { answer } of answers) expect(answer.body).toContain('provider_timeout');
    expect(await balance(gateway.url, apiKey)).toMatchObject({ held: 0 });
  });

  it('when streams are slower than the deadline while other traffic runs, then each is cut at the deadline with provider_timeout and charged for what it relayed', async () => {
    const amount = 100_000_000;
    const load = backgroundLoad(gateway.url, (await fundedAccount(gateway.url, 1_000_000_000)).apiKey, 4);
    await new Promise((r) => setTimeout(r, 500));
    const streams = await Promise.all(Array.from({ length: 4 }, async () => {
      const { apiKey } = await fundedAccount(gateway.url, amount);
      const answer = await timed(`${gateway.url}/api/open/v1/models/sim-chat/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': 'tokens=100;stream-delay=200' },
        body: JSON.stringify({ ...hello, max_tokens: 200, stream: true, stream_options: { include_usage: true } }),
      });
      return { apiKey, answer };
    }));
    await load.stop();
    for (const { apiKey, answer } of streams) {
      expect(answer.status).toBe(200);
      // Its natural end is 20 s away.
      expect(answer.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
      expect(answer.body).not.toContain('[DONE]');
      expect(answer.body).toContain('"code":"provider_timeout"');
      const relayed = (answer.body.match(/"content":"/g) ?? []).length;
      expect(relayed).toBeGreaterThan(1);
      expect(relayed).toBeLessThan(100);
      const after = await balance(gateway.url, apiKey);
      expect(after.held).toBe(0);
      // Output at 400 per token for what was relayed, input at 100 per token (a few tokens).
      expect(after.balance).toBeLessThanOrEqual(amount - relayed * 400);
      expect(after.balance).toBeGreaterThan(amount - relayed * 400 - 10_000);
    }
  });
});
