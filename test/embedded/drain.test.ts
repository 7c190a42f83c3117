// Graceful shutdown of the real embedded process: SIGTERM lets calls in flight finish (and
// /readyz says draining meanwhile); calls still running at the drain timeout are aborted and
// settle or release their own holds, so nothing is left open for the expiry reminder, and are
// told the gateway is shutting down. An image request still waiting on its provider at the drain
// timeout is answered 503 with its taskId (recoverable after the restart) and the process exits 0.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { balance, fundedAccount, hello, image, imageTask, picture } from '../support/api';
import { passes } from '../support/eventually';
import { startGateway, type GatewayProcess } from '../support/processes';
import { follow, newSession, ofRun, runEnded, startRun } from '../support/sessions';

jest.setTimeout(60_000);

async function startStream(url: string, apiKey: string, directive: string, wire: 'openai' | 'anthropic' = 'openai'): Promise<{ frames: () => string; done: Promise<string> }> {
  const response = await fetch(`${url}/api/open/v1/models/sim-chat/chat${wire === 'anthropic' ? '/anthropic' : ''}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': directive },
    body: JSON.stringify(wire === 'anthropic'
      ? { ...hello, max_tokens: 100, stream: true }
      : { ...hello, max_tokens: 100, stream: true, stream_options: { include_usage: true } }),
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

  it('when a stream outlasts the drain timeout, then it is cut, told the gateway is shutting down (both wires), what was relayed is charged and no hold stays open', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 10_000_000);
    const other = await fundedAccount(gateway.url, 10_000_000);
    const stream = await startStream(gateway.url, apiKey, 'tokens=100;stream-delay=100');
    const anthropic = await startStream(gateway.url, other.apiKey, 'tokens=100;stream-delay=100', 'anthropic');
    gateway.child.kill('SIGTERM');
    const text = await stream.done;
    expect(text).not.toContain('[DONE]');
    expect(JSON.parse(text.trim().split('\n\n').at(-1)!.slice(6))).toEqual({ error: { code: 'gateway_shutting_down', message: expect.stringContaining('shutting down') } });
    const events = await anthropic.done;
    expect(events).not.toContain('message_stop');
    const last = events.trim().split('\n\n').at(-1)!;
    expect(last.split('\n')[0]).toBe('event: error');
    expect(JSON.parse(last.split('\n')[1].slice(6))).toMatchObject({ type: 'error', error: { type: 'overloaded_error', code: 'gateway_shutting_down' } });
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

  it('when a session run outlasts the drain timeout, then it ends run.failed gateway_shutting_down and is charged for what it produced', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 10_000_000);
    const sessionId = await newSession(gateway.url, apiKey);
    const accepted = await startRun(gateway.url, apiKey, sessionId, { model: 'sim-chat', ...hello, max_tokens: 200 }, { 'x-sim-directive': 'tokens=100;stream-delay=100' });
    expect(accepted.status).toBe(202);
    await follow(gateway.url, apiKey, sessionId, { until: (events) => events.some((e) => e.event === 'run.delta') });
    gateway.child.kill('SIGTERM');
    await gateway.stop();
    gateway = await startGateway(env, gateway.port);
    const events = ofRun((await follow(gateway.url, apiKey, sessionId, { until: runEnded(accepted.body.run_id) })).events, accepted.body.run_id);
    expect(events.map((e) => e.event).slice(-2)).toEqual(['run.usage', 'run.failed']);
    const usage = events.at(-2)!.data;
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBeLessThan(100);
    expect(events.at(-1)!.data).toMatchObject({ code: 'gateway_shutting_down', charged: usage.charged });
    expect(await balance(gateway.url, apiKey)).toMatchObject({ balance: 10_000_000 - usage.charged, held: 0 });
  });
});

describe('graceful shutdown of the embedded gateway with an image call waiting', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-drain-images-'));
  // The provider timeout is far beyond the drain: only the drain can end the wait in time.
  const env = { GATEWAY_DATA_DIR: join(dir, 'data'), GATEWAY_DRAIN_TIMEOUT_MS: '1500', GATEWAY_PROVIDER_TIMEOUT_MS: '60000', GATEWAY_HOLD_TTL_MS: '600000' };
  let gateway: GatewayProcess;

  afterAll(async () => {
    await gateway?.stop();
  });

  it('when SIGTERM arrives while an image call waits on a slow provider, then at the drain timeout it is answered 503 image_unresolved with its taskId, the process exits 0, the hold stays and the task is recovered after the restart', async () => {
    const PRICE = 40_000_000;
    gateway = await startGateway(env);
    const { apiKey } = await fundedAccount(gateway.url, 100_000_000);
    const exitCode = new Promise<number | null>((resolve) => gateway.child.once('exit', (code) => resolve(code)));
    // The artifact is ready 20 s after the call was sent: after the drain and after the gateway's hard exit.
    const pending = image(gateway.url, apiKey, picture, { headers: { 'x-sim-directive': 'late-artifact=20000' } });
    await passes(async () => expect((await balance(gateway.url, apiKey)).held).toBe(PRICE));
    const sigterm = Date.now();
    gateway.child.kill('SIGTERM');
    const answered = await pending;
    expect(answered.status).toBe(503);
    expect(answered.body).toMatchObject({ error: { code: 'image_unresolved' }, status: 'unresolved', taskId: expect.any(String) });
    expect(await exitCode).toBe(0);
    // Before the gateway's own hard exit (drain timeout + 15 s).
    expect(Date.now() - sigterm).toBeLessThan(1500 + 10_000);
    gateway = await startGateway(env, gateway.port);
    // The shutdown released nothing: the hold waits for the task's outcome.
    expect(await balance(gateway.url, apiKey)).toMatchObject({ held: PRICE });
    const recovered = await passes(async () => {
      const response = await imageTask(gateway.url, apiKey, answered.body.taskId);
      expect(response.status).toBe(200);
      return response;
    }, 30_000);
    expect(recovered.body).toMatchObject({ taskId: answered.body.taskId, status: 'succeeded', charged: PRICE });
    expect(await balance(gateway.url, apiKey)).toMatchObject({ held: 0, balance: 100_000_000 - PRICE });
  });
});
