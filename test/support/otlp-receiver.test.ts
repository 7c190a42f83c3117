import { gzipSync } from 'node:zlib';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  decodeExportTraceRequest,
  decodeJsonTraceRequest,
  OTLP_SPAN_KIND,
  orphans,
  spanTree,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from './otlp-receiver';

const T0 = 1_700_000_000; // seconds; explicit times make start order and nanoseconds exact
const ns = (seconds: number, nanos: number): bigint => BigInt(seconds) * 1_000_000_000n + BigInt(nanos);

interface Recorded {
  all: ReadableSpan[];
  producer: ReadableSpan;
  parent: ReadableSpan;
  child: ReadableSpan;
}

/** Records, with a real SDK tracer, a server span with a client child linked to a producer span of another trace. */
async function record(): Promise<Recorded> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'gateway', 'deployment.environment': 'test' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('payg-test', '1.2.3');
  const producer = tracer.startSpan('publish usage', { kind: SpanKind.PRODUCER, startTime: [T0, 0] });
  producer.end([T0, 500]);
  const parent = tracer.startSpan('POST /v1/chat/completions', {
    kind: SpanKind.SERVER,
    startTime: [T0, 1_000],
    attributes: { 'http.request.method': 'POST', 'http.response.status_code': 200, ratio: 0.25, streamed: true },
  });
  const child: Span = tracer.startSpan(
    'invoke UsageActor',
    {
      kind: SpanKind.CLIENT,
      startTime: [T0, 2_000],
      links: [{ context: producer.spanContext() }],
      attributes: { debit: -7, huge: 2 ** 60, tags: ['a', 'b'] },
    },
    trace.setSpan(context.active(), parent),
  );
  child.addEvent('retry', { attempt: 2 }, [T0, 3_000]);
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream 503' });
  child.end([T0, 4_000]);
  parent.end([T0, 5_000]);
  await provider.forceFlush();
  const all = exporter.getFinishedSpans();
  const named = (name: string): ReadableSpan => all.find((s) => s.name === name)!;
  await provider.shutdown();
  return { all, producer: named('publish usage'), parent: named('POST /v1/chat/completions'), child: named('invoke UsageActor') };
}

function protobuf(spans: ReadableSpan[]): Uint8Array {
  return ProtobufTraceSerializer.serializeRequest(spans)!;
}

function json(spans: ReadableSpan[]): Uint8Array {
  return JsonTraceSerializer.serializeRequest(spans)!;
}

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const span = spans.find((s) => s.name === name);
  if (!span) throw new Error(`no span "${name}" among ${spans.map((s) => s.name).join(', ')}`);
  return span;
}

let recorded: Recorded;

beforeAll(async () => {
  recorded = await record();
});

describe.each([
  ['protobuf', (spans: ReadableSpan[]) => decodeExportTraceRequest(protobuf(spans))],
  ['JSON', (spans: ReadableSpan[]) => decodeJsonTraceRequest(JSON.parse(Buffer.from(json(spans)).toString('utf8')))],
])('decoding a %s request made by the OpenTelemetry SDK', (_, decode) => {
  let spans: ReceivedSpan[];

  beforeAll(() => {
    spans = decode(recorded.all);
  });

  it('when decoded, then every span keeps its ids, parent, name, scope and service', () => {
    const { producer, parent, child } = recorded;
    expect(spans).toHaveLength(3);
    expect(byName(spans, parent.name)).toMatchObject({ traceId: parent.spanContext().traceId, spanId: parent.spanContext().spanId, scope: 'payg-test', service: 'gateway' });
    expect(byName(spans, parent.name).parentSpanId).toBeUndefined();
    expect(byName(spans, child.name)).toMatchObject({ traceId: parent.spanContext().traceId, spanId: child.spanContext().spanId, parentSpanId: parent.spanContext().spanId });
    expect(byName(spans, producer.name).traceId).not.toBe(parent.spanContext().traceId);
    for (const span of spans) {
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it('when decoded, then kinds are the OTLP enum (the API kind + 1)', () => {
    expect(byName(spans, recorded.parent.name).kind).toBe(OTLP_SPAN_KIND.server);
    expect(byName(spans, recorded.child.name).kind).toBe(OTLP_SPAN_KIND.client);
    expect(byName(spans, recorded.producer.name).kind).toBe(OTLP_SPAN_KIND.producer);
  });

  it('when decoded, then string, int, double, bool, array and beyond-safe int attributes keep their types', () => {
    expect(byName(spans, recorded.parent.name).attributes).toEqual({ 'http.request.method': 'POST', 'http.response.status_code': 200, ratio: 0.25, streamed: true });
    expect(byName(spans, recorded.child.name).attributes).toEqual({ debit: -7, huge: 2n ** 60n, tags: ['a', 'b'] });
  });

  it('when decoded, then links, events, status and nanosecond times survive', () => {
    const child = byName(spans, recorded.child.name);
    expect(child.links).toEqual([{ traceId: recorded.producer.spanContext().traceId, spanId: recorded.producer.spanContext().spanId }]);
    expect(child.events).toEqual([{ name: 'retry', timeNs: ns(T0, 3_000), attributes: { attempt: 2 } }]);
    expect(child.status).toEqual({ code: 2, message: 'upstream 503' });
    expect([child.startNs, child.endNs]).toEqual([ns(T0, 2_000), ns(T0, 4_000)]);
    expect(byName(spans, recorded.parent.name).status).toEqual({ code: 0 });
  });
});

describe('decodeExportTraceRequest', () => {
  it('when both encodings carry the same spans, then they decode to the same ReceivedSpans', () => {
    const fromJson = decodeJsonTraceRequest(JSON.parse(Buffer.from(json(recorded.all)).toString('utf8')));
    expect(fromJson).toEqual(decodeExportTraceRequest(protobuf(recorded.all)));
  });

  it('when unknown 64-bit, varint and 32-bit fields are present, then they are skipped', () => {
    const unknown = [0x89, 0x06, 1, 2, 3, 4, 5, 6, 7, 8, 0xa0, 0x06, 0x96, 0x01, 0xad, 0x06, 9, 9, 9, 9]; // fields 97 (I64), 100 (varint), 101 (I32)
    const padded = Uint8Array.from([...unknown, ...protobuf(recorded.all), ...unknown]);
    expect(decodeExportTraceRequest(padded)).toEqual(decodeExportTraceRequest(protobuf(recorded.all)));
  });

  it('when the request is empty, then there are no spans', () => {
    expect(decodeExportTraceRequest(new Uint8Array())).toEqual([]);
  });

  it.each([
    // protobufjs's reader says "index out of range" for whatever runs past the end.
    ['is truncated', () => protobuf(recorded.all).slice(0, -3), /index out of range/],
    ['has resource_spans as a group', () => Uint8Array.from([0x0b]), /index out of range/],
    ['has a length past the end', () => Uint8Array.from([0x0a, 0xff, 0x01, 0x00]), /index out of range/],
    ['has a varint of 11 bytes', () => Uint8Array.from([0x08, ...new Array(10).fill(0xff), 0x01]), /index out of range/],
    ['has a 3-byte trace id', () => Uint8Array.from([0x0a, 0x09, 0x12, 0x07, 0x12, 0x05, 0x0a, 0x03, 1, 2, 3]), /trace id must be 16 bytes/],
  ])('when the request %s, then it throws', (_, body, message) => {
    expect(() => decodeExportTraceRequest(body())).toThrow(message);
  });
});

describe('decodeJsonTraceRequest', () => {
  const traceId = '5b8efff798038103d269b633813fc60c';
  const spanId = 'eee19b7ec3c1b174';
  const request = (span: Record<string, unknown>): unknown => ({ resourceSpans: [{ scopeSpans: [{ scope: { name: 's' }, spans: [span] }] }] });

  it('when ids are base64, int64 are strings and enums are names, then it decodes them like hex and numbers', () => {
    const [span] = decodeJsonTraceRequest(
      request({
        traceId: Buffer.from(traceId, 'hex').toString('base64'),
        span_id: Buffer.from(spanId, 'hex').toString('base64'),
        name: 'n',
        kind: 'SPAN_KIND_CONSUMER',
        startTimeUnixNano: '1700000000000000001',
        attributes: [{ key: 'n', value: { intValue: '-9007199254740993' } }, { key: 'b', value: { bytesValue: 'AQID' } }],
        status: { code: 'STATUS_CODE_OK' },
      }),
    );
    expect(span).toMatchObject({ traceId, spanId, kind: OTLP_SPAN_KIND.consumer, service: '', scope: 's', startNs: 1_700_000_000_000_000_001n, status: { code: 1 } });
    expect(span.attributes).toEqual({ n: -9_007_199_254_740_993n, b: Uint8Array.from([1, 2, 3]) });
  });

  it.each([
    ['is not an object', 'spans'],
    ['has resourceSpans not an array', { resourceSpans: 5 }],
    ['has a trace id of the wrong length', request({ traceId: 'abcd', spanId })],
    ['has no span id', request({ traceId })],
    ['has an intValue that is not an integer', request({ traceId, spanId, attributes: [{ key: 'k', value: { intValue: '1.5' } }] })],
    ['has a kind that is no SpanKind', request({ traceId, spanId, kind: 'SPAN_KIND_SIDEWAYS' })],
    ['has a name that is not a string', request({ traceId, spanId, name: 7 })],
  ])('when the request %s, then it throws', (_, body) => {
    expect(() => decodeJsonTraceRequest(body)).toThrow();
  });
});

describe('spanTree and orphans', () => {
  let spans: ReceivedSpan[];

  beforeAll(() => {
    spans = decodeExportTraceRequest(protobuf(recorded.all));
  });

  it('when every parent is present, then the tree nests children under parents, roots in start order, and no orphans', () => {
    expect(spanTree(spans)).toBe(['gateway · publish usage · producer', 'gateway · POST /v1/chat/completions · server', '  gateway · invoke UsageActor · client'].join('\n'));
    expect(orphans(spans)).toEqual([]);
  });

  it('when a parent is missing, then its child is an orphan listed under "orphans:"', () => {
    const partial = spans.filter((s) => s.name !== 'POST /v1/chat/completions');
    expect(orphans(partial).map((s) => s.name)).toEqual(['invoke UsageActor']);
    expect(spanTree(partial)).toBe(['gateway · publish usage · producer', 'orphans:', '  gateway · invoke UsageActor · client'].join('\n'));
  });

  it('when a parent id exists only in another trace, then the span is still an orphan', () => {
    const child = byName(spans, 'invoke UsageActor');
    const elsewhere = { ...byName(spans, 'POST /v1/chat/completions'), traceId: 'f'.repeat(32) };
    expect(orphans([child, elsewhere])).toEqual([child]);
  });
});

describe('startOtlpReceiver', () => {
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });

  afterEach(() => receiver.clear());

  afterAll(() => receiver.close());

  function post(body: Uint8Array | string, headers: Record<string, string>, path = '/v1/traces'): Promise<Response> {
    // A copy, because fetch's BodyInit wants a Uint8Array over a plain ArrayBuffer.
    return fetch(`${receiver.url}${path}`, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body), headers });
  }

  it('when started, then url and endpoint name a loopback port', () => {
    expect(receiver.endpoint).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(receiver.url).toBe(`http://${receiver.endpoint}`);
  });

  it('when sent protobuf, then it answers 200 with an empty protobuf body and keeps the spans', async () => {
    const response = await post(protobuf(recorded.all), { 'content-type': 'application/x-protobuf' });
    expect([response.status, response.headers.get('content-type'), (await response.arrayBuffer()).byteLength]).toEqual([200, 'application/x-protobuf', 0]);
    expect(receiver.spans().map((s) => s.name).sort()).toEqual(['POST /v1/chat/completions', 'invoke UsageActor', 'publish usage']);
  });

  it('when sent gzip-compressed protobuf, then it decodes the same spans', async () => {
    const response = await post(gzipSync(protobuf(recorded.all)), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    expect(response.status).toBe(200);
    expect(receiver.spans()).toEqual(decodeExportTraceRequest(protobuf(recorded.all)));
  });

  it('when sent JSON, then it answers 200 with {} and keeps the spans', async () => {
    const response = await post(json(recorded.all), { 'content-type': 'application/json; charset=utf-8' });
    expect([response.status, response.headers.get('content-type'), await response.text()]).toEqual([200, 'application/json', '{}']);
    expect(receiver.spans()).toHaveLength(3);
  });

  it('when asked for one trace, then it answers only that trace, as a tree', async () => {
    await post(protobuf(recorded.all), { 'content-type': 'application/x-protobuf' });
    const one = receiver.trace(recorded.parent.spanContext().traceId.toUpperCase());
    expect(spanTree(one)).toBe('gateway · POST /v1/chat/completions · server\n  gateway · invoke UsageActor · client');
  });

  it('when waiting for spans that arrive in two requests, then waitFor resolves once the predicate holds', async () => {
    const before = receiver.requests;
    const complete = receiver.waitFor((spans) => spans.length === 3 && orphans(spans).length === 0, 5_000);
    await post(protobuf([recorded.child]), { 'content-type': 'application/x-protobuf' });
    expect(orphans(receiver.spans()).map((s) => s.name)).toEqual(['invoke UsageActor']);
    await post(protobuf([recorded.parent, recorded.producer]), { 'content-type': 'application/x-protobuf' });
    expect((await complete).map((s) => s.name).sort()).toEqual(['POST /v1/chat/completions', 'invoke UsageActor', 'publish usage']);
    expect(receiver.requests).toBe(before + 2);
  });

  it('when the predicate never holds, then waitFor rejects showing what arrived', async () => {
    await post(protobuf([recorded.producer]), { 'content-type': 'application/x-protobuf' });
    await expect(receiver.waitFor((spans) => spans.length > 5, 50)).rejects.toThrow(/received 1:\ngateway · publish usage · producer/);
  });

  it.each([
    ['truncated protobuf', () => protobuf(recorded.all).slice(0, -3), { 'content-type': 'application/x-protobuf' }],
    ['broken gzip', () => Uint8Array.from([0x1f, 0x8b, 1, 2, 3]), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }],
    ['invalid JSON', () => '{"resourceSpans": [', { 'content-type': 'application/json' }],
    ['JSON of the wrong shape', () => '{"resourceSpans": {"scopeSpans": []}}', { 'content-type': 'application/json' }],
  ])('when sent %s, then it answers 400, keeps nothing and goes on working', async (_, body, headers) => {
    const before = receiver.requests;
    expect((await post(body(), headers)).status).toBe(400);
    expect([receiver.spans(), receiver.requests]).toEqual([[], before]);
    expect((await post(protobuf(recorded.all), { 'content-type': 'application/x-protobuf' })).status).toBe(200);
    expect(receiver.spans()).toHaveLength(3);
  });

  it('when the path, method, content type or encoding is not OTLP traces, then it answers 404 or 415', async () => {
    const body = protobuf(recorded.all);
    expect((await post(body, { 'content-type': 'application/x-protobuf' }, '/v1/metrics')).status).toBe(404);
    expect((await fetch(`${receiver.url}/v1/traces`)).status).toBe(404);
    expect((await post(body, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(body, { 'content-type': 'application/x-protobuf', 'content-encoding': 'br' })).status).toBe(415);
    expect(receiver.spans()).toEqual([]);
  });

  it('when closed with a waitFor pending, then the wait rejects', async () => {
    const other = await startOtlpReceiver();
    const pending = other.waitFor(() => false, 5_000);
    await other.close();
    await expect(pending).rejects.toThrow('OTLP receiver closed');
  });
});
