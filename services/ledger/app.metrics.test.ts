// The ledger app's own observation, in process: deliveries counted by outcome on its /metrics,
// and its log lines carrying the trace daprd forwards with each delivery.

import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingEvent } from '../../lib/events';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { createLogger } from '../../lib/logger';
import { createLedgerApp } from './app';
import { LmdbLedgerStore } from './lmdb-store';

const TRACE = '3d5a0f4e1b2c4d6e8f0a1b2c3d4e5f60';
const lines: Record<string, unknown>[] = [];
let db: LocalDb;
let server: Server;
let base: string;

beforeAll(async () => {
  db = openLocalDb(mkdtempSync(join(tmpdir(), 'ledger-metrics-')));
  const logger = createLogger('ledger', 'debug', { write: (chunk: string) => { lines.push(JSON.parse(chunk)); } });
  server = createLedgerApp(new LmdbLedgerStore(db), { logger }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await db.close();
});

const consumed = (text: string, outcome: string) =>
  Number(new RegExp(`^payg_ledger_events_consumed_total\\{topic="billing",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

function deliver(body: unknown) {
  return fetch(`${base}/events/billing`, {
    method: 'POST',
    headers: { 'content-type': 'application/cloudevents+json', traceparent: `00-${TRACE}-aaaaaaaaaaaaaaaa-01` },
    body: JSON.stringify({ data: body }),
  });
}

describe('the ledger app, observed', () => {
  it('when an event is delivered twice and a malformed one once, then /metrics counts appended, duplicate and dropped', async () => {
    const before = await (await fetch(`${base}/metrics`)).text();
    const event = billingEvent('credit:acct_m:pool-3:one', Date.now(), { kind: 'credit', accountId: 'acct_m', pool: 'pool-3', balanceDelta: 5, amount: 5, reference: 'one' });
    for (const body of [event, event, { id: 'x', topic: 'billing' }]) expect((await deliver(body)).status).toBe(200);
    const response = await fetch(`${base}/metrics`);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const after = await response.text();
    expect(consumed(after, 'appended') - consumed(before, 'appended')).toBe(1);
    expect(consumed(after, 'duplicate') - consumed(before, 'duplicate')).toBe(1);
    expect(consumed(after, 'dropped') - consumed(before, 'dropped')).toBe(1);
  });

  it('when a delivery is logged, then the line carries the trace daprd forwarded', () => {
    const logged = lines.filter((line) => line.msg === 'duplicate delivery ignored' || line.msg === 'poisoned event dropped');
    expect(logged).toHaveLength(2);
    for (const line of logged) expect(line).toMatchObject({ service: 'ledger', traceId: TRACE, requestId: expect.any(String) });
  });
});
