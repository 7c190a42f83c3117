import { periodStarts } from './limits';

describe('periodStarts', () => {
  it('when asked for times across days, months, years and before 1970, in any order, then each is the UTC day and month Date gives', () => {
    const expected = (now: number) => {
      const date = new Date(now);
      return { day: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()), month: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) };
    };
    const times = [
      Date.UTC(2026, 10, 29, 10), Date.UTC(2026, 10, 29, 23, 59, 59, 999), Date.UTC(2026, 10, 30), Date.UTC(2026, 11, 1), Date.UTC(2026, 10, 29, 12),
      Date.UTC(2024, 1, 29, 5), Date.UTC(2027, 0, 1), 0, -1, -86_400_001, Date.UTC(1969, 11, 31, 23), Date.UTC(2026, 10, 29),
    ];
    for (const now of times) expect([now, periodStarts(now)]).toEqual([now, expected(now)]);
  });
});
