import { CrashRestarts } from './crash-restarts';
import { DEFAULT_RESTART_POLICY } from './restart-policy';

describe('CrashRestarts', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('when a process crashes, then it is relaunched after its backoff, each process on its own', () => {
    const relaunched: string[] = [];
    const restarts = new CrashRestarts(DEFAULT_RESTART_POLICY, (name) => relaunched.push(name));
    expect(restarts.schedule('actors', 10)).toBe(500);
    expect(restarts.schedule('placement', 10)).toBe(500);
    expect(restarts.schedule('actors', 10)).toBe(1_000);
    jest.advanceTimersByTime(999);
    expect(relaunched).toEqual(['placement']);
    jest.advanceTimersByTime(1);
    expect(relaunched).toEqual(['placement', 'actors']);
  });

  it('when a restart is cancelled (an explicit restart or kill) or the topology stops, then nothing is relaunched', () => {
    const relaunched: string[] = [];
    const restarts = new CrashRestarts(DEFAULT_RESTART_POLICY, (name) => relaunched.push(name));
    restarts.schedule('actors', 0);
    restarts.cancel('actors');
    restarts.schedule('ledger', 0);
    restarts.close();
    expect(restarts.schedule('gateway', 0)).toBeUndefined();
    jest.advanceTimersByTime(60_000);
    expect(relaunched).toEqual([]);
  });
});
