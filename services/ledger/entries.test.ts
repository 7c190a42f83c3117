import { billingEvent, usageEvent, type UsageData } from '../../lib/events';
import { eventParts, parseEvent, PoisonedEvent, toRows, type UsageRow } from './entries';
import { dayOf } from './spending';

const usage = (lines: UsageData['lines'], charged: number) =>
  usageEvent('hold-1:usage', Date.parse('2025-03-01T10:00:00.000Z'), {
    accountId: 'acct_1', pool: 'pool-3', holdId: 'hold-1', requestId: 'req-1', model: 'sim-chat', profileId: 'p-1', lines, charged,
  });

describe('ledger rows', () => {
  it('when a usage event carries its bill, then it stands for the billing event of that bill and the usage event without it', () => {
    const lines = [{ unit: 'TEXT_INPUT' as const, quantity: 8, unitPrice: 100, cost: 800 }];
    const plain = usage(lines, 800);
    const event = parseEvent(JSON.parse(JSON.stringify({ ...plain, traceparent: 't', data: { ...plain.data, bill: { id: 'hold-1:charge', kind: 'charge', balanceDelta: -800, amount: 800 } } })));
    const [bill, rest] = eventParts(event);
    expect(bill).toEqual({ ...billingEvent('hold-1:charge', Date.parse(plain.occurredAt), {
      accountId: 'acct_1', pool: 'pool-3', holdId: 'hold-1', requestId: 'req-1', model: 'sim-chat', profileId: 'p-1', kind: 'charge', balanceDelta: -800, amount: 800,
    }), traceparent: 't' });
    // The bill row's fields in a billing event's order: the same JSON line in an export.
    expect(JSON.stringify(toRows(bill))).toBe(JSON.stringify(toRows(billingEvent('hold-1:charge', Date.parse(plain.occurredAt), {
      accountId: 'acct_1', pool: 'pool-3', holdId: 'hold-1', requestId: 'req-1', model: 'sim-chat', profileId: 'p-1', kind: 'charge', balanceDelta: -800, amount: 800,
    }))));
    expect(rest).toEqual({ ...plain, traceparent: 't' });
    expect(eventParts(plain)).toEqual([plain]);
  });

  it('when a usage event carries a bill that is no charge, then it is poisoned', () => {
    const plain = usage([], 0);
    for (const bill of [{ id: 'x', kind: 'credit', balanceDelta: 0, amount: 0 }, { id: 'x', kind: 'charge', balanceDelta: 5, amount: 5 }, { kind: 'charge', balanceDelta: 0, amount: 0 }]) {
      expect(() => parseEvent({ ...plain, data: { ...plain.data, bill } })).toThrow(PoisonedEvent);
    }
  });

  it('when a billing event becomes a row, then it is the event data with its id and time', () => {
    const event = billingEvent('credit:acct_1:pool-3:welcome', 0, { kind: 'credit', accountId: 'acct_1', pool: 'pool-3', balanceDelta: 5, amount: 5, reference: 'welcome' });
    expect(toRows(event)).toEqual([{ id: event.id, occurredAt: '1970-01-01T00:00:00.000Z', kind: 'credit', accountId: 'acct_1', pool: 'pool-3', balanceDelta: 5, amount: 5, reference: 'welcome' }]);
  });

  it('when a usage event is charged in full, then there is one row per line, each charged its own cost', () => {
    const rows = toRows(usage([{ unit: 'TEXT_INPUT', quantity: 8, unitPrice: 100, cost: 800 }, { unit: 'TEXT_OUTPUT', quantity: 16, unitPrice: 400, cost: 6400 }], 7200)) as UsageRow[];
    expect(rows).toEqual([
      { id: 'hold-1:usage:TEXT_INPUT', occurredAt: '2025-03-01T10:00:00.000Z', accountId: 'acct_1', pool: 'pool-3', holdId: 'hold-1', requestId: 'req-1', model: 'sim-chat', profileId: 'p-1', unit: 'TEXT_INPUT', quantity: 8, unitPrice: 100, cost: 800, charged: 800, platformBorne: false },
      { id: 'hold-1:usage:TEXT_OUTPUT', occurredAt: '2025-03-01T10:00:00.000Z', accountId: 'acct_1', pool: 'pool-3', holdId: 'hold-1', requestId: 'req-1', model: 'sim-chat', profileId: 'p-1', unit: 'TEXT_OUTPUT', quantity: 16, unitPrice: 400, cost: 6400, charged: 6400, platformBorne: false },
    ]);
  });

  it('when the charge was capped at the hold, then the lines are covered in order and the shares add up to the charge', () => {
    const rows = toRows(usage([{ unit: 'TEXT_INPUT', quantity: 8, unitPrice: 100, cost: 800 }, { unit: 'TEXT_OUTPUT', quantity: 16, unitPrice: 400, cost: 6400 }], 5000)) as UsageRow[];
    expect(rows.map((r) => [r.charged, r.platformBorne])).toEqual([[800, false], [4200, false]]);
  });

  it('when the platform bore the cost (charged 0), then every row says so and is charged 0', () => {
    const rows = toRows(usage([{ unit: 'IMAGE', quantity: 1, unitPrice: 40_000_000, cost: 40_000_000 }], 0)) as UsageRow[];
    expect(rows).toEqual([expect.objectContaining({ id: 'hold-1:usage:IMAGE', cost: 40_000_000, charged: 0, platformBorne: true })]);
    const free = toRows(usage([{ unit: 'TEXT_INPUT', quantity: 3, unitPrice: 0, cost: 0 }], 0)) as UsageRow[];
    expect(free[0]).toMatchObject({ charged: 0, platformBorne: false });
  });

  it('when a usage event carries a route, then every row of the call has it; an event without one gives rows without', () => {
    const route = { upstream: 'b', attempts: [{ upstream: 'a', outcome: 'unavailable' as const, durationMs: 120 }, { upstream: 'b', outcome: 'served' as const, durationMs: 340 }] };
    const event = usage([{ unit: 'TEXT_INPUT', quantity: 8, unitPrice: 100, cost: 800 }, { unit: 'TEXT_OUTPUT', quantity: 16, unitPrice: 400, cost: 6400 }], 7200);
    const rows = toRows({ ...event, data: { ...event.data, route } }) as UsageRow[];
    expect(rows.map((r) => r.route)).toEqual([route, route]);
    expect(parseEvent(JSON.parse(JSON.stringify({ ...event, data: { ...event.data, route } }))).data).toMatchObject({ route });
    expect(() => parseEvent({ ...event, data: { ...event.data, route: { upstream: 'b', attempts: [{ upstream: 'b', outcome: 'lost', durationMs: 1 }] } } })).toThrow(PoisonedEvent);
    expect(toRows(event).every((r) => !('route' in r))).toBe(true);
  });

  it('when one event repeats a unit, then the row ids stay distinct', () => {
    const rows = toRows(usage([{ unit: 'SECOND', quantity: 1, unitPrice: 1, cost: 1 }, { unit: 'SECOND', quantity: 2, unitPrice: 1, cost: 2 }], 3));
    expect(rows.map((r) => r.id)).toEqual(['hold-1:usage:SECOND', 'hold-1:usage:SECOND:2']);
  });

  it('when an event off the wire is malformed, then it is poisoned', () => {
    expect(() => parseEvent({ ...usage([], 0), data: { accountId: 'acct_1' } })).toThrow(PoisonedEvent);
    expect(parseEvent(JSON.parse(JSON.stringify(usage([], 0)))).id).toBe('hold-1:usage');
  });
});

describe('dayOf', () => {
  it('when an instant is canonical, offset, leap-day, past a short month or out of range, then its UTC day is the one Date gives', () => {
    const instants = [
      '2026-11-29T10:00:00.000Z', '2026-11-29T23:59:59.999Z', '2026-01-01T00:00:00.000Z', '0001-01-01T00:00:00.000Z', '9999-12-28T12:00:00.000Z',
      '2026-11-29T23:30:00.000-02:00', '2026-11-29T01:00:00+02:00', '2026-11-29T10:00:00Z', '2024-02-29T10:00:00.000Z', '2026-02-29T10:00:00.000Z',
      '2026-02-31T00:00:00.000Z', '2026-04-31T10:00:00.000Z', '2026-12-31T23:59:59.999Z', '2000-02-29T00:00:00.000Z', '1900-02-29T00:00:00.000Z',
      '0000-02-29T12:00:00.000Z', '2026-11-30T10:00:00.000Z', '2026-11-31T10:00:00.000Z', '2026-01-31T10:00:00.000Z', '2026-06-31T10:00:00.000Z',
    ];
    for (const at of instants) expect([at, dayOf(at)]).toEqual([at, new Date(at).toISOString().slice(0, 10)]);
    // What Date cannot read is refused, as it was.
    for (const at of ['2026-11-29T24:00:01.000Z', 'not a date']) expect(() => dayOf(at)).toThrow(RangeError);
  });
});
