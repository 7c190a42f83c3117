// The web console's pure helpers (web/console/format.ts): what a typed limit becomes.

import { dayRange, lastDays, parseLimits, spendingOf, usdTick } from '../web/console/format';


describe('the limits form of the console', () => {
  it('when fields are typed right, then empty ones are left out, none removes, rates are whole numbers and spend is exact nano-USD', () => {
    expect(parseLimits({ requests_per_minute: ' 600 ', tokens_per_minute: '', spend_per_day: '3.25', spend_total: 'None' }))
      .toEqual({ requests_per_minute: 600, spend_per_day: 3_250_000_000, spend_total: null });
  });

  it.each([
    ['requests_per_minute', 'abc'], ['requests_per_minute', '0'], ['tokens_per_minute', '0x10'], ['tokens_per_minute', '1e3'],
    ['tokens_per_minute', '-5'], ['requests_per_minute', '2.5'], ['spend_per_day', 'lots'], ['spend_per_month', '0'], ['spend_total', '-1'],
  ] as const)('when %s is typed as "%s", then nothing is sent and the field is named', (name, text) => {
    expect(() => parseLimits({ [name]: text, spend_per_day: name === 'spend_per_day' ? text : '5' })).toThrow(name.replace(/_/g, ' '));
  });

  it('when every field is empty, then there is nothing to save', () => {
    expect(() => parseLimits({ requests_per_minute: '  ' })).toThrow('Nothing to save');
  });
});

describe('the spending chart of the console', () => {
  it('when the last 30 days are charted, then they are 30 UTC days ending today, whatever the hour', () => {
    for (const now of [Date.UTC(2026, 10, 28, 0, 0, 1), Date.UTC(2026, 10, 28, 23, 59, 59), Date.UTC(2026, 2, 1, 12)]) {
      const { since, until } = lastDays(30, now);
      expect(until).toBe(new Date(now).toISOString().slice(0, 10));
      expect(spendingOf([], since, until).days).toHaveLength(30);
    }
  });
});

describe('the date filter of the bills and usage', () => {
  it('when days are chosen, then from is the first day\'s start and to the start of the day after the last, in UTC', () => {
    expect(dayRange('2026-02-27', '2026-02-28')).toEqual({ from: '2026-02-27T00:00:00Z', to: '2026-03-01T00:00:00.000Z' });
    expect(dayRange('', '')).toEqual({ from: undefined, to: undefined });
    // The last day there is: every day up to it, without a bound no RFC 3339 time could carry.
    expect(dayRange('', '9999-12-31')).toEqual({ from: undefined, to: undefined });
  });

  it.each([['20266-12-31', ''], ['', '20266-12-31'], ['275760-09-13', '2026-01-01'], ['2026-02-30', '']])('when the days are "%s" and "%s" (a year typed with five digits, an impossible day), then it throws naming the field', (from, to) => {
    expect(() => dayRange(from, to)).toThrow(from ? 'From:' : 'To:');
  });

  it('when the last day is before the first, then it throws saying so (the day itself is a range of one day)', () => {
    expect(() => dayRange('2026-03-02', '2026-03-01')).toThrow('To: 2026-03-01 is before the first day, 2026-03-02');
    expect(dayRange('2026-03-02', '2026-03-02')).toEqual({ from: '2026-03-02T00:00:00Z', to: '2026-03-03T00:00:00.000Z' });
  });
});

describe('the USD axis of the spending chart', () => {
  it.each([
    [0, '$0'], [2.5e-7, '$0.00000025'], [7.5e-7, '$0.00000075'], [0.000001, '$0.000001'], [0.30000000000000004, '$0.30'], [1250, '$1,250.00'], [0.000015, '$0.000015'],
  ])('when a tick is %p USD, then it reads %s, as the amounts beside it do (never 2.5e-7, never 1,250 rounded to 1,300)', (tick, label) => {
    expect(usdTick(tick)).toBe(label);
  });
});
