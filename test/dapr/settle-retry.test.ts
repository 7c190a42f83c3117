// kill -9 of the actors app while streams finish (Dapr topology): the settles of the streams
// that complete meanwhile cannot reach their FundsHold actor. Each is retried by the gateway
// until it lands, its hold kept open, so every stream that sent `[DONE]` is charged, once, for
// its usage when the actors app is back.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { balance, fundedAccount } from '../support/api';
import { eventually } from '../support/eventually';
import { ADMIN_TOKEN } from '../support/processes';
import { startClientStream, type ClientStream } from '../support/streams';

jest.setTimeout(300_000);

const STREAMS = 12;
const FUNDS = 10_000_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('settles while the actors app is down (Dapr)', () => {
  let topology: RunningTopology;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-settle-retry-'));
    topology = await startTopology({ basePort: 14400, dataDir: join(dir, 'topology'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' } });
  });

  afterAll(async () => {
    await topology?.stop();
  });

  it('when the actors app is killed while streams finish, then every stream that sent [DONE] is charged once for its usage after it is back', async () => {
    const url = topology.gatewayUrls[0];
    const accounts = await Promise.all(Array.from({ length: STREAMS }, () => fundedAccount(url, FUNDS)));
    const streams: ClientStream[] = [];
    for (const { apiKey } of accounts) {
      streams.push(startClientStream(url, apiKey, 'tokens=150;stream-delay=20', 200));
      await sleep(150);
    }
    await eventually(async () => streams.every((s) => s.received() > 0), Boolean, 30_000);
    await topology.kill('actors', 'SIGKILL');
    const killedAt = Date.now();
    await Promise.all(streams.map((s) => s.ended));
    const backAt = Date.now();
    await topology.restart('actors');

    // The streams completed while their actors were down: their settles had to wait.
    const completed = streams.filter((s) => s.done());
    expect(completed.length).toBeGreaterThan(0);
    expect(completed.filter((s) => s.endedAt()! > killedAt && s.endedAt()! <= backAt).length).toBeGreaterThan(0);
    for (const [i, stream] of streams.entries()) {
      if (!stream.done()) continue;
      const usage = stream.usage()!;
      expect(usage.completion_tokens).toBe(150);
      const charge = usage.prompt_tokens * 100 + usage.completion_tokens * 400;
      // Its hold is carved from the gateway's funds lease (held stays 0): the charge itself is awaited.
      const after = await eventually(() => balance(url, accounts[i].apiKey), (b) => b.held === 0 && b.balance === FUNDS - charge, 90_000);
      expect(after).toMatchObject({ balance: FUNDS - charge, held: 0 });
    }
    // Once: still the same a little later (a retried settle is not charged twice).
    await sleep(2000);
    for (const [i, stream] of streams.entries()) {
      if (!stream.done()) continue;
      const usage = stream.usage()!;
      expect((await balance(url, accounts[i].apiKey)).balance).toBe(FUNDS - usage.prompt_tokens * 100 - usage.completion_tokens * 400);
    }
  });
});
