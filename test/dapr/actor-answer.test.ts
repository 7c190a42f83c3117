// The Dapr runtime this project builds (scripts/dapr-runtime.sh) reads an actor's whole answer
// while the resiliency policy still holds the call. Upstream v1.18.3 reads the body only after
// the policy has let go of the call's context: an answer whose body reaches daprd after its
// headers (a large answer, a busy app) fails with "context canceled" and is retried, one second
// later, although the actor has run it (dapr/dapr#10140). On the money path that was a lease
// batch of some 30 settles answered after 1 or 2 s instead of 10 ms, several times a second
// under load (docs/dapr-runtime.md). A fixture actors app answers with the body 100 ms after
// the headers, under the product's own resiliency policy (actor type FundsHold).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureApp } from '../support/processes';
import { resolveDaprBinaries, startTopology, type RunningTopology } from '../../topology/topology';

// The first run on a machine may build the Dapr runtime from source (scripts/dapr-runtime.sh).
const BUILD_TIMEOUT_MS = 45 * 60_000;
jest.setTimeout(120_000);

describe('an actor answer whose body comes after its headers (Dapr)', () => {
  let topology: RunningTopology;

  beforeAll(async () => {
    topology = await startTopology({
      basePort: 20000,
      dataDir: mkdtempSync(join(tmpdir(), 'actor-answer-')),
      daprBinDir: await resolveDaprBinaries(),
      actorTypes: ['FundsHold'],
      apps: {
        actors: fixtureApp('split-answer-actors-app.js'),
        ledger: fixtureApp('probe-http-app.js'),
        gateway: fixtureApp('probe-http-app.js'),
      },
    });
  }, BUILD_TIMEOUT_MS);
  afterAll(() => topology?.stop());

  const call = async (id: string, method: string) => {
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${topology.ports['daprd-gateway-http']}/v1.0/actors/FundsHold/${id}/method/${method}`, { method: 'PUT' });
    return { status: res.status, text: await res.text(), ms: performance.now() - started };
  };

  it('when the actor answers, then the caller gets the whole body at once and the actor ran the call once', async () => {
    for (const id of ['split-1', 'split-2', 'split-3']) {
      const answer = await call(id, 'split');
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({ id });
      expect(answer.text.length).toBeGreaterThan(16 * 1024);
      // A retried call waits a whole second (the policy's pause) before its next attempt.
      expect(answer.ms).toBeLessThan(900);
      expect(await call(id, 'count')).toMatchObject({ status: 200, text: '1' });
    }
  });
});
