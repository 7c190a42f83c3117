// The ledger app's consume spans, in process: each event's `process` span says whether the event
// was stored. One the store could not take (the delivery is retried) or one dropped as poisoned
// is a failed consumption, and its span is in error; a stored one (a duplicate too) is not.

import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import { tracing as sdkTrace } from '@opentelemetry/sdk-node';
import { billingEvent, type EventEnvelope } from '../../lib/events';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { startTracing, stopTracing } from '../../lib/tracing';
import { createLedgerApp } from './app';
import { LmdbLedgerStore } from './lmdb-store';

const TRACE = '3d5a0f4e1b2c4d6e8f0a1b2c3d4e5f61';
const exporter = new sdkTrace.InMemorySpanExporter();
let db: LocalDb;
let server: Server;
let base: string;
let storeDown = false;

beforeAll(async () => {
  expect(startTracing('ledger', { exporter })).toBe(true);
  db = openLocalDb(mkdtempSync(join(tmpdir(), 'ledger-tracing-')));
  const store = new LmdbLedgerStore(db);
  const appendAll = store.appendAll.bind(store);
  store.appendAll = (events: readonly EventEnvelope[]) => (storeDown ? Promise.reject(new Error('store unreachable')) : appendAll(events));
  server = createLedgerApp(store).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await db.close();
  await stopTracing();
});

beforeEach(() => exporter.reset());

const credit = (reference: string, publishSpan: string) => ({
  ...billingEvent(`credit:acct_t:pool-3:${reference}`, Date.now(), { kind: 'credit', accountId: 'acct_t', pool: 'pool-3', balanceDelta: 5, amount: 5, reference }),
  traceparent: `00-${TRACE}-${publishSpan}-01`,
});

async function deliver(data: unknown): Promise<string> {
  const response = await fetch(`${base}/events/billing`, { method: 'POST', headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify({ data }) });
  return ((await response.json()) as { status: string }).status;
}

const consumes = () => exporter.getFinishedSpans().filter((span) => span.name === 'process billing');

describe('the ledger app, traced', () => {
  it('when the store cannot take a batch, then each event\'s process span is in error, and the redelivery that stores them is not', async () => {
    const batch = { events: [credit('a', '00000000000000a1'), credit('b', '00000000000000b1')] };
    storeDown = true;
    expect(await deliver(batch)).toBe('RETRY');
    expect(consumes().map((span) => [span.parentSpanContext?.spanId, span.status.code])).toEqual([
      ['00000000000000a1', SpanStatusCode.ERROR],
      ['00000000000000b1', SpanStatusCode.ERROR],
    ]);
    exporter.reset();
    storeDown = false;
    expect(await deliver(batch)).toBe('SUCCESS');
    expect(consumes().map((span) => span.status.code)).toEqual([SpanStatusCode.UNSET, SpanStatusCode.UNSET]);
  });

  it('when a batch\'s events carry the tracestate of the requests that made them, then each process span carries its own', async () => {
    const batch = { events: [{ ...credit('s1', '00000000000000d1'), tracestate: 'rojo=1' }, credit('s2', '00000000000000d2')] };
    expect(await deliver(batch)).toBe('SUCCESS');
    expect(consumes().map((span) => [span.parentSpanContext?.spanId, span.spanContext().traceState?.serialize()])).toEqual([
      ['00000000000000d1', 'rojo=1'],
      ['00000000000000d2', undefined],
    ]);
  });

  it('when a single envelope is poisoned or cannot be stored, then its process span is in error', async () => {
    expect(await deliver({ id: 'x', topic: 'billing' })).toBe('DROP');
    storeDown = true;
    expect(await deliver(credit('c', '00000000000000c1'))).toBe('RETRY');
    storeDown = false;
    expect(consumes().map((span) => span.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.ERROR]);
  });
});
