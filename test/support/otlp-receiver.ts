// A local OTLP/HTTP trace receiver for tests, on bare node:http and without dependencies,
// so a suite can point daprd (or our own SDK) at it and assert the spans that arrive.
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

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

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

// ---- Decoding. Field numbers are those of opentelemetry-proto (trace/v1/trace.proto,
// common/v1/common.proto, resource/v1/resource.proto, collector/trace/v1/trace_service.proto).

const TRACE_ID_BYTES = 16;
const SPAN_ID_BYTES = 8;
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];
const SPAN_KINDS = KIND_NAMES.map((name) => `SPAN_KIND_${name.toUpperCase()}`);

/** Decodes a protobuf ExportTraceServiceRequest; throws on a malformed one. */
export function decodeExportTraceRequest(buf: Uint8Array): ReceivedSpan[] {
  const resourceSpans = fields(buf).filter((f) => f.no === 1);
  return resourceSpans.flatMap((f) => resourceSpansFromProto(bytes(f)));
}

/** Decodes a parsed OTLP/JSON ExportTraceServiceRequest; throws on a malformed one. */
export function decodeJsonTraceRequest(json: unknown): ReceivedSpan[] {
  return list(object(json, 'request'), 'resourceSpans').flatMap((resourceSpans) => {
    const resource = optionalObject(resourceSpans, 'resource');
    const service = serviceName(resource ? attributesFromJson(resource, 'attributes') : {});
    return list(resourceSpans, 'scopeSpans').flatMap((scopeSpans) => {
      const scope = text(optionalObject(scopeSpans, 'scope') ?? {}, 'name');
      return list(scopeSpans, 'spans').map((span) => spanFromJson(span, service, scope));
    });
  });
}

// -- Protobuf wire format: every field is read eagerly, so an unknown one is skipped by
// construction. Groups (wire types 3 and 4) are deprecated and refused.

type Field = { no: number; wire: 0; value: bigint } | { no: number; wire: 1 | 2 | 5; value: Uint8Array };

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  const at = { pos: 0 };
  while (at.pos < buf.length) {
    const tag = readVarint(buf, at);
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (no === 0) throw new Error('field number 0');
    if (wire === 0) out.push({ no, wire, value: readVarint(buf, at) });
    else if (wire === 1) out.push({ no, wire, value: take(buf, at, 8) });
    else if (wire === 2) out.push({ no, wire, value: take(buf, at, Number(readVarint(buf, at))) });
    else if (wire === 5) out.push({ no, wire, value: take(buf, at, 4) });
    else throw new Error(`unsupported wire type ${wire} (field ${no})`);
  }
  return out;
}

function readVarint(buf: Uint8Array, at: { pos: number }): bigint {
  let value = 0n;
  for (let shift = 0n; shift < 70n; shift += 7n) {
    if (at.pos >= buf.length) throw new Error('truncated varint');
    const byte = buf[at.pos++];
    value |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return BigInt.asUintN(64, value);
  }
  throw new Error('varint longer than 10 bytes');
}

function take(buf: Uint8Array, at: { pos: number }, length: number): Uint8Array {
  if (at.pos + length > buf.length) throw new Error('truncated field');
  const slice = buf.subarray(at.pos, at.pos + length);
  at.pos += length;
  return slice;
}

function bytes(f: Field): Uint8Array {
  if (f.wire !== 2) throw new Error(`field ${f.no}: expected length-delimited, got wire type ${f.wire}`);
  return f.value;
}

function varint(f: Field): bigint {
  if (f.wire !== 0) throw new Error(`field ${f.no}: expected varint, got wire type ${f.wire}`);
  return f.value;
}

function fixed64(f: Field): DataView {
  if (f.wire !== 1) throw new Error(`field ${f.no}: expected 64-bit, got wire type ${f.wire}`);
  return new DataView(f.value.buffer, f.value.byteOffset, 8);
}

function utf8(f: Field): string {
  return Buffer.from(bytes(f)).toString('utf8');
}

function resourceSpansFromProto(buf: Uint8Array): ReceivedSpan[] {
  const all = fields(buf);
  // A resource may follow its scope_spans on the wire, so read it first.
  const attributes: Attributes = {};
  for (const resource of all.filter((f) => f.no === 1)) {
    for (const kv of fields(bytes(resource)).filter((f) => f.no === 1)) keyValueFromProto(bytes(kv), attributes);
  }
  const service = serviceName(attributes);
  return all.filter((f) => f.no === 2).flatMap((scopeSpans) => {
    const scopeFields = fields(bytes(scopeSpans));
    let scope = '';
    for (const s of scopeFields.filter((f) => f.no === 1)) {
      for (const name of fields(bytes(s)).filter((f) => f.no === 1)) scope = utf8(name);
    }
    return scopeFields.filter((f) => f.no === 2).map((span) => spanFromProto(bytes(span), service, scope));
  });
}

function spanFromProto(buf: Uint8Array, service: string, scope: string): ReceivedSpan {
  const span = emptySpan(service, scope);
  for (const f of fields(buf)) {
    if (f.no === 1) span.traceId = hex(bytes(f));
    else if (f.no === 2) span.spanId = hex(bytes(f));
    else if (f.no === 4 && bytes(f).length > 0) span.parentSpanId = hex(bytes(f));
    else if (f.no === 5) span.name = utf8(f);
    else if (f.no === 6) span.kind = Number(varint(f));
    else if (f.no === 7) span.startNs = fixed64(f).getBigUint64(0, true);
    else if (f.no === 8) span.endNs = fixed64(f).getBigUint64(0, true);
    else if (f.no === 9) keyValueFromProto(bytes(f), span.attributes);
    else if (f.no === 11) span.events.push(eventFromProto(bytes(f)));
    else if (f.no === 13) span.links.push(linkFromProto(bytes(f)));
    else if (f.no === 15) span.status = statusFromProto(bytes(f));
  }
  return checked(span);
}

function eventFromProto(buf: Uint8Array): ReceivedSpan['events'][number] {
  const event = { name: '', timeNs: 0n, attributes: {} };
  for (const f of fields(buf)) {
    if (f.no === 1) event.timeNs = fixed64(f).getBigUint64(0, true);
    else if (f.no === 2) event.name = utf8(f);
    else if (f.no === 3) keyValueFromProto(bytes(f), event.attributes);
  }
  return event;
}

function linkFromProto(buf: Uint8Array): ReceivedSpan['links'][number] {
  const link = { traceId: '', spanId: '' };
  for (const f of fields(buf)) {
    if (f.no === 1) link.traceId = hex(bytes(f));
    else if (f.no === 2) link.spanId = hex(bytes(f));
  }
  return link;
}

function statusFromProto(buf: Uint8Array): ReceivedSpan['status'] {
  const status: ReceivedSpan['status'] = { code: 0 };
  for (const f of fields(buf)) {
    if (f.no === 2 && bytes(f).length > 0) status.message = utf8(f);
    else if (f.no === 3) status.code = Number(varint(f));
  }
  return status;
}

function keyValueFromProto(buf: Uint8Array, into: Attributes): void {
  let key = '';
  let value: AttributeValue;
  for (const f of fields(buf)) {
    if (f.no === 1) key = utf8(f);
    else if (f.no === 2) value = anyValueFromProto(bytes(f));
  }
  into[key] = value;
}

function anyValueFromProto(buf: Uint8Array): AttributeValue {
  let value: AttributeValue;
  for (const f of fields(buf)) {
    if (f.no === 1) value = utf8(f);
    else if (f.no === 2) value = varint(f) !== 0n;
    else if (f.no === 3) value = int64(BigInt.asIntN(64, varint(f)));
    else if (f.no === 4) value = fixed64(f).getFloat64(0, true);
    else if (f.no === 5) value = fields(bytes(f)).filter((v) => v.no === 1).map((v) => anyValueFromProto(bytes(v)));
    else if (f.no === 6) {
      const kvlist: Attributes = {};
      for (const kv of fields(bytes(f)).filter((v) => v.no === 1)) keyValueFromProto(bytes(kv), kvlist);
      value = kvlist;
    } else if (f.no === 7) value = new Uint8Array(bytes(f));
  }
  return value;
}

// -- OTLP/JSON: lowerCamelCase names (snake_case accepted too, as protojson does), int64 as
// string or number, enums as number or name, ids hex (or base64), bytes base64.

type Json = Record<string, unknown>;

function spanFromJson(json: Json, service: string, scope: string): ReceivedSpan {
  const span = emptySpan(service, scope);
  span.traceId = idFromJson(json, 'traceId', TRACE_ID_BYTES) ?? '';
  span.spanId = idFromJson(json, 'spanId', SPAN_ID_BYTES) ?? '';
  const parentSpanId = idFromJson(json, 'parentSpanId', SPAN_ID_BYTES);
  if (parentSpanId !== undefined) span.parentSpanId = parentSpanId;
  span.name = text(json, 'name');
  span.kind = enumFromJson(json, 'kind', SPAN_KINDS);
  span.startNs = BigInt.asUintN(64, integer(field(json, 'startTimeUnixNano'), 'startTimeUnixNano'));
  span.endNs = BigInt.asUintN(64, integer(field(json, 'endTimeUnixNano'), 'endTimeUnixNano'));
  span.attributes = attributesFromJson(json, 'attributes');
  span.events = list(json, 'events').map((e) => ({
    name: text(e, 'name'),
    timeNs: BigInt.asUintN(64, integer(field(e, 'timeUnixNano'), 'timeUnixNano')),
    attributes: attributesFromJson(e, 'attributes'),
  }));
  span.links = list(json, 'links').map((l) => ({
    traceId: idFromJson(l, 'traceId', TRACE_ID_BYTES) ?? '',
    spanId: idFromJson(l, 'spanId', SPAN_ID_BYTES) ?? '',
  }));
  const status = optionalObject(json, 'status');
  if (status) {
    span.status = { code: enumFromJson(status, 'code', STATUS_CODES) };
    const message = text(status, 'message');
    if (message !== '') span.status.message = message;
  }
  return checked(span);
}

function attributesFromJson(json: Json, name: string): Attributes {
  const attributes: Attributes = {};
  for (const kv of list(json, name)) attributes[text(kv, 'key')] = anyValueFromJson(field(kv, 'value'));
  return attributes;
}

const ANY_VALUE_FIELDS = ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] as const;

function anyValueFromJson(json: unknown): AttributeValue {
  if (json === undefined || json === null) return undefined;
  const any = object(json, 'AnyValue');
  const name = ANY_VALUE_FIELDS.find((n) => field(any, n) !== undefined && field(any, n) !== null);
  const value = name === undefined ? undefined : field(any, name);
  switch (name) {
    case undefined:
      return undefined;
    case 'stringValue':
      return text(any, name);
    case 'boolValue':
      if (typeof value !== 'boolean') throw new Error('boolValue must be a boolean');
      return value;
    case 'intValue':
      return int64(integer(value, name));
    case 'doubleValue':
      // protojson writes NaN and the infinities as strings.
      if (typeof value !== 'number' && typeof value !== 'string') throw new Error('doubleValue must be a number');
      return Number(value);
    case 'arrayValue':
      return list(object(value, name), 'values').map((v) => anyValueFromJson(v));
    case 'kvlistValue':
      return attributesFromJson(object(value, name), 'values');
    case 'bytesValue':
      return new Uint8Array(Buffer.from(text(any, name), 'base64'));
  }
}

/** OTLP/JSON says hex; base64 (protojson's default for bytes) is accepted too. Empty → undefined. */
function idFromJson(json: Json, name: string, size: number): string | undefined {
  const value = text(json, name);
  if (value === '') return undefined;
  if (value.length === size * 2 && /^[0-9a-f]+$/i.test(value)) return value.toLowerCase();
  const decoded = /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : undefined;
  if (decoded?.length !== size) throw new Error(`${name} is neither ${size * 2} hex digits nor base64 of ${size} bytes`);
  return decoded.toString('hex');
}

function enumFromJson(json: Json, name: string, names: readonly string[]): number {
  const value = field(json, name);
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && names.includes(value)) return names.indexOf(value);
  throw new Error(`${name} must be an enum number or one of ${names.join(', ')}`);
}

function integer(value: unknown, name: string): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new Error(`${name} must be an integer or a decimal string`);
}

function field(json: Json, name: string): unknown {
  return json[name] ?? json[name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

function object(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} must be an object`);
  return value as Json;
}

function optionalObject(json: Json, name: string): Json | undefined {
  const value = field(json, name);
  return value === undefined || value === null ? undefined : object(value, name);
}

function list(json: Json, name: string): Json[] {
  const value = field(json, name);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`${name} must be an array`);
  return value.map((item) => object(item, `${name}[]`));
}

function text(json: Json, name: string): string {
  const value = field(json, name);
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new Error(`${name} must be a string`);
  return value;
}

// -- Shared by both encodings.

function emptySpan(service: string, scope: string): ReceivedSpan {
  return { traceId: '', spanId: '', name: '', kind: 0, service, scope, attributes: {}, events: [], links: [], startNs: 0n, endNs: 0n, status: { code: 0 } };
}

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
