// Each upstream's circuit and the order a profile's upstreams are tried in.

import { UpstreamHealth } from './health';

const clock = () => {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
};
const names = (list: { provider: string }[]) => list.map((c) => c.provider);

describe('the order of a profile\'s upstreams', () => {
  it('when every circuit is closed, then first attempts follow the weights, evenly spread (smooth weighted round robin)', () => {
    const health = new UpstreamHealth();
    const candidates = [{ provider: 'a', weight: 3 }, { provider: 'b', weight: 1 }];
    const firsts = Array.from({ length: 8 }, () => health.order('p', candidates)[0].provider);
    expect(firsts).toEqual(['a', 'a', 'b', 'a', 'a', 'a', 'b', 'a']);
    // The fallback after the first is the other one.
    expect(names(health.order('p', candidates))).toHaveLength(2);
    // Another profile has its own rotation.
    expect(health.order('q', candidates)[0].provider).toBe('a');
  });

  it('when a circuit is open, then its upstream comes after every available one, the soonest to reopen first', () => {
    const time = clock();
    const health = new UpstreamHealth({ failures: 1, cooldownMs: 1000 }, time.now);
    health.failed('a');
    time.advance(100);
    health.failed('b');
    const candidates = [{ provider: 'a', weight: 100 }, { provider: 'b', weight: 100 }, { provider: 'c', weight: 1 }];
    expect(names(health.order('p', candidates))).toEqual(['c', 'a', 'b']);
  });
});

describe('an upstream\'s circuit', () => {
  it('when failures are consecutive up to the threshold, then it opens for the cooldown, and a success between resets the count', () => {
    const time = clock();
    const health = new UpstreamHealth({ failures: 3, cooldownMs: 1000 }, time.now);
    health.failed('a');
    health.failed('a');
    health.succeeded('a');
    health.failed('a');
    health.failed('a');
    expect(health.state('a')).toBe('closed');
    health.failed('a');
    expect(health.view(['a'])).toEqual({ a: { state: 'open', consecutive_failures: 3, open_until: new Date(time.now() + 1000).toISOString() } });
    time.advance(999);
    expect(health.state('a')).toBe('open');
    time.advance(1);
    expect(health.state('a')).toBe('half_open');
  });

  it('when half-open, then one request probes it: others see it unavailable meanwhile; a failed probe reopens, a good one closes', () => {
    const time = clock();
    const health = new UpstreamHealth({ failures: 1, cooldownMs: 1000 }, time.now);
    const candidates = [{ provider: 'a', weight: 10 }, { provider: 'b', weight: 1 }];
    health.failed('a');
    time.advance(1000);
    expect(health.order('p', candidates)[0].provider).toBe('a');
    health.attempting('a');
    expect(health.order('p', candidates)[0].provider).toBe('b');
    health.failed('a');
    expect(health.state('a')).toBe('open');
    time.advance(1000);
    health.attempting('a');
    health.succeeded('a');
    expect(health.view(['a']).a).toEqual({ state: 'closed', consecutive_failures: 0, open_until: null });
  });

  it('when the upstream asks to be left alone (Retry-After), then it opens at once for that long, or the cooldown when that is due and longer', () => {
    const time = clock();
    const health = new UpstreamHealth({ failures: 2, cooldownMs: 5000 }, time.now);
    health.failed('a', 1500);
    expect(health.state('a')).toBe('open');
    time.advance(1500);
    expect(health.state('a')).toBe('half_open');
    health.failed('a', 1000);
    // The failed probe: the cooldown, longer than the Retry-After.
    time.advance(4999);
    expect(health.state('a')).toBe('open');
  });
});
