import { GatewayError } from '../../lib/errors';
import { deadline, shuttingDown, stoppedBy } from './deadline';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('deadline', () => {
  it('when the time is up, then the controller is aborted with a TimeoutError, which reads as provider_timeout', async () => {
    const controller = new AbortController();
    const { signal } = deadline(controller, 20);
    expect(signal.aborted).toBe(false);
    await wait(60);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('TimeoutError');
    expect(stoppedBy(signal)?.code).toBe('provider_timeout');
  });

  it('when cleared before its time, then it never fires', async () => {
    const controller = new AbortController();
    deadline(controller, 20).clear();
    await wait(60);
    expect(controller.signal.aborted).toBe(false);
  });

  it('when the drain aborts the call, then it reads as gateway_shutting_down; another reason reads as nothing', () => {
    const drained = new AbortController();
    const { signal } = deadline(drained, 10_000);
    drained.abort(shuttingDown());
    expect(stoppedBy(signal)).toBeInstanceOf(GatewayError);
    expect(stoppedBy(signal)?.code).toBe('gateway_shutting_down');
    const left = new AbortController();
    left.abort(new Error('client disconnected'));
    expect(stoppedBy(deadline(left, 10).signal)).toBeUndefined();
    expect(stoppedBy(new AbortController().signal)).toBeUndefined();
  });
});
