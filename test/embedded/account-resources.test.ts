// What one account may hold of a gateway instance, against the real embedded process: at most
// GATEWAY_ACCOUNT_BODY_BYTES of request bodies on the way at once (the rest refused 429, their
// connections closed, nothing kept; a request not received whole within
// GATEWAY_REQUEST_TIMEOUT_MS is answered 408 and its bytes given back), and at most
// GATEWAY_ACCOUNT_EVENT_STREAMS session event streams open. Other accounts are not affected.
// And what the instance holds for every account together: at most GATEWAY_BODY_BYTES_IN_FLIGHT
// of request bodies of calls in progress (the rest refused 503 gateway_busy).

import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chat, fundedAccount, hello } from '../support/api';
import { violationsOf } from '../support/openapi-conformance';
import { passes } from '../support/eventually';
import { newSession } from '../support/sessions';
import { startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(60_000);

const MAX_BODY = 32 * 1024;
const PER_ACCOUNT = 48 * 1024;
const TIMEOUT_MS = 1500;
const IN_FLIGHT = 64 * 1024;

let gateway: GatewayProcess;
beforeAll(async () => {
  gateway = await startGateway({
    GATEWAY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'gw-body-budget-')), 'data'),
    GATEWAY_MAX_BODY_BYTES: String(MAX_BODY),
    GATEWAY_ACCOUNT_BODY_BYTES: String(PER_ACCOUNT),
    GATEWAY_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS),
    GATEWAY_ACCOUNT_EVENT_STREAMS: '2',
    GATEWAY_BODY_BYTES_IN_FLIGHT: String(IN_FLIGHT),
  });
});
afterAll(async () => {
  await gateway?.stop();
});

/** A chat body of exactly `bytes` bytes (with `extra` fields). */
function bodyOf(bytes: number, extra: Record<string, unknown> = {}): Buffer {
  const shell = JSON.stringify({ ...hello, messages: [{ role: 'user', content: '' }], max_tokens: 4, ...extra });
  return Buffer.from(shell.replace('"content":""', `"content":"${'a'.repeat(bytes - shell.length)}"`));
}

/** A raw connection that sends a chat's headers and the first `sent` bytes of its body, and collects what it is answered. */
function slowChat(apiKey: string, body: Buffer, sent: number): { socket: Socket; answer: Promise<string> } {
  const { port } = new URL(gateway.url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.write(`POST /api/open/v1/models/sim-chat/chat HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
  socket.write(body.subarray(0, sent));
  const answer = new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
  });
  return { socket, answer };
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
const bodyJson = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
/** What the OpenAPI document finds wrong with a raw answer to the slow chat. */
const violations = (answer: string) => violationsOf({
  method: 'POST', url: `${gateway.url}/api/open/v1/models/sim-chat/chat`, status: statusOf(answer),
  contentType: /\r\ncontent-type: ([^\r]*)/i.exec(answer)?.[1] ?? '', body: bodyJson(answer),
  headers: Object.fromEntries(answer.slice(0, answer.indexOf('\r\n\r\n')).split('\r\n').slice(1).map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()])),
});

describe('request bodies on the way, per account', () => {
  it('when an account already sends its share of bodies, then another of its bodies is refused 429 and its connection closed, another account is served, and a body held back past the request timeout is answered 408 and gives its bytes back', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 1_000_000_000);
    const other = await fundedAccount(gateway.url, 1_000_000_000);
    const body = bodyOf(30_000);
    // 20,000 bytes of a first body on the way, held there.
    const held = slowChat(apiKey, body, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A second whole body would make 50,000 on the way: over the account's 49,152.
    const refused = slowChat(apiKey, body, body.length);
    const answer = await refused.answer;
    expect(statusOf(answer)).toBe(429);
    expect(answer).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(bodyJson(answer).error).toMatchObject({ code: 'rate_limit_exceeded', param: 'body_bytes_in_flight' });
    expect(violations(answer)).toEqual([]);
    // Another account's calls are not counted with it.
    expect((await chat(gateway.url, other.apiKey, { ...hello, max_tokens: 4 })).status).toBe(200);
    // The held body is never finished: the request timeout answers it and closes its connection.
    const started = Date.now();
    const timedOut = await held.answer;
    expect(statusOf(timedOut)).toBe(408);
    expect(bodyJson(timedOut).error).toMatchObject({ code: 'invalid_request' });
    expect(violations(timedOut)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000);
    // Its bytes were given back: two whole bodies of the account, one after the other, are served.
    for (let i = 0; i < 2; i++) {
      const whole = slowChat(apiKey, body, body.length);
      expect(statusOf(await whole.answer)).toBe(200);
    }
  });
});

describe('request bodies of calls in progress, per instance', () => {
  /** A chat with a body of `bytes`, answered as a whole (a stream: once its last chunk is read). */
  const call = (apiKey: string, body: Buffer, directive?: string) =>
    fetch(`${gateway.url}/api/open/v1/models/sim-chat/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...(directive ? { 'x-sim-directive': directive } : {}) },
      body: body.toString(),
    }).then(async (response) => ({ status: response.status, text: await response.text() }));

  it('when the instance holds GATEWAY_BODY_BYTES_IN_FLIGHT of bodies of calls in progress (every account together), then another body is refused 503 gateway_busy and its connection closed; a small call fits, and once those calls are answered the body is served', async () => {
    const accounts = await Promise.all([0, 1, 2].map(() => fundedAccount(gateway.url, 1_000_000_000)));
    // Two streamed calls of 30,000-byte bodies, each within its own account's share, answered over
    // about two seconds: their bodies count until their answers end, though received long before.
    const running = accounts.slice(0, 2).map(({ apiKey }) => call(apiKey, bodyOf(30_000, { stream: true, max_tokens: 8 }), 'stream-delay=250'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A third whole body would make 90,000 bytes held: over the instance's 65,536.
    const refused = slowChat(accounts[2].apiKey, bodyOf(30_000), 30_000);
    const answer = await refused.answer;
    expect(statusOf(answer)).toBe(503);
    expect(answer).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(bodyJson(answer).error).toMatchObject({ code: 'gateway_busy', param: 'body_bytes_in_flight' });
    // A small call fits beside them.
    expect((await chat(gateway.url, accounts[2].apiKey, { ...hello, max_tokens: 4 })).status).toBe(200);
    for (const done of await Promise.all(running)) expect(done.status).toBe(200);
    // Their bodies were given back with their answers: the same body is served now.
    expect((await call(accounts[2].apiKey, bodyOf(30_000))).status).toBe(200);
  });

  it('when a sender answered 408 keeps its side of the connection open, then its body is given back all the same: the instance serves other accounts\' bodies', async () => {
    const [holder, other] = await Promise.all([0, 1].map(() => fundedAccount(gateway.url, 1_000_000_000)));
    const { port } = new URL(gateway.url);
    // Two bodies of 20,000 bytes on the way (40,000 of the account's 49,152), never finished, on
    // connections whose sender does not close its side when answered (allowHalfOpen).
    const body = bodyOf(30_000);
    const sockets = [0, 1].map(() => {
      const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
      socket.on('error', () => undefined);
      socket.write(`POST /api/open/v1/models/sim-chat/chat HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${holder.apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
      socket.write(body.subarray(0, 20_000));
      const answered = new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString()));
        socket.on('end', () => resolve(text));
      });
      return { socket, answered };
    });
    try {
      for (const { answered } of sockets) expect(statusOf(await answered)).toBe(408);
      // 40,000 held and 30,000 more would pass the instance's 65,536: served once the timed-out bodies are given back.
      await passes(async () => expect((await call(other.apiKey, bodyOf(30_000))).status).toBe(200), 5_000);
    } finally {
      for (const { socket } of sockets) socket.destroy();
    }
  });
});

describe('session event streams open, per account', () => {
  const open = (apiKey: string, sessionId: string) => {
    const controller = new AbortController();
    const answer = fetch(`${gateway.url}/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${apiKey}` }, signal: controller.signal });
    return { answer, close: () => controller.abort() };
  };

  it('when an account has GATEWAY_ACCOUNT_EVENT_STREAMS streams open, then its next is refused 429 (event_streams) while another account opens its own, and once one closes the account may open another', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 1_000_000_000);
    const other = await fundedAccount(gateway.url, 1_000_000_000);
    const sessionId = await newSession(gateway.url, apiKey);
    const streams = [open(apiKey, sessionId), open(apiKey, sessionId)];
    for (const stream of streams) expect((await stream.answer).status).toBe(200);
    const refused = await fetch(`${gateway.url}/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '1']);
    expect(((await refused.json()) as { error: unknown }).error).toMatchObject({ code: 'rate_limit_exceeded', param: 'event_streams' });
    const theirs = open(other.apiKey, await newSession(gateway.url, other.apiKey));
    expect((await theirs.answer).status).toBe(200);
    theirs.close();
    streams[0].close();
    const again = await passes(async () => {
      const stream = open(apiKey, sessionId);
      const answer = await stream.answer;
      if (answer.status !== 200) stream.close();
      expect(answer.status).toBe(200);
      return stream;
    }, 5000);
    again.close();
    streams[1].close();
  });
});

