import { billingEvent, MAX_EVENTS_PER_MESSAGE, usageEvent, type EventEnvelope, type Topic } from '../../lib/events';
import { lingeringPublisher } from './lingering-publisher';

const billing = (n: number) => billingEvent(`b${n}`, 0, { kind: 'credit', accountId: 'a', pool: 'pool-3', balanceDelta: n, amount: n, reference: `r${n}` });
const usage = (n: number) => usageEvent(`u${n}`, 0, { accountId: 'a', pool: 'pool-3', holdId: `h${n}`, requestId: 'r', model: 'm', profileId: 'p', lines: [], charged: 0 });

describe('the actors app publishing through a linger', () => {
  const sent: [Topic, string[]][] = [];
  const send = jest.fn(async (topic: Topic, events: readonly EventEnvelope[]) => {
    sent.push([topic, events.map((e) => e.id)]);
  });
  beforeEach(() => {
    sent.length = 0;
    send.mockClear();
  });

  it('when turns hand over events within the linger, then each topic leaves as one message, resolved for every caller once it is taken', async () => {
    const publish = lingeringPublisher(send, 30);
    const started = Date.now();
    await Promise.all([publish('billing', [billing(1)]), publish('usage', [usage(1)]), publish('billing', [billing(2), billing(3)])]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(sent).toEqual([['billing', ['b1', 'b2', 'b3']], ['usage', ['u1']]]);
  });

  it('when a message would pass the most events one carries, then what was gathered leaves at once and the rest gathers anew', async () => {
    const publish = lingeringPublisher(send, 10_000);
    const many = Array.from({ length: MAX_EVENTS_PER_MESSAGE - 1 }, (_, i) => billing(i));
    const first = publish('billing', many);
    const second = publish('billing', [billing(1000), billing(1001)]);
    await first;
    expect(sent.map(([, ids]) => ids.length)).toEqual([MAX_EVENTS_PER_MESSAGE - 1]);
    const full = publish('billing', Array.from({ length: MAX_EVENTS_PER_MESSAGE - 2 }, (_, i) => billing(2000 + i)));
    await Promise.all([second, full]);
    expect(sent.map(([, ids]) => ids.length)).toEqual([MAX_EVENTS_PER_MESSAGE - 1, MAX_EVENTS_PER_MESSAGE]);
  });

  it('when pub/sub refuses the message, then every caller whose events were in it is told (each event goes again with the outbox)', async () => {
    const refused = new Error('pub/sub down');
    const publish = lingeringPublisher(async () => { throw refused; }, 5);
    const outcomes = await Promise.allSettled([publish('usage', [usage(1)]), publish('usage', [usage(2)])]);
    expect(outcomes).toEqual([{ status: 'rejected', reason: refused }, { status: 'rejected', reason: refused }]);
  });

  it('when the linger is 0, then each call is sent as it comes', async () => {
    const publish = lingeringPublisher(send, 0);
    expect(publish).toBe(send);
  });
});
