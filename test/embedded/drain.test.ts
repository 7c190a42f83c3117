// Graceful shutdown of the real embedded process: SIGTERM lets calls in flight finish (and
// /readyz says draining meanwhile); calls still running at the drain timeout are aborted and
// settle or release their own holds, so nothing is left open for the expiry reminder.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { balance, fundedAccount, hello } from '../support/api';
import { startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(60_000);

async function startStream(url: string, apiKey: string, directive: string): Promise<{ frames: () => string; done: Promise<string> }> {
  const response = await fetch(`${url}/api/open/v1/models/sim-chat/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': directive },
    body: JSON.stringify({ ...hello, max_tokens: 100, stream: true, stream_options: { include_usage: true } }),
  });
  const reader = response.body!.getReader();
  let text = '';
  const done = (async () => {
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended) return text;
      text += new TextDecoder().decode(value);
    }
  })();
  while (!text.includes('tok1')) await new Promise((r) => setTimeout(r, 10));
  return { frames: () => text, done };
}

describe('graceful shutdown of the embedded gateway', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-drain-'));
  const env = { GATEWAY_DATA_DIR: join(dir, 'data'), GATEWAY_DRAIN_TIMEOUT_MS: '1500', GATEWAY_HOLD_TTL_MS: '600000' };
  let gateway: GatewayProcess;

  afterAll(async () => {
    await gateway?.stop();
  });

  it('when SIGTERM arrives during a short stream, then the stream finishes, readiness says draining and the call is charged in full', async () => {
    gateway = await startGateway(env);
    const { apiKey } = await fundedAccount(gateway.url, 10_000_000);
    const stream = await startStream(gateway.url, apiKey, 'tokens=20;stream-delay=30');
    gateway.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    const ready = await fetch(`${gateway.url}/readyz`).then((r) => r.status).catch(() => 'closed');
    expect([503, 'closed']).toContain(ready);
    const text = await stream.done;
    expect(text).toContain('data: [DONE]');
    const usage = JSON.parse(text.split('\n\n').filter((f) => f.includes('"usage"')).at(-1)!.slice(6)).usage;
    expect(usage.completion_tokens).toBe(20);
    await gateway.stop();
    gateway = await startGateway(env, gateway.port);
    expect(await balance(gateway.url, apiKey)).toMatchObject({ balance: 10_000_000 - usage.prompt_tokens * 100 - 20 * 400, held: 0 });
  });

  it('when a stream outlasts the drain timeout, then it is cut, what was relayed is charged and no hold stays open', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 10_000_000);
    const stream = await startStream(gateway.url, apiKey, 'tokens=100;stream-delay=100');
    gateway.child.kill('SIGTERM');
    const text = await stream.done;
    expect(text).not.toContain('[DONE]');
    const relayed = (text.match(/"content":"/g) ?? []).length;
    expect(relayed).toBeGreaterThan(1);
    expect(relayed).toBeLessThan(100);
    await gateway.stop();
    gateway = await startGateway(env, gateway.port);
    const after = await balance(gateway.url, apiKey);
    expect(after.held).toBe(0);
    expect(after.balance).toBeLessThan(10_000_000 - (relayed - 1) * 400);
    expect(after.balance).toBeGreaterThan(10_000_000 - 100 * 400 - 10_000);
  });
});
