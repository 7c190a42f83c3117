// The deadline holds even when its reminder is late: an artifact recorded after the frozen
// deadline, before the reminder has fired, is a late artifact (zero charge), never a charge.
// The embedded host runs on a clock the test moves; the reminder's timer has not fired yet.

import { FundsHoldClient } from '../funds-hold/client';
import { startEmbeddedActors } from '../../test/support/actor-hosts';
import { ImageTaskClient } from './client';

describe('ImageTask past its deadline, before the reminder', () => {
  it('when an artifact is recorded after the deadline, then the task becomes UNKNOWN (hold released) and the artifact is a zero-charge late artifact', async () => {
    let clock = Date.now();
    const embedded = await startEmbeddedActors('image-deadline-', { now: () => clock });
    const host = embedded.invoker;
    try {
      const owner = { accountId: 'acct_deadline', apiKeyId: 'key_1' };
      const funds = new FundsHoldClient(host).of(owner.accountId);
      await funds.credit({ amount: 100, reference: 'seed' });
      const task = new ImageTaskClient(host).of('5b0c1d2e-3f4a-8b6c-9d0e-1f2a3b4c5d6e');
      await task.start({
        owner, fingerprint: 'f', requestId: 'r', startId: 's', model: 'sim-image', profileId: 'p', price: 40,
        deadlineMs: 60_000, holdTtlMs: 120_000,
        call: { provider: 'sim', upstreamModel: 'm', prompt: 'x', responseFormat: 'b64_json', passthrough: {} },
      });
      expect(await funds.getBalance()).toMatchObject({ held: 40 });
      clock += 60_000; // the deadline passes; the reminder's real timer (60 s) has not fired
      const view = await task.record({ kind: 'succeeded', artifact: { b64Json: 'eA==', created: 1 }, via: 'response' });
      expect(view).toMatchObject({ status: 'unknown', charged: 0, lateArtifact: { state: 'awaiting_ledger' } });
      expect(view.unknown?.resolution).toBe('image_unknown_resolved');
      expect(await funds.getBalance()).toMatchObject({ balance: 100, held: 0 });
      expect(await task.finish({})).toMatchObject({ status: 'unknown', charged: 0 });
      expect(await embedded.ledger(owner.accountId)).toMatchObject({ balance: 100, usage: 1 });
    } finally {
      await embedded.close();
    }
  });
});
