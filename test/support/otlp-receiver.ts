// A local OTLP/HTTP trace receiver for tests, on node:http with protobufjs decoding the OTLP
// schema (otlp-trace.proto), so a suite can point daprd (or our own SDK) at it and assert the
// spans that arrive.
//
// POST /v1/traces with content-type application/x-protobuf (what daprd's Go otlptracehttp
// sends, gzip-compressed or not) or application/json (OTLP/JSON) answers 200 with an empty
// ExportTraceServiceResponse in the request's format: no body for protobuf, `{}` for JSON.
// A body that cannot be decoded answers 400 and is dropped; another path or method 404, another
// content type or content encoding 415.
//
// Decoded spans are normalised (ReceivedSpan) the same way from either encoding:
// - ids are lowercase hex; OTLP/JSON ids may be hex (as the spec says) or base64;
// - kind is the OTLP enum, which is the API's SpanKind + 1 (OTLP_SPAN_KIND below);
// - int64 attribute values are numbers when safe integers, else bigints; timestamps are bigint ns;
// - bytes values are Uint8Arrays, arrays are arrays, kvlists are plain objects.

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { Enum, Type, loadSync, type Field, type IConversionOptions } from 'protobufjs';

/** A decoded attribute value; see the header for how each OTLP AnyValue maps. */
export type AttributeValue = string | number | bigint | boolean | Uint8Array | undefined | AttributeValue[] | { [key: string]: AttributeValue };

export type Attributes = Record<string, AttributeValue>;

export interface ReceivedSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  /** Absent on a root span. */
  parentSpanId?: string;
  /** The W3C tracestate of the span's context; absent when it has none. */
  traceState?: string;
  name: string;
  /** OTLP_SPAN_KIND: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** The resource's service.name, '' when it has none. */
  service: string;
  /** The instrumentation scope's name. */
  scope: string;
  attributes: Attributes;
  events: { name: string; timeNs: bigint; attributes: Attributes }[];
  links: { traceId: string; spanId: string }[];
  startNs: bigint;
  endNs: bigint;
  /** code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
}

export interface OtlpReceiverOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port>; the traces endpoint is `${url}/v1/traces`. */
  url: string;
  /** 127.0.0.1:<port>, the form daprd's `tracing.otel.endpointAddress` takes. */
  endpoint: string;
  /** Every span received since start (or the last clear), in arrival order. */
  spans(): ReceivedSpan[];
  /** The received spans of one trace. */
  trace(traceId: string): ReceivedSpan[];
  /** Resolves with the spans once `predicate` accepts them; rejects after timeoutMs (default 10 s) showing what came. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  /** Forgets the spans received so far (not the request count). */
  clear(): void;
  close(): Promise<void>;
  /** Export requests accepted (answered 200). */
  readonly requests: number;
  /** The HTTP headers of the last export request accepted (undefined before the first). */
  readonly lastHeaders: IncomingHttpHeaders | undefined;
}

const TRACES_PATH = '/v1/traces';
const DEFAULT_WAIT_MS = 10_000;
const gunzipAsync = promisify(gunzip);

type Format = 'protobuf' | 'json';

const FORMATS: Record<string, Format> = {
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
  'application/json': 'json',
};

const RESPONSES: Record<Format, { type: string; body: string }> = {
  protobuf: { type: 'application/x-protobuf', body: '' },
  json: { type: 'application/json', body: '{}' },
};

interface Waiter {
  check(): void;
  fail(error: Error): void;
}

export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  let received: ReceivedSpan[] = [];
  let requests = 0;
  let lastHeaders: IncomingHttpHeaders | undefined;
  const waiters = new Set<Waiter>();
  const server = createServer(function otlpHandler(req, res) {
    handle(req, res).catch(() => {
      // A request torn down mid-body gets here (or a bug): answer if still possible, never crash.
      if (!res.headersSent) send(res, 500, 'text/plain', 'receiver error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const endpoint = `127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: `http://${endpoint}`,
    endpoint,
    spans: () => [...received],
    trace: (traceId) => received.filter((s) => s.traceId === traceId.toLowerCase()),
    waitFor,
    clear: () => {
      received = [];
    },
    close,
    get requests() {
      return requests;
    },
    get lastHeaders() {
      return lastHeaders;
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url?.split('?')[0] !== TRACES_PATH) return refuse(req, res, 404, 'not found');
    const format = FORMATS[(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()];
    if (!format) return refuse(req, res, 415, 'content-type must be application/x-protobuf or application/json');
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'gzip' && encoding !== 'identity') return refuse(req, res, 415, `unsupported content-encoding ${encoding}`);
    const raw = await readBody(req);
    let spans: ReceivedSpan[];
    try {
      const body = encoding === 'gzip' ? await gunzipAsync(raw) : raw;
      spans = format === 'protobuf' ? decodeExportTraceRequest(body) : decodeJsonTraceRequest(JSON.parse(body.toString('utf8')));
    } catch (error) {
      return send(res, 400, 'text/plain', `malformed OTLP ${format} request: ${(error as Error).message}`);
    }
    requests++;
    lastHeaders = req.headers;
    received.push(...spans);
    for (const waiter of [...waiters]) waiter.check();
    send(res, 200, RESPONSES[format].type, RESPONSES[format].body);
  }

  function waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs = DEFAULT_WAIT_MS): Promise<ReceivedSpan[]> {
    const waiting = new Promise<ReceivedSpan[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiter.fail(new Error(`no accepted spans within ${timeoutMs} ms; received ${received.length}:\n${spanTree(received)}`));
      }, timeoutMs);
      const waiter: Waiter = {
        check() {
          const spans = [...received];
          let accepted: boolean;
          try {
            accepted = predicate(spans);
          } catch (error) {
            return waiter.fail(error as Error);
          }
          if (!accepted) return;
          settle();
          resolve(spans);
        },
        fail(error) {
          settle();
          reject(error);
        },
      };
      function settle(): void {
        clearTimeout(timer);
        waiters.delete(waiter);
      }
      waiters.add(waiter);
      waiter.check();
    });
    // A wait abandoned by a test that already failed must not turn close() or the timeout into an
    // unhandled rejection that hides that failure; whoever awaits still gets the rejection.
    waiting.catch(() => undefined);
    return waiting;
  }

  async function close(): Promise<void> {
    for (const waiter of [...waiters]) waiter.fail(new Error('OTLP receiver closed'));
    // daprd keeps its exporter connection alive; without this close() would wait for it.
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  req.resume();
  send(res, status, 'text/plain', message);
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The OTLP SpanKind enum (the API's SpanKind is one less: it has no "unspecified"). */
export const OTLP_SPAN_KIND = { unspecified: 0, internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

const KIND_NAMES = Object.keys(OTLP_SPAN_KIND);

/** Spans whose parent is not among `spans` (matched within the same trace). */
export function orphans(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const ids = new Set(spans.map(key));
  return spans.filter((s) => s.parentSpanId !== undefined && !ids.has(parentKey(s)));
}

/**
 * One line per span, "service · name · kind", children indented under their parent in start
 * order; roots first, then spans whose parent is missing under "orphans:". A missing service is "?".
 */
export function spanTree(spans: readonly ReceivedSpan[]): string {
  const ordered = [...spans].sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
  const children = new Map<string, ReceivedSpan[]>();
  for (const span of ordered) {
    if (span.parentSpanId === undefined) continue;
    const siblings = children.get(parentKey(span)) ?? [];
    children.set(parentKey(span), [...siblings, span]);
  }
  const lines: string[] = [];
  const render = (span: ReceivedSpan, depth: number): void => {
    const kind = KIND_NAMES[span.kind] ?? `kind ${span.kind}`;
    lines.push(`${'  '.repeat(depth)}${span.service || '?'} · ${span.name} · ${kind}`);
    for (const child of children.get(key(span)) ?? []) render(child, depth + 1);
  };
  for (const root of ordered.filter((s) => s.parentSpanId === undefined)) render(root, 0);
  const lost = orphans(ordered);
  if (lost.length > 0) lines.push('orphans:');
  for (const orphan of lost) render(orphan, 1);
  return lines.join('\n');
}

function key(span: ReceivedSpan): string {
  return `${span.traceId}/${span.spanId}`;
}

function parentKey(span: ReceivedSpan): string {
  return `${span.traceId}/${span.parentSpanId}`;
}

// ---- Decoding: protobufjs, with the OTLP trace schema in otlp-trace.proto. Both encodings
// become the same ExportTraceServiceRequest message (protobuf by decode, OTLP/JSON by fromObject
// after the adjustments OTLP/JSON needs), read into ReceivedSpans by one function.

const TRACE_ID_BYTES = 16;
const SPAN_ID_BYTES = 8;
const schema = loadSync(join(__dirname, 'otlp-trace.proto'));
const ExportTraceServiceRequest = schema.lookupType('otlp.ExportTraceServiceRequest');
/** Plain objects with every field present: int64 as decimal strings, enums as numbers, the set oneof named. */
const PLAIN: IConversionOptions = { longs: String, enums: Number, defaults: true, arrays: true, objects: true, oneofs: true };

/** Decodes a protobuf ExportTraceServiceRequest; throws on a malformed one. */
export function decodeExportTraceRequest(buf: Uint8Array): ReceivedSpan[] {
  return spansOf(ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(buf), PLAIN) as PlainRequest);
}

/** Decodes a parsed OTLP/JSON ExportTraceServiceRequest; throws on a malformed one. */
export function decodeJsonTraceRequest(json: unknown): ReceivedSpan[] {
  const message = ExportTraceServiceRequest.fromObject(fromOtlpJson(ExportTraceServiceRequest, json, 'request'));
  return spansOf(ExportTraceServiceRequest.toObject(message, PLAIN) as PlainRequest);
}

// -- The decoded request, as toObject(PLAIN) gives it.

interface PlainRequest {
  resourceSpans: { resource?: { attributes: PlainKeyValue[] }; scopeSpans: { scope?: { name: string }; spans: PlainSpan[] }[] }[];
}
interface PlainSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId: Uint8Array;
  traceState: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: PlainKeyValue[];
  events: { timeUnixNano: string; name: string; attributes: PlainKeyValue[] }[];
  links: { traceId: Uint8Array; spanId: Uint8Array }[];
  status?: { message: string; code: number };
}
interface PlainKeyValue {
  key: string;
  value?: PlainAnyValue;
}
interface PlainAnyValue {
  /** The name of the field set, if any. */
  value?: 'stringValue' | 'boolValue' | 'intValue' | 'doubleValue' | 'arrayValue' | 'kvlistValue' | 'bytesValue';
  stringValue: string;
  boolValue: boolean;
  intValue: string;
  doubleValue: number;
  arrayValue?: { values: PlainAnyValue[] };
  kvlistValue?: { values: PlainKeyValue[] };
  bytesValue: Uint8Array;
}

function spansOf(request: PlainRequest): ReceivedSpan[] {
  return request.resourceSpans.flatMap((resourceSpans) => {
    const service = serviceName(attributesOf(resourceSpans.resource?.attributes ?? []));
    return resourceSpans.scopeSpans.flatMap((scopeSpans) => scopeSpans.spans.map((span) => spanOf(span, service, scopeSpans.scope?.name ?? '')));
  });
}

function spanOf(span: PlainSpan, service: string, scope: string): ReceivedSpan {
  const received: ReceivedSpan = {
    traceId: hex(span.traceId),
    spanId: hex(span.spanId),
    name: span.name,
    kind: span.kind,
    service,
    scope,
    attributes: attributesOf(span.attributes),
    events: span.events.map((event) => ({ name: event.name, timeNs: BigInt(event.timeUnixNano), attributes: attributesOf(event.attributes) })),
    links: span.links.map((link) => ({ traceId: hex(link.traceId), spanId: hex(link.spanId) })),
    startNs: BigInt(span.startTimeUnixNano),
    endNs: BigInt(span.endTimeUnixNano),
    status: { code: span.status?.code ?? 0 },
  };
  if (span.parentSpanId.length > 0) received.parentSpanId = hex(span.parentSpanId);
  if (span.traceState) received.traceState = span.traceState;
  if (span.status?.message) received.status.message = span.status.message;
  return checked(received);
}

function attributesOf(keyValues: PlainKeyValue[]): Attributes {
  const attributes: Attributes = {};
  for (const kv of keyValues) attributes[kv.key] = kv.value && anyValueOf(kv.value);
  return attributes;
}

function anyValueOf(any: PlainAnyValue): AttributeValue {
  switch (any.value) {
    case undefined:
      return undefined;
    case 'stringValue':
      return any.stringValue;
    case 'boolValue':
      return any.boolValue;
    case 'intValue':
      return int64(BigInt(any.intValue));
    case 'doubleValue':
      return any.doubleValue;
    case 'arrayValue':
      return (any.arrayValue?.values ?? []).map(anyValueOf);
    case 'kvlistValue':
      return attributesOf(any.kvlistValue?.values ?? []);
    case 'bytesValue':
      return new Uint8Array(any.bytesValue);
  }
}

// -- OTLP/JSON into what protobufjs's fromObject takes. fromObject already reads enums by name
// or number, int64 from strings or numbers and bytes from base64; what it lacks:
// - protojson's snake_case field names (accepted as well as lowerCamelCase);
// - ids in hex, as OTLP/JSON writes them (base64 is accepted too);
// - refusing what is not the schema's shape: fromObject coerces ("1.5" as an int64 reads 1)
//   and ignores what does not fit, where a broken exporter should get a 400.

type Json = Record<string, unknown>;

const ID_FIELDS: Record<string, number> = { traceId: TRACE_ID_BYTES, spanId: SPAN_ID_BYTES, parentSpanId: SPAN_ID_BYTES };
const INT64_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

function fromOtlpJson(type: Type, json: unknown, path: string): Json {
  const object = asJsonObject(json, path);
  const out: Json = {};
  for (const [name, value] of Object.entries(object)) {
    const field = type.fields[name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())];
    if (!field || value === null || value === undefined) continue;
    const at = `${path}.${field.name}`;
    if (!field.repeated) out[field.name] = fieldFromOtlpJson(field, value, at);
    else if (Array.isArray(value)) out[field.name] = value.map((item, i) => fieldFromOtlpJson(field, item, `${at}[${i}]`));
    else throw new Error(`${at} must be an array`);
  }
  return out;
}

function fieldFromOtlpJson(field: Field, value: unknown, path: string): unknown {
  const resolved = field.resolve().resolvedType;
  if (resolved instanceof Type) return fromOtlpJson(resolved, value, path);
  if (resolved instanceof Enum) {
    if ((typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && value in resolved.values)) return value;
    throw new Error(`${path} must be an enum number or one of ${Object.keys(resolved.values).join(', ')}`);
  }
  if (field.type === 'bytes' && field.name in ID_FIELDS) return idFromOtlpJson(value, ID_FIELDS[field.name], path);
  if (INT64_TYPES.has(field.type)) {
    // A number's exact value (String(2 ** 60) would round it to 1152921504606847000).
    if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value).toString();
    if (typeof value === 'string' && /^-?\d+$/.test(value)) return value;
    throw new Error(`${path} must be an integer or a decimal string`);
  }
  if (field.type === 'double') {
    // protojson writes NaN and the infinities as strings.
    if (typeof value === 'number' || typeof value === 'string') return Number(value);
    throw new Error(`${path} must be a number`);
  }
  const expected = field.type === 'bool' ? 'boolean' : field.type === 'string' || field.type === 'bytes' ? 'string' : 'number';
  if (typeof value !== expected) throw new Error(`${path} must be a ${expected}`);
  return value;
}

/** OTLP/JSON says hex; base64 (protojson's default for bytes) is accepted too. */
function idFromOtlpJson(value: unknown, size: number, path: string): Buffer {
  if (typeof value !== 'string') throw new Error(`${path} must be a string`);
  if (value.length === size * 2 && /^[0-9a-f]+$/i.test(value)) return Buffer.from(value, 'hex');
  const decoded = /^[A-Za-z0-9+/_-]*={0,2}$/.test(value) ? Buffer.from(value, 'base64') : undefined;
  // Empty stays empty: the check of the decoded span says what is missing.
  if (decoded === undefined || (decoded.length !== size && decoded.length !== 0)) throw new Error(`${path} is neither ${size * 2} hex digits nor base64 of ${size} bytes`);
  return decoded;
}

function asJsonObject(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} must be an object`);
  return value as Json;
}

// -- Shared by both encodings.

/** Ids of the wrong size mean a broken encoder; refuse them rather than store spans no tree can place. */
function checked(span: ReceivedSpan): ReceivedSpan {
  const ids: [string, string | undefined, number][] = [
    ['trace id', span.traceId, TRACE_ID_BYTES],
    ['span id', span.spanId, SPAN_ID_BYTES],
    ['parent span id', span.parentSpanId, SPAN_ID_BYTES],
    ...span.links.flatMap((l): [string, string, number][] => [['link trace id', l.traceId, TRACE_ID_BYTES], ['link span id', l.spanId, SPAN_ID_BYTES]]),
  ];
  for (const [what, id, size] of ids) {
    if (id !== undefined && id.length !== size * 2) throw new Error(`span "${span.name}": ${what} must be ${size} bytes, got "${id}"`);
  }
  return span;
}

function serviceName(resource: Attributes): string {
  const name = resource['service.name'];
  return typeof name === 'string' ? name : '';
}

/** int64 as a number when it is a safe integer, else a bigint, so no value is silently rounded. */
function int64(value: bigint): number | bigint {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

function hex(buf: Uint8Array): string {
  return Buffer.from(buf).toString('hex');
}
