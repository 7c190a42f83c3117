// Money and time as the console shows them. Amounts are integer nano-USD (scale 9, docs/money.md):
// shown exactly, as USD with at least two decimals and no trailing zeros beyond them.

export const SCALE = 9;

export function usd(nano: number): string {
  const negative = nano < 0;
  const digits = String(Math.abs(Math.trunc(nano))).padStart(SCALE + 1, '0');
  const whole = digits.slice(0, -SCALE).replace(/\B(?=(\d{3})+$)/g, ',');
  const fraction = digits.slice(-SCALE).replace(/0+$/, '').padEnd(2, '0');
  return `${negative ? '−' : ''}$${whole}.${fraction}`;
}

/**
 * A tick of the chart's USD axis (a float of USD, as uPlot places them: 2.5e-7, 0.30000000000000004,
 * 1250): in the same notation as every other amount, exact to the nano-USD; never as 2.5e-7.
 */
export const usdTick = (value: number): string => (value === 0 ? '$0' : usd(Math.round(value * 10 ** SCALE)));

/** USD typed by a person ("12.5") → nano-USD, exactly; undefined when it is not an amount. */
export function parseUsd(text: string): number | undefined {
  const match = /^\s*\$?(\d{1,7})(?:\.(\d{1,9}))?\s*$/.exec(text);
  if (!match) return undefined;
  const nano = Number(match[1]) * 10 ** SCALE + Number((match[2] ?? '').padEnd(SCALE, '0'));
  return nano > 0 ? nano : undefined;
}

export const day = (iso: string): string => iso.slice(0, 10);
export const when = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '—');

/**
 * The filter's days (date inputs' values, YYYY-MM-DD, UTC days; '' for none) → the RFC 3339
 * instants the pages and exports take: `from` the first day's start, `to` the start of the day
 * after the last (the last day included). A date input also lets a year of five or six digits be
 * typed (20266 for 2026), which no RFC 3339 time can carry: such a day throws, naming the field,
 * so that the form says so instead of the page failing; so does a last day before the first
 * (which the API would refuse).
 */
export function dayRange(from: string, to: string): { from?: string; to?: string } {
  const problems: string[] = [];
  const start = (date: string, name: string): Date | undefined => {
    if (date === '') return undefined;
    const instant = new Date(`${date}T00:00:00Z`);
    if (/^\d{4}-\d{2}-\d{2}$/.test(date) && !Number.isNaN(instant.getTime()) && instant.toISOString().startsWith(date)) return instant;
    problems.push(`${name}: "${date}" is not a day from the year 0001 to 9999`);
    return undefined;
  };
  const first = start(from, 'From');
  const last = start(to, 'To');
  if (first && last && last < first) problems.push(`To: ${to} is before the first day, ${from}`);
  if (problems.length > 0) throw new Error(`${problems.join('; ')}.`);
  const next = last && new Date(last.getTime() + 86_400_000);
  return {
    from: first && `${from}T00:00:00Z`,
    // The day after 9999-12-31 has no RFC 3339 time: up to the last day there is, every day is included.
    to: next && next.getUTCFullYear() <= 9999 ? next.toISOString() : undefined,
  };
}

export type LimitName = 'requests_per_minute' | 'tokens_per_minute' | 'spend_per_day' | 'spend_per_month' | 'spend_total';
export const LIMITS: LimitName[] = ['requests_per_minute', 'tokens_per_minute', 'spend_per_day', 'spend_per_month', 'spend_total'];
export const limitLabel = (name: LimitName): string => name.replace(/_/g, ' ');

/**
 * The limits form's fields → the PATCH body's `limits`: an empty field keeps the limit (left
 * out), `none` removes it (null), a whole number above zero (rates) or an amount in USD (spend)
 * sets it. Anything else throws, naming the field, so that nothing is sent: a typo must never
 * reach the API as `null` (which removes the limit) or as some other number.
 */
export function parseLimits(values: Partial<Record<LimitName, string>>): Partial<Record<LimitName, number | null>> {
  const limits: Partial<Record<LimitName, number | null>> = {};
  const problems: string[] = [];
  for (const name of LIMITS) {
    const text = (values[name] ?? '').trim();
    if (text === '') continue;
    if (text.toLowerCase() === 'none') {
      limits[name] = null;
    } else if (name.startsWith('spend')) {
      const nano = parseUsd(text);
      if (nano === undefined) problems.push(`${limitLabel(name)}: "${text}" is not an amount in USD above zero, such as 5 or 0.25`);
      else limits[name] = nano;
    } else if (/^[1-9][0-9]{0,14}$/.test(text)) {
      limits[name] = Number(text);
    } else {
      problems.push(`${limitLabel(name)}: "${text}" is not a whole number above zero`);
    }
  }
  if (problems.length > 0) throw new Error(`Nothing was saved. ${problems.join('; ')}. Type none to remove a limit.`);
  if (Object.keys(limits).length === 0) throw new Error('Nothing to save: type a limit, or none to remove one.');
  return limits;
}

/** Spending by day and by model, as the chart draws it. */
export interface Spending { days: string[]; models: string[]; /** [model][day] nano-USD charged */ charged: number[][] }

/** The first and the last of the `count` UTC days that end today (YYYY-MM-DD): today is the last. */
export function lastDays(count: number, now: number): { since: string; until: string } {
  return { since: new Date(now - (count - 1) * 86_400_000).toISOString().slice(0, 10), until: new Date(now).toISOString().slice(0, 10) };
}

/** Aggregates usage rows (their `charged` shares) by model and by each UTC day from `since` to `until` (YYYY-MM-DD). */
export function spendingOf(rows: { occurredAt: string; model?: string; charged: number }[], since: string, until: string): Spending {
  const byModel = new Map<string, Map<string, number>>();
  const days = new Set<string>();
  for (let d = new Date(`${since}T00:00:00Z`); d.toISOString().slice(0, 10) <= until; d.setUTCDate(d.getUTCDate() + 1)) days.add(d.toISOString().slice(0, 10));
  for (const row of rows) {
    const d = row.occurredAt.slice(0, 10);
    const model = row.model ?? '(none)';
    days.add(d);
    const m = byModel.get(model) ?? new Map<string, number>();
    m.set(d, (m.get(d) ?? 0) + row.charged);
    byModel.set(model, m);
  }
  const sortedDays = [...days].sort();
  const models = [...byModel.keys()].sort();
  return { days: sortedDays, models, charged: models.map((model) => sortedDays.map((d) => byModel.get(model)!.get(d) ?? 0)) };
}
