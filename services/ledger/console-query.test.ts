import { GatewayError } from '../../lib/errors';
import { exportQueryString, isFiltered, parseExportQuery, parsePageQuery, parseSpendingQuery, pageQueryString, spendingQueryString } from './console-query';

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
    expect(parsePageQuery({}, 'bills')).toEqual({ page: 1, size: 20 });
    expect(parsePageQuery({ page: '3', size: '1' }, 'bills')).toEqual({ page: 3, size: 1 });
    expect(parsePageQuery({ page: '9007199254740991', size: '100' }, 'bills')).toEqual({ page: 9007199254740991, size: 100 });
  });

  it('when page or size is out of range, not an integer, repeated or unknown, then 400 invalid_request naming the parameter', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ page: '0' }, 'page'], [{ page: '-1' }, 'page'], [{ page: '1.5' }, 'page'], [{ page: 'abc' }, 'page'], [{ page: '' }, 'page'],
      [{ page: '1e2' }, 'page'], [{ page: '9007199254740992' }, 'page'], [{ page: ['1', '2'] }, 'page'],
      [{ size: '0' }, 'size'], [{ size: '101' }, 'size'], [{ size: ' 5' }, 'size'], [{ size: '0x10' }, 'size'],
      [{ accountId: 'acct_other' }, 'accountId'], [{ pool: 'pool-1' }, 'pool'], [{ format: 'csv' }, 'format'],
    ];
    for (const [query, param] of cases) expect([query, refusal(() => parsePageQuery(query, 'bills'))]).toEqual([query, { code: 'invalid_request', param }]);
  });

  it('when an export names no format, then csv; from and to are read as instants of any time zone, to the millisecond', () => {
    expect(parseExportQuery({}, 'usage')).toEqual({ format: 'csv', fromMs: undefined, toMs: undefined });
    expect(parseExportQuery({ format: 'jsonl', from: '2025-03-01T12:00:00+02:00', to: '2025-03-01t10:00:00.5z' }, 'usage')).toEqual({
      format: 'jsonl', fromMs: Date.parse('2025-03-01T10:00:00Z'), toMs: Date.parse('2025-03-01T10:00:00.500Z'),
    });
  });

  it('when an offset\'s + arrives as a space (sent unencoded in the query string), then 400 naming the parameter and saying to send it as %2B', () => {
    for (const name of ['from', 'to'] as const) {
      let message = '';
      try {
        parsePageQuery({ [name]: '2025-03-01T12:00:00 02:00' }, 'usage');
      } catch (error) {
        expect(error).toMatchObject({ code: 'invalid_request', param: name });
        message = (error as Error).message;
      }
      expect(message).toContain('%2B');
    }
    expect(refusal(() => parsePageQuery({ from: '2025-03-01 12:00:00Z' }, 'usage'))).toEqual({ code: 'invalid_request', param: 'from' });
  });

  it('when an instant has digits below the millisecond, then it is rounded up (rows are whole milliseconds)', () => {
    const at = Date.parse('2025-03-01T10:00:00.123Z');
    expect(parseExportQuery({ from: '2025-03-01T10:00:00.123000Z' }, 'usage').fromMs).toBe(at);
    expect(parseExportQuery({ from: '2025-03-01T10:00:00.1230001Z' }, 'usage').fromMs).toBe(at + 1);
  });

  it('when format, from or to is bad, then 400 invalid_request naming it', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ format: 'xml' }, 'format'], [{ format: 'CSV' }, 'format'], [{ format: ['csv', 'jsonl'] }, 'format'],
      [{ from: 'yesterday' }, 'from'], [{ from: '2025-03-01' }, 'from'], [{ from: '2025-03-01T10:00:00' }, 'from'],
      [{ to: '2025-02-30T00:00:00Z' }, 'to'], [{ to: '1740823200000' }, 'to'],
      [{ from: '2025-03-02T00:00:00Z', to: '2025-03-01T00:00:00Z' }, 'to'], [{ page: '1' }, 'page'],
    ];
    for (const [query, param] of cases) expect([query, refusal(() => parseExportQuery(query, 'usage'))]).toEqual([query, { code: 'invalid_request', param }]);
  });

  it('when a parsed query is carried to the ledger app, then it parses back to the same query', () => {
    const page = { page: 4, size: 7 };
    expect(parsePageQuery(Object.fromEntries(new URLSearchParams(pageQueryString(page))), 'bills')).toEqual(page);
    const query = parseExportQuery({ format: 'jsonl', from: '2025-03-01T12:00:00.0001+02:00', to: '2025-03-02T00:00:00Z' }, 'usage');
    expect(parseExportQuery(Object.fromEntries(new URLSearchParams(exportQueryString(query))), 'usage')).toEqual(query);
    expect(parseExportQuery(Object.fromEntries(new URLSearchParams(exportQueryString({ format: 'csv' }))), 'usage')).toEqual({ format: 'csv' });
  });

  it('when a page or an export names filters, then each is read: time, model, a bill kind, images or not', () => {
    expect(parsePageQuery({ model: 'sim-chat', kind: 'credit', images: 'false', from: '2025-03-01T00:00:00Z' }, 'bills')).toEqual({
      page: 1, size: 20, model: 'sim-chat', kind: 'credit', images: false, fromMs: Date.parse('2025-03-01T00:00:00Z'),
    });
    expect(parsePageQuery({ images: 'true', to: '2025-03-01T00:00:00Z' }, 'usage')).toEqual({ page: 1, size: 20, images: true, toMs: Date.parse('2025-03-01T00:00:00Z') });
    expect(parseExportQuery({ kind: 'charge', model: 'a b/ü' }, 'bills')).toEqual({ format: 'csv', kind: 'charge', model: 'a b/ü' });
    expect(isFiltered(parsePageQuery({ page: '2' }, 'usage'))).toBe(false);
    for (const filter of [{ model: 'm' }, { kind: 'hold' }, { images: 'false' }, { from: '2025-03-01T00:00:00Z' }, { to: '2025-03-01T00:00:00Z' }]) {
      expect([filter, isFiltered(parsePageQuery(filter, 'bills'))]).toEqual([filter, true]);
    }
  });

  it('when a filter is bad, repeated, or a bill kind is asked of usage, then 400 invalid_request naming it', () => {
    const cases: Array<[Record<string, unknown>, 'bills' | 'usage', string]> = [
      [{ model: '' }, 'bills', 'model'], [{ model: 'x'.repeat(257) }, 'usage', 'model'], [{ model: ['a', 'b'] }, 'usage', 'model'],
      [{ kind: 'refund' }, 'bills', 'kind'], [{ kind: 'Charge' }, 'bills', 'kind'], [{ kind: 'charge' }, 'usage', 'kind'],
      [{ images: 'yes' }, 'bills', 'images'], [{ images: '1' }, 'usage', 'images'], [{ images: ['true', 'true'] }, 'bills', 'images'],
      [{ from: '2025-03-02T00:00:00Z', to: '2025-03-01T00:00:00Z' }, 'usage', 'to'], [{ from: '2025-03-01' }, 'bills', 'from'],
    ];
    for (const [query, kind, param] of cases) {
      expect([query, kind, refusal(() => parsePageQuery(query, kind))]).toEqual([query, kind, { code: 'invalid_request', param }]);
      expect([query, kind, refusal(() => parseExportQuery(query, kind))]).toEqual([query, kind, { code: 'invalid_request', param }]);
    }
    expect(() => parsePageQuery({ kind: 'charge' }, 'usage')).toThrow('unknown query parameter kind');
  });

  it('when a filtered query is carried to the ledger app, then it parses back to the same query', () => {
    const page = parsePageQuery({ page: '3', size: '5', model: 'gpt-4o?&x=1', kind: 'release', images: 'true', from: '2025-03-01T00:00:00.5+01:00', to: '2025-03-02T00:00:00Z' }, 'bills');
    expect(parsePageQuery(Object.fromEntries(new URLSearchParams(pageQueryString(page))), 'bills')).toEqual(page);
    const exported = parseExportQuery({ format: 'jsonl', model: 'm', images: 'false' }, 'usage');
    expect(parseExportQuery(Object.fromEntries(new URLSearchParams(exportQueryString(exported))), 'usage')).toEqual(exported);
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
      // to not given is today: a from after it is the parameter at fault.
      [{ from: '2025-03-11' }, 'from'],
    ];
    for (const [query, param] of cases) expect([query, refusal(() => parseSpendingQuery(query, now))]).toEqual([query, { code: 'invalid_request', param }]);
  });
});
