// The ledger app's routes for the actors' outbox and reconciliation, in process on LMDB: which
// events it has stored (one batched call), direct appends (idempotent by id), and the account
// index that makes an account without money rows part of reconciliation; pub/sub deliveries of
// one event and of a batch of them.

import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingEvent } from '../../lib/events';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { createLedgerApp } from './app';
import { LmdbLedgerStore } from './lmdb-store';

let db: LocalDb;
let server: Server;
let base: string;

beforeAll(async () => {
  db = openLocalDb(mkdtempSync(join(tmpdir(), 'ledger-outbox-')));
  server = createLedgerApp(new LmdbLedgerStore(db)).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await db.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const credit = (accountId: string, reference: string, amount = 500) =>
  billingEvent(`credit:${accountId}:pool-3:${reference}`, Date.now(), { kind: 'credit', accountId, pool: 'pool-3', balanceDelta: amount, amount, reference });

describe('ledger routes of the outbox and reconciliation', () => {
  it('when asked which events it has stored, then it names exactly the appended ones among those asked', async () => {
    const [a, b] = [credit('acct_s1', 'a'), credit('acct_s1', 'b')];
    expect((await call('POST', '/events/billing', { data: a })).body).toEqual({ status: 'SUCCESS' });
    expect(await call('POST', '/events/stored', { ids: [a.id, b.id, 'never'] })).toEqual({ status: 200, body: { stored: [a.id] } });
    expect(await call('POST', '/events/stored', { ids: [] })).toEqual({ status: 200, body: { stored: [] } });
  });

  it('when events are appended directly, then each is stored once, a repeat changes nothing and a malformed one is named as dropped', async () => {
    const events = [credit('acct_d1', 'x', 700), credit('acct_d1', 'y', 300)];
    const first = await call('POST', '/events/append', { events: [...events, { id: 'bad', topic: 'billing' }] });
    expect(first).toEqual({ status: 200, body: { stored: events.map((e) => e.id), dropped: ['bad'] } });
    expect((await call('POST', '/events/append', { events })).body).toEqual({ stored: events.map((e) => e.id), dropped: [] });
    expect((await call('GET', '/accounts/acct_d1/pools/pool-3')).body).toMatchObject({ balance: 1000, bills: 2 });
  });

  it('when a body is not a list of ids or events, then it is refused with 400 and nothing is stored', async () => {
    for (const [path, body] of [['/events/stored', { ids: 'x' }], ['/events/stored', { ids: [''] }], ['/events/append', { events: {} }], ['/events/stored', {}]] as const) {
      const answer = await call('POST', path, body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('invalid_request');
    }
  });

  it('when an account is registered, then the balances list it with zero and no rows, once, and a later credit keeps it once', async () => {
    expect((await call('PUT', '/accounts/acct_reg/pools/pool-3')).status).toBe(204);
    expect((await call('PUT', '/accounts/acct_reg/pools/pool-3')).status).toBe(204);
    const listed = async () => (await (await fetch(`${base}/balances`)).text()).trim().split('\n').map((line) => JSON.parse(line)).filter((b) => b.accountId === 'acct_reg');
    expect(await listed()).toEqual([{ accountId: 'acct_reg', pool: 'pool-3', balance: 0, runningTotal: 0, bills: 0, fundsBills: 0 }]);
    await call('POST', '/events/append', { events: [credit('acct_reg', 'first', 900)] });
    expect(await listed()).toEqual([{ accountId: 'acct_reg', pool: 'pool-3', balance: 900, runningTotal: 900, bills: 1, fundsBills: 1 }]);
  });

  it('when reconciliation asks an account\'s balance at each bill count of a span, then it gets the sum of the rows up to each, and a bad span is refused', async () => {
    await call('POST', '/events/append', { events: [credit('acct_span', 'a', 700), credit('acct_span', 'b', 200), credit('acct_span', 'c', 50)] });
    expect(await call('GET', '/accounts/acct_span/pools/pool-3/balances?from=0&to=3')).toEqual({ status: 200, body: { balances: [0, 700, 900, 950] } });
    expect(await call('GET', '/accounts/acct_span/pools/pool-3/balances?from=2&to=2')).toEqual({ status: 200, body: { balances: [900] } });
    // Counts past the rows it has are left out.
    expect(await call('GET', '/accounts/acct_span/pools/pool-3/balances?from=3&to=9')).toEqual({ status: 200, body: { balances: [950] } });
    for (const query of ['from=2&to=1', 'from=0&to=1001', 'from=x&to=1', 'to=1', 'from=1&to=2&extra=1']) {
      const answer = await call('GET', `/accounts/acct_span/pools/pool-3/balances?${query}`);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('invalid_request');
    }
  });

  it('when a delivery carries a batch of events, then each is stored once in its order, a poisoned one is dropped alone, and the same batch again changes nothing', async () => {
    const events = [credit('acct_b1', 'x', 700), credit('acct_b1', 'y', 300), credit('acct_b1', 'z', 50)];
    const batch = { events: [events[0], { id: 'poisoned', topic: 'billing' }, events[1], events[2]] };
    expect(await call('POST', '/events/billing', { data: batch })).toEqual({ status: 200, body: { status: 'SUCCESS' } });
    expect(await call('POST', '/events/billing', { data: batch })).toEqual({ status: 200, body: { status: 'SUCCESS' } });
    expect((await call('POST', '/events/stored', { ids: [...events.map((e) => e.id), 'poisoned'] })).body).toEqual({ stored: events.map((e) => e.id) });
    expect((await call('GET', '/accounts/acct_b1/pools/pool-3')).body).toMatchObject({ balance: 1050, bills: 3 });
    const rows = (await call('GET', '/accounts/acct_b1/pools/pool-3/bills/page?size=10')).body;
    expect(rows.items.map((row: { reference: string }) => row.reference)).toEqual(['z', 'y', 'x']);
  });

  it('when a batch arrives as opaque bytes (the CloudEvent data_base64, as the actors publish it), then it is stored as if sent as JSON; bytes that are not JSON are dropped', async () => {
    const events = [credit('acct_b64', 'p', 400), credit('acct_b64', 'q', 100)];
    const data_base64 = Buffer.from(JSON.stringify({ events })).toString('base64');
    const delivery = { specversion: '1.0', datacontenttype: 'application/octet-stream', data_base64 };
    expect((await call('POST', '/events/billing', delivery)).body).toEqual({ status: 'SUCCESS' });
    expect((await call('POST', '/events/stored', { ids: events.map((e) => e.id) })).body).toEqual({ stored: events.map((e) => e.id) });
    expect((await call('GET', '/accounts/acct_b64/pools/pool-3')).body).toMatchObject({ balance: 500, bills: 2 });
    expect((await call('POST', '/events/billing', { ...delivery, data_base64: Buffer.from('not json').toString('base64') })).body).toEqual({ status: 'DROP' });
  });

  it('when a batch is empty or not a batch, then it is taken as one event and dropped, storing nothing', async () => {
    for (const data of [{ events: [] }, { events: 'x' }]) expect((await call('POST', '/events/billing', { data })).body).toEqual({ status: 'DROP' });
  });
});

describe('a batch delivery whose store fails', () => {
  it('when one of its events cannot be stored, then the whole delivery asks to be retried (the stored ones are duplicates then)', async () => {
    const stored: string[] = [];
    const calls: string[][] = [];
    // Like Redis when its script fails midway: the events before the failure stay appended.
    const store = { appendAll: async (events: { id: string }[]) => {
      calls.push(events.map((event) => event.id));
      for (const event of events) {
        if (event.id.endsWith(':bad')) throw new Error('store down');
        stored.push(event.id);
      }
      return events.map(() => 'appended');
    } } as unknown as Parameters<typeof createLedgerApp>[0];
    const failing = createLedgerApp(store).listen(0, '127.0.0.1');
    await new Promise((resolve) => failing.once('listening', resolve));
    try {
      const events = [credit('acct_f1', 'ok'), credit('acct_f1', 'bad')];
      const response = await fetch(`http://127.0.0.1:${(failing.address() as AddressInfo).port}/events/billing`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: { events } }) });
      expect(await response.json()).toEqual({ status: 'RETRY' });
      expect(stored).toEqual([events[0].id]);
      expect(calls).toEqual([events.map((event) => event.id)]); // one store call for the delivery
    } finally {
      await new Promise((resolve) => failing.close(resolve));
    }
  });
});
