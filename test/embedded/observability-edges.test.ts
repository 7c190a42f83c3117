// Observability at its edges, against the real embedded process: a client's unsampled
// traceparent, requests the HTTP parser refuses, paths no route has, a collector that cannot be
// reached, and OpenTelemetry settings the exporter cannot honour (docs/observability.md).

import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fundedAccount, hello } from '../support/api';
import { eventually } from '../support/eventually';
import { newSession, startRun } from '../support/sessions';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { freePort, startGateway, startRefusedGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(60_000);

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

/** Whatever `request` gets back on a connection of its own, until the gateway closes it. */
function rawExchange(url: string, request: string, end = true): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    // end false: the connection stays open after the request, as a client still sending its body.
    const socket = connect(Number(port), hostname, () => (end ? socket.end(request) : socket.write(request)));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
    socket.once('close', () => {
      const [head, body] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) });
    });
  });
}

function logLines(gateway: GatewayProcess): Record<string, unknown>[] {
  return gateway.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function requestsCounted(gateway: GatewayProcess, labels: string[]): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('payg_http_requests_total{') && labels.every((label) => l.includes(label)));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** A gateway exporting its spans to a test receiver every 100 ms, logging at info (settings `env` besides). */
async function tracedGateway(env: Record<string, string> = {}): Promise<{ receiver: OtlpReceiver; gateway: GatewayProcess }> {
  const receiver = await startOtlpReceiver();
  const gateway = await startGateway({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    GATEWAY_LOG_LEVEL: 'info',
    GATEWAY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'gw-edges-')), 'data'),
    ...env,
  });
  return { receiver, gateway };
}

async function stopTraced(receiver: OtlpReceiver | undefined, gateway: GatewayProcess | undefined): Promise<void> {
  await gateway?.stop();
  await receiver?.close();
}

describe('a gateway exporting traces', () => {
  let receiver: OtlpReceiver;
  let gateway: GatewayProcess;

  beforeAll(async () => ({ receiver, gateway } = await tracedGateway()));

  afterAll(() => stopTraced(receiver, gateway));

  it('when it starts, then its start-up line names the endpoint spans go to', () => {
    expect(logLines(gateway)).toContainEqual(expect.objectContaining({ msg: 'trace export on (OTLP)', endpoint: `${receiver.url}/v1/traces` }));
  });

  it('when a client sends an unsampled traceparent, then the request is traced all the same, under the client\'s span, and answered sampled', async () => {
    const response = await fetch(`${gateway.url}/api/open/v1/catalog/models`, { headers: { traceparent: `00-${TRACE}-${PARENT}-00` } });
    expect(response.status).toBe(200);
    const answered = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(response.headers.get('traceparent') ?? '');
    expect(answered?.[1]).toBe(TRACE);
    const spans = await receiver.waitFor((all) => all.some((span) => span.spanId === answered?.[2]));
    expect(spans.find((span) => span.spanId === answered?.[2])).toMatchObject({ traceId: TRACE, parentSpanId: PARENT, name: 'GET /api/open/v1/catalog/models' });
  });

  it.each([
    ['not HTTP', 'GARBAGE / HTTP/1.1\r\n\r\n', 400],
    ['larger than 16 KiB', `GET /api/open/v1/catalog/models HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ])('when a request is %s, then its answer\'s request id is on an access line, it is counted, and its traceparent says sampled', async (_what, request, status) => {
    const counted = [`family="other"`, `method="OTHER"`, `status="${status}"`];
    const before = await requestsCounted(gateway, counted);
    const answer = await rawExchange(gateway.url, request);
    expect(answer.status).toBe(status);
    const requestId = answer.headers['x-request-id'];
    expect(answer.body.error).toMatchObject({ code: 'invalid_request', request_id: requestId });
    const traceparent = /^00-([0-9a-f]{32})-[0-9a-f]{16}-01$/.exec(answer.headers.traceparent);
    expect(traceparent).not.toBeNull();
    const line = await eventually(async () => logLines(gateway).find((l) => l.requestId === requestId), (found) => found !== undefined);
    expect(line).toEqual({ level: 30, time: expect.any(Number), service: 'gateway', msg: 'request completed', requestId, traceId: traceparent?.[1], method: '(unparsed)', family: 'other', route: '(unparsed)', status });
    expect(await requestsCounted(gateway, counted)).toBe(before + 1);
  });

  it.each([
    ['POST', '/v1/messages/count_tokens'],
    ['GET', '/v1/models'],
  ])('when %s %s is refused by its wire\'s error handler, then its span is named by the route, as its access line', async (method, route) => {
    const response = await fetch(`${gateway.url}${route}`, { method, headers: { 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });
    expect(response.status).toBeGreaterThanOrEqual(400);
    const spanId = /^00-[0-9a-f]{32}-([0-9a-f]{16})-01$/.exec(response.headers.get('traceparent') ?? '')?.[1];
    const spans = await receiver.waitFor((all) => all.some((span) => span.spanId === spanId));
    expect(spans.find((span) => span.spanId === spanId)).toMatchObject({ name: `${method} ${route}`, attributes: expect.objectContaining({ 'http.route': route }) });
    const requestId = response.headers.get('x-request-id');
    const line = await eventually(async () => logLines(gateway).find((l) => l.requestId === requestId), (found) => found !== undefined);
    expect(line).toMatchObject({ msg: 'request completed', method, family: 'compat', route, status: response.status });
  });

  it('when a session run\'s provider call fails, then its warning names the run once: each field of a line appears once', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 100_000_000);
    const sessionId = await newSession(gateway.url, apiKey);
    const run = await startRun(gateway.url, apiKey, sessionId, { model: 'sim-chat', ...hello, max_tokens: 8 }, { 'x-sim-directive': 'fail-after-chunks=2' });
    expect(run.status).toBe(202);
    const runId: string = run.body.run_id;
    const raw = await eventually(async () => gateway.output().split('\n').find((l) => l.includes('"msg":"provider call failed"') && l.includes(runId)), (found) => found !== undefined);
    // JSON.parse keeps the last of duplicate keys; log stores that parse strictly (Elasticsearch) refuse the line.
    expect([raw!.split('"runId":').length - 1, raw!.split('"sessionId":').length - 1]).toEqual([1, 1]);
    expect(JSON.parse(raw!)).toMatchObject({ level: 40, runId, sessionId, requestId: run.headers.get('x-request-id') });
  });

  it('when a path no route has is asked for, then its access line has the route (none)', async () => {
    const response = await fetch(`${gateway.url}/no/such/path/5e1d`);
    expect(response.status).toBe(404);
    const requestId = response.headers.get('x-request-id');
    const line = await eventually(async () => logLines(gateway).find((l) => l.requestId === requestId), (found) => found !== undefined);
    expect(line).toMatchObject({ msg: 'request completed', method: 'GET', family: 'other', route: '(none)', status: 404 });
    expect(gateway.output()).not.toContain('5e1d');
  });
});

describe('a gateway whose request timeout is short', () => {
  let receiver: OtlpReceiver;
  let gateway: GatewayProcess;

  beforeAll(async () => ({ receiver, gateway } = await tracedGateway({ GATEWAY_REQUEST_TIMEOUT_MS: '1000' })));

  afterAll(() => stopTraced(receiver, gateway));

  it('when a chat\'s body is not received whole in time, then its 408 is logged, counted and traced once, as that chat, under the ids it was answered with', async () => {
    const { apiKey } = await fundedAccount(gateway.url, 100_000_000);
    const before = { chat: await requestsCounted(gateway, ['family="open"', 'method="POST"', 'status="408"']), unparsed: await requestsCounted(gateway, ['family="other"', 'status="408"']) };
    const answer = await rawExchange(gateway.url, `POST /api/open/v1/models/sim-chat/chat HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"messages":`, false);
    expect(answer.status).toBe(408);
    const requestId = answer.headers['x-request-id'];
    expect(answer.body.error).toMatchObject({ code: 'invalid_request', request_id: requestId });
    const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(answer.headers.traceparent) ?? [];
    await eventually(async () => logLines(gateway).filter((l) => l.msg === 'request completed' && l.family !== 'health').length, (n) => n >= 4);
    const access = logLines(gateway).filter((l) => l.msg === 'request completed' && (l.status === 408 || l.status === 499));
    expect(access).toEqual([expect.objectContaining({ requestId, traceId, method: 'POST', family: 'open', route: '/api/open/v1/models/:id/chat', status: 408 })]);
    expect(await requestsCounted(gateway, ['family="open"', 'method="POST"', 'status="408"'])).toBe(before.chat + 1);
    expect(await requestsCounted(gateway, ['family="other"', 'status="408"'])).toBe(before.unparsed);
    const spans = await receiver.waitFor((all) => all.some((span) => span.spanId === spanId));
    expect(spans.find((span) => span.spanId === spanId)).toMatchObject({ traceId, name: 'POST /api/open/v1/models/:id/chat', attributes: expect.objectContaining({ 'http.response.status_code': 408 }) });
  });
});

describe('a gateway whose collector cannot be reached', () => {
  it('when the export of a request\'s span fails, then the warning carries no request\'s ids', async () => {
    const gateway = await startGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
      GATEWAY_LOG_LEVEL: 'info',
      GATEWAY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'gw-edges-')), 'data'),
    });
    try {
      expect((await fetch(`${gateway.url}/api/open/v1/catalog/models`)).status).toBe(200);
      const warning = await eventually(async () => logLines(gateway).find((l) => String(l.msg).startsWith('trace export failed')), (found) => found !== undefined, 20_000);
      expect(warning).toMatchObject({ level: 40, lostSpans: expect.any(Number) });
      expect(warning).not.toHaveProperty('requestId');
      expect(warning).not.toHaveProperty('traceId');
    } finally {
      await gateway.stop();
    }
  });
});

describe('a gateway whose collector asks for headers', () => {
  it('when OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS are set, then every export carries them (the traces one winning a name both give), and no value is logged', async () => {
    let traced: Awaited<ReturnType<typeof tracedGateway>> | undefined;
    try {
      traced = await tracedGateway({
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-secret-1,x-tenant=general',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=payg-traces',
      });
      const { receiver, gateway } = traced;
      const response = await fetch(`${gateway.url}/api/open/v1/catalog/models`);
      const spanId = /^00-[0-9a-f]{32}-([0-9a-f]{16})-01$/.exec(response.headers.get('traceparent') ?? '')?.[1];
      await receiver.waitFor((all) => all.some((span) => span.spanId === spanId));
      expect(receiver.lastHeaders).toMatchObject({ authorization: 'Bearer collector-secret-1', 'x-tenant': 'payg-traces' });
      expect(gateway.output()).not.toContain('collector-secret-1');
    } finally {
      await stopTraced(traced?.receiver, traced?.gateway);
    }
  });
});

describe('OpenTelemetry settings the exporter cannot honour', () => {
  it.each([
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'notaurl', {}],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'collector:4318', {}],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }],
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'http/json', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }],
  ])('when %s is %s, then the start is refused naming it', async (name, value, rest) => {
    const refused = await startRefusedGateway({ ...rest, [name]: value, GATEWAY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'gw-edges-')), 'data') });
    expect(refused.code).toBe(1);
    expect(refused.output).toContain('invalid configuration');
    expect(refused.output).toContain(`${name}: must be`);
    expect(refused.output).not.toContain('trace export on');
  });
});
