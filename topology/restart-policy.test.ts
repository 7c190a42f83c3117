import { DEFAULT_RESTART_POLICY, RestartBackoff } from './restart-policy';

describe('RestartBackoff', () => {
  it('when a process crashes again and again at once, then the delay doubles from 0.5 s up to the 30 s cap and stays there', () => {
    const backoff = new RestartBackoff();
    const delays = Array.from({ length: 10 }, () => backoff.nextDelay(100));
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]);
  });

  it('when a run stayed up for the reset time, then the next crash is restarted after the first delay again', () => {
    const backoff = new RestartBackoff();
    for (let i = 0; i < 5; i++) backoff.nextDelay(0);
    expect(backoff.nextDelay(DEFAULT_RESTART_POLICY.resetAfterMs - 1)).toBe(16_000);
    expect(backoff.nextDelay(DEFAULT_RESTART_POLICY.resetAfterMs)).toBe(500);
    expect(backoff.nextDelay(10)).toBe(1_000);
  });

  it('when crashes go on for ever, then the delay never exceeds the cap (no overflow)', () => {
    const backoff = new RestartBackoff({ initialDelayMs: 1, maxDelayMs: 5_000, resetAfterMs: 1_000 });
    let last = 0;
    for (let i = 0; i < 2_000; i++) last = backoff.nextDelay(0);
    expect(last).toBe(5_000);
  });

  it('when the policy is inconsistent, then it is refused', () => {
    expect(() => new RestartBackoff({ initialDelayMs: 0, maxDelayMs: 10, resetAfterMs: 10 })).toThrow(/invalid restart policy/);
    expect(() => new RestartBackoff({ initialDelayMs: 100, maxDelayMs: 10, resetAfterMs: 10 })).toThrow(/invalid restart policy/);
  });
});
