import { exponentialBackoff, linearBackoff, retry } from './retry';

const fails = (times: number, error: unknown = new Error('not yet')) => {
  const calls: number[] = [];
  const attempt = async (n: number) => {
    calls.push(n);
    if (calls.length <= times) throw error;
    return `done after ${n}`;
  };
  return { calls, attempt };
};

describe('retry', () => {
  it('when an attempt fails and a later one succeeds, then its value comes back after the delays, each failure told', async () => {
    const { calls, attempt } = fails(2);
    const told: unknown[] = [];
    const started = Date.now();
    await expect(retry(attempt, { delayMs: () => 20, onRetry: (_e, info) => told.push(info) })).resolves.toBe('done after 3');
    expect(calls).toEqual([1, 2, 3]);
    expect(told).toEqual([{ attempt: 1, delayMs: 20 }, { attempt: 2, delayMs: 20 }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
  });

  it('when every allowed attempt fails, then the last error is thrown', async () => {
    const { calls, attempt } = fails(5, new Error('down'));
    await expect(retry(attempt, { attempts: 3, delayMs: () => 1 })).rejects.toThrow('down');
    expect(calls).toEqual([1, 2, 3]);
  });

  it('when an error is not retryable, then it is thrown at once', async () => {
    const refusal = new Error('refused');
    const { calls, attempt } = fails(5, refusal);
    await expect(retry(attempt, { delayMs: () => 1, retryable: (e) => e !== refusal })).rejects.toBe(refusal);
    expect(calls).toEqual([1]);
  });
});

describe('backoffs', () => {
  it('when exponential, then delays double up to the cap; when linear, they grow by the step', () => {
    expect([1, 2, 3, 4, 5, 60].map(exponentialBackoff(200, 1000))).toEqual([200, 400, 800, 1000, 1000, 1000]);
    expect([1, 2, 3].map(linearBackoff(50))).toEqual([50, 100, 150]);
  });
});
