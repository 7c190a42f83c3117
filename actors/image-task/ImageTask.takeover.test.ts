// A retry that takes over the open hold of a start that died between its hold and its task: the
// task's UNKNOWN_IMAGE_V1 deadline is measured from the retry, so the hold it took over must live
// as long as a hold taken by the retry would, or an artifact that arrives before the task's
// deadline finds its hold expired and is borne by the platform. The embedded host runs on a clock
// the test moves.

import { FundsHoldClient } from '../funds-hold/client';
import { startEmbeddedActors } from '../../test/support/actor-hosts';
import { ImageTaskClient } from './client';

const DEADLINE_MS = 86_400_000;
const HOLD_TTL_MS = DEADLINE_MS + 120_000;

describe('ImageTask taking over an orphan hold', () => {
  it('when the retry comes hours after the orphan hold was taken and the artifact before the task deadline, then the image is charged', async () => {
    let clock = Date.now();
    const embedded = await startEmbeddedActors('image-takeover-', { now: () => clock });
    const host = embedded.invoker;
    try {
      const taskId = '6c1d2e3f-4a5b-8c7d-9e0f-2a3b4c5d6e7f';
      const owner = { accountId: 'acct_takeover', apiKeyId: 'key_1' };
      const funds = new FundsHoldClient(host).of(owner.accountId);
      await funds.credit({ amount: 100, reference: 'seed' });
      // The first start took its hold, then its process died before the task was committed.
      await funds.reserve({ holdId: `img:${taskId}`, amount: 40, ttlMs: HOLD_TTL_MS, requestId: 'r', model: 'sim-image', profileId: 'p' });
      clock += 20 * 3_600_000; // the client retries 20 hours later: the orphan hold is still open
      const task = new ImageTaskClient(host).of(taskId);
      const started = await task.start({
        owner, fingerprint: 'f', requestId: 'r', startId: 's2', model: 'sim-image', profileId: 'p', price: 40,
        deadlineMs: DEADLINE_MS, holdTtlMs: HOLD_TTL_MS,
        call: { provider: 'sim', upstreamModel: 'm', prompt: 'x', responseFormat: 'b64_json', passthrough: {} },
      });
      expect(started).toMatchObject({ role: 'owner', task: { status: 'unresolved' } });
      expect(await funds.getBalance()).toMatchObject({ held: 40, openHolds: 1 });
      clock += 5 * 3_600_000; // the artifact comes 5 hours into the task's 24: well before its deadline
      await task.record({ kind: 'succeeded', artifact: { b64Json: 'eA==', created: 1 }, via: 'response' });
      expect(await task.finish({})).toMatchObject({ status: 'succeeded', charged: 40 });
      expect(await funds.getBalance()).toMatchObject({ balance: 60, held: 0 });
    } finally {
      await embedded.close();
    }
  });
});
