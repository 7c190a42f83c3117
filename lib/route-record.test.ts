// The route record a settle may carry: bounded, its outcomes known, the charged attempt last;
// a bad one is refused naming where; its CSV text splits unambiguously.

import { usageDataSchema } from './events';
import { attemptsText, checkRoute, routeRecordSchema, type RouteRecord } from './route-record';

const [timedOut, unavailable] = [{ upstream: 'a', outcome: 'timeout', durationMs: 30_000, platformBorne: true }, { upstream: 'c', outcome: 'unavailable', durationMs: 120 }];
const route: RouteRecord = { upstream: 'b', attempts: [timedOut, unavailable, { upstream: 'b', outcome: 'served', durationMs: 340 }] };
const served = { upstream: 'b', outcome: 'served', durationMs: 1 };

describe('route record', () => {
  it('when a route is well formed, then it is kept as given, and on a usage event too', () => {
    expect(checkRoute(route)).toEqual(route);
    expect(checkRoute(undefined)).toBeUndefined();
    expect(checkRoute({ upstream: 'b', attempts: [{ ...served, outcome: 'broken' }] })).toEqual({ upstream: 'b', attempts: [{ ...served, outcome: 'broken' }] });
    const data = { accountId: 'a', pool: 'pool-3', holdId: 'h', requestId: 'r', model: 'm', profileId: 'p', lines: [], charged: 0 };
    expect(usageDataSchema.parse({ ...data, route })).toEqual({ ...data, route });
    expect(usageDataSchema.parse(data)).not.toHaveProperty('route');
    expect(usageDataSchema.safeParse({ ...data, route: { upstream: 'b', attempts: [] } }).success).toBe(false);
  });

  it.each<[string, unknown, string]>([
    ['an unknown outcome', { upstream: 'b', attempts: [{ ...served, outcome: 'exploded' }] }, 'route.attempts.0.outcome'],
    ['no attempt', { upstream: 'b', attempts: [] }, 'route.attempts'],
    ['17 attempts', { upstream: 'b', attempts: Array.from({ length: 17 }, () => served) }, 'route.attempts'],
    ['an upstream of 129 characters', { upstream: 'x'.repeat(129), attempts: [{ ...served, upstream: 'x'.repeat(129) }] }, 'route.upstream'],
    ['an empty upstream', { upstream: '', attempts: [served] }, 'route.upstream'],
    ['a negative duration', { upstream: 'b', attempts: [{ ...served, durationMs: -1 }] }, 'route.attempts.0.durationMs'],
    ['a fractional duration', { upstream: 'b', attempts: [{ ...served, durationMs: 1.5 }] }, 'route.attempts.0.durationMs'],
    ['a duration past 2^53-1', { upstream: 'b', attempts: [{ ...served, durationMs: 2 ** 53 }] }, 'route.attempts.0.durationMs'],
    ['an unknown field', { upstream: 'b', attempts: [served], cost: 5 }, 'route'],
    ['a last attempt on another upstream', { upstream: 'a', attempts: [served] }, 'route.attempts.0.upstream'],
    ['a last attempt that failed', { upstream: 'b', attempts: [{ ...served, outcome: 'timeout' }] }, 'route.attempts.0.outcome'],
    ['a served attempt before the last', { upstream: 'b', attempts: [served, served] }, 'route.attempts.0.outcome'],
    ['not an object', 'b', 'route'],
  ])('when a route has %s, then it is refused with invalid_request naming %s', (_, bad, param) => {
    expect(() => checkRoute(bad)).toThrow(expect.objectContaining({ code: 'invalid_request', param }));
    expect(routeRecordSchema.safeParse(bad).success).toBe(false);
  });

  it('when a route is written as CSV text, then one attempt per ;-separated part, in order, borne marked, and : ; % of a name encoded', () => {
    expect(attemptsText(route)).toBe('a:timeout:30000ms:borne;c:unavailable:120ms;b:served:340ms');
    expect(attemptsText({ upstream: 'x:1;2%', attempts: [{ upstream: 'x:1;2%', outcome: 'served', durationMs: 0 }] })).toBe('x%3A1%3B2%25:served:0ms');
  });
});
