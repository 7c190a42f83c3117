// GATEWAY_ACCOUNT_CALLS counts every model call an account has running on one gateway instance:
// chats, embeddings, the provider call of a new image task and session runs, each from its
// admission to its end (an image call that runs on past its client's 503 still counts; a run
// counts until it has ended, long after its 202). Past the share: 429 calls_in_flight, nothing
// held. The counting is the gateway process's own (services/gateway/limits/account-share.ts),
// the same on either actor host.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { balance, chat, fundedAccount, hello, image, picture } from '../support/api';
import { passes } from '../support/eventually';
import { follow, newSession, runEnded, startRun } from '../support/sessions';
import { startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(60_000);

describe('GATEWAY_ACCOUNT_CALLS on the embedded host', () => {
  let gateway: GatewayProcess;
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-account-calls-')), 'data');

  beforeAll(async () => {
    // A provider timeout of 3 s: an image whose artifact comes later is answered 503 while its call runs on.
    gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_ACCOUNT_CALLS: '1', GATEWAY_TEST_MODE: 'true', GATEWAY_PROVIDER_TIMEOUT_MS: '3000' });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  const refusedCall = async (apiKey: string) => {
    const refused = await chat(gateway.url, apiKey, hello);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded', param: 'calls_in_flight' });
    expect(refused.headers.get('retry-after')).toBe('1');
  };

  it('when a session run is going, then it is the account\'s call: a chat is refused 429 calls_in_flight, and a second run too, with nothing held; once it has ended, calls are served again', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 1_000_000_000);
    const sessionId = await newSession(gateway.url, apiKey);
    const running = await startRun(gateway.url, apiKey, sessionId, { model: 'sim-chat', ...hello, max_tokens: 64 }, { 'x-sim-directive': 'tokens=20; stream-delay=100' });
    expect(running.status).toBe(202);
    const heldByRun = (await balance(gateway.url, apiKey)).held;
    expect(heldByRun).toBeGreaterThan(0);
    await refusedCall(apiKey);
    const second = await startRun(gateway.url, apiKey, await newSession(gateway.url, apiKey), { model: 'sim-chat', ...hello, max_tokens: 64 });
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ code: 'rate_limit_exceeded', param: 'calls_in_flight' });
    expect((await balance(gateway.url, apiKey)).held).toBe(heldByRun); // the running run's hold, and no other
    await follow(gateway.url, apiKey, sessionId, { until: runEnded(running.body.run_id) });
    await passes(async () => expect((await chat(gateway.url, apiKey, hello)).status).toBe(200));
  });

  it('when a new image task\'s provider call runs on past its client\'s 503, then it still counts; an account\'s other calls are refused until it ends, and a replay of a task makes no call and is not refused', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 1_000_000_000);
    const key = crypto.randomUUID();
    // The artifact comes after the provider timeout: the client gets 503, the call runs on.
    const late = image(gateway.url, apiKey, picture, { key, headers: { 'x-sim-directive': 'late-artifact=4500' } });
    await passes(() => refusedCall(apiKey), 5000);
    const first = await late;
    await refusedCall(apiKey);
    // The same key and payload: the task's own answer, no new provider call.
    const replay = await image(gateway.url, apiKey, picture, { key, headers: { 'x-sim-directive': 'late-artifact=4500' } });
    expect(replay.status).not.toBe(429);
    expect(replay.body.error?.param).not.toBe('calls_in_flight');
    await passes(async () => expect((await chat(gateway.url, apiKey, hello)).status).toBe(200), 10_000);
    expect(first.status).toBe(503);
    expect(first.body.error).toMatchObject({ code: 'image_unresolved' });
  });

  it('when one account has its call running, then another account is served', async () => {
    const busy = await fundedAccount(gateway.url, 1_000_000_000);
    const other = await fundedAccount(gateway.url, 1_000_000_000);
    const sessionId = await newSession(gateway.url, busy.apiKey);
    const running = await startRun(gateway.url, busy.apiKey, sessionId, { model: 'sim-chat', ...hello, max_tokens: 64 }, { 'x-sim-directive': 'tokens=8; stream-delay=100' });
    expect(running.status).toBe(202);
    await refusedCall(busy.apiKey);
    expect((await chat(gateway.url, other.apiKey, hello)).status).toBe(200);
    await follow(gateway.url, busy.apiKey, sessionId, { until: runEnded(running.body.run_id) });
  });
});
