import { GatewayError } from '../../lib/errors';
import { exportQueryString, parseExportQuery, parsePageQuery, parseSpendingQuery, pageQueryString, spendingQueryString } from './console-query';

function refusal(parse: () => unknown): { code: string; param?: string } {
  try {
    parse();
  } catch (error) {
    if (error instanceof GatewayError) return { code: error.code, param: error.param };
    throw error;
  }
  throw new Error('accepted');
}

describe('console query parameters', () => {
  it('when page and size are absent, then page 1 of 20; given, then as given', () => {
    expect(parsePageQuery({})).toEqual({ page: 1, size: 20 });
    expect(parsePageQuery({ page: '3', size: '1' })).toEqual({ page: 3, size: 1 });
    expect(parsePageQuery({ page: '9007199254740991', size: '100' })).toEqual({ page: 9007199254740991, size: 100 });
  });

  it('when page or size is out of range, not an integer, repeated or unknown, then 400 invalid_request naming the parameter', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ page: '0' }, 'page'], [{ page: '-1' }, 'page'], [{ page: '1.5' }, 'page'], [{ page: 'abc' }, 'page'], [{ page: '' }, 'page'],
      [{ page: '1e2' }, 'page'], [{ page: '9007199254740992' }, 'page'], [{ page: ['1', '2'] }, 'page'],
      [{ size: '0' }, 'size'], [{ size: '101' }, 'size'], [{ size: ' 5' }, 'size'], [{ size: '0x10' }, 'size'],
      [{ accountId: 'acct_other' }, 'accountId'], [{ pool: 'pool-1' }, 'pool'], [{ format: 'csv' }, 'format'],
    ];
    for (const [query, param] of cases) expect([query, refusal(() => parsePageQuery(query))]).toEqual([query, { code: 'invalid_request', param }]);
  });

  it('when an export names no format, then csv; from and to are read as instants of any time zone, to the millisecond', () => {
    expect(parseExportQuery({})).toEqual({ format: 'csv', fromMs: undefined, toMs: undefined });
    expect(parseExportQuery({ format: 'jsonl', from: '2025-03-01T12:00:00+02:00', to: '2025-03-01t10:00:00.5z' })).toEqual({
      format: 'jsonl', fromMs: Date.parse('2025-03-01T10:00:00Z'), toMs: Date.parse('2025-03-01T10:00:00.500Z'),
    });
  });

  it('when an instant has digits below the millisecond, then it is rounded up (rows are whole milliseconds)', () => {
    const at = Date.parse('2025-03-01T10:00:00.123Z');
    expect(parseExportQuery({ from: '2025-03-01T10:00:00.123000Z' }).fromMs).toBe(at);
    expect(parseExportQuery({ from: '2025-03-01T10:00:00.1230001Z' }).fromMs).toBe(at + 1);
  });

  it('when format, from or to is bad, then 400 invalid_request naming it', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ format: 'xml' }, 'format'], [{ format: 'CSV' }, 'format'], [{ format: ['csv', 'jsonl'] }, 'format'],
      [{ from: 'yesterday' }, 'from'], [{ from: '2025-03-01' }, 'from'], [{ from: '2025-03-01T10:00:00' }, 'from'],
      [{ to: '2025-02-30T00:00:00Z' }, 'to'], [{ to: '1740823200000' }, 'to'],
      [{ from: '2025-03-02T00:00:00Z', to: '2025-03-01T00:00:00Z' }, 'to'], [{ page: '1' }, 'page'],
    ];
    for (const [query, param] of cases) expect([query, refusal(() => parseExportQuery(query))]).toEqual([query, { code: 'invalid_request', param }]);
  });

  it('when a parsed query is carried to the ledger app, then it parses back to the same query', () => {
    const page = { page: 4, size: 7 };
    expect(parsePageQuery(Object.fromEntries(new URLSearchParams(pageQueryString(page))))).toEqual(page);
    const query = parseExportQuery({ format: 'jsonl', from: '2025-03-01T12:00:00.0001+02:00', to: '2025-03-02T00:00:00Z' });
    expect(parseExportQuery(Object.fromEntries(new URLSearchParams(exportQueryString(query))))).toEqual(query);
    expect(parseExportQuery(Object.fromEntries(new URLSearchParams(exportQueryString({ format: 'csv' }))))).toEqual({ format: 'csv', fromMs: undefined, toMs: undefined });
  });

  it('when spending names no days, then the 30 UTC days that end today; to alone ends them; from and to are both included', () => {
    const now = Date.parse('2025-03-10T23:59:59Z');
    expect(parseSpendingQuery({}, now)).toEqual({ from: '2025-02-09', to: '2025-03-10' });
    expect(parseSpendingQuery({ to: '2024-03-01' }, now)).toEqual({ from: '2024-02-01', to: '2024-03-01' }); // 2024 is a leap year
    expect(parseSpendingQuery({ from: '2025-03-01', to: '2025-03-01' }, now)).toEqual({ from: '2025-03-01', to: '2025-03-01' });
    expect(parseSpendingQuery({ from: '2024-03-01', to: '2025-02-28' }, now)).toEqual({ from: '2024-03-01', to: '2025-02-28' });
    const query = parseSpendingQuery({ from: '2025-01-01', to: '2025-01-31' }, now);
    expect(parseSpendingQuery(Object.fromEntries(new URLSearchParams(spendingQueryString(query))))).toEqual(query);
  });

  it('when spending days are not calendar days, are reversed, span more than 366 days, or a parameter is unknown or repeated, then 400 invalid_request naming it', () => {
    const now = Date.parse('2025-03-10T12:00:00Z');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ from: '2025-02-30' }, 'from'], [{ from: '2025-3-1' }, 'from'], [{ from: '2025-03-01T00:00:00Z' }, 'from'], [{ to: 'today' }, 'to'],
      [{ to: ['2025-03-01', '2025-03-02'] }, 'to'], [{ from: '2025-03-02', to: '2025-03-01' }, 'to'],
      [{ from: '2024-02-29', to: '2025-03-01' }, 'from'], [{ page: '1' }, 'page'], [{ model: 'sim-chat' }, 'model'],
    ];
    for (const [query, param] of cases) expect([query, refusal(() => parseSpendingQuery(query, now))]).toEqual([query, { code: 'invalid_request', param }]);
  });
});
