import pino from 'pino';
import { GatewayError } from '../../../lib/errors';
import { PendingSettlements } from './pending-settlements';

const logger = pino({ level: 'silent' });

describe('pending settlements', () => {
  it('when a settle fails to reach its actor, then it is retried, the hold renewed before each retry, until it lands', async () => {
    const pending = new PendingSettlements(logger, { firstDelayMs: 5, maxDelayMs: 20 });
    let attempts = 0;
    let renewals = 0;
    const outcome = await pending.run('h1', async () => {
      attempts += 1;
      if (attempts < 4) throw new GatewayError('actor_unavailable', 'down');
      return { charged: 7 };
    }, async () => void (renewals += 1));
    expect(outcome).toEqual({ charged: 7 });
    expect(attempts).toBe(4);
    expect(renewals).toBe(3);
    expect(pending.size).toBe(0);
  });

  it('when a settle is refused (4xx), then it is not retried and the refusal is thrown', async () => {
    const pending = new PendingSettlements(logger, { firstDelayMs: 5, maxDelayMs: 20 });
    let attempts = 0;
    await expect(pending.run('h2', async () => {
      attempts += 1;
      throw new GatewayError('hold_state_conflict', 'released');
    }, async () => undefined)).rejects.toMatchObject({ code: 'hold_state_conflict' });
    expect(attempts).toBe(1);
  });

  it('when a shutdown waits, then it waits for what is pending, up to its timeout', async () => {
    const pending = new PendingSettlements(logger, { firstDelayMs: 5, maxDelayMs: 5 });
    let up = false;
    const landed = pending.run('h3', async () => {
      if (!up) throw new Error('connection refused');
      return 'ok';
    }, async () => undefined);
    const started = Date.now();
    await pending.idle(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(pending.size).toBe(1);
    up = true;
    await pending.idle(5000);
    expect(pending.size).toBe(0);
    await expect(landed).resolves.toBe('ok');
  });
});
