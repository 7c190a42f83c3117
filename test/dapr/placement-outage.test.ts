// Placement gone: daprd cannot place an actor call and holds it until placement is back (more
// than a minute here). The gateway's /readyz says so within seconds (503, `actors: false`), a
// chat answers 503 actor_unavailable at the actor call timeout instead of hanging, a reserve
// that ran late anyway costs nothing (its hold expires), and all is well again once placement
// is back.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { balance, chat, fundedAccount, hello, json } from '../support/api';
import { eventually, passes } from '../support/eventually';
import { ADMIN_TOKEN } from '../support/processes';

jest.setTimeout(240_000);

const ACTOR_CALL_TIMEOUT_MS = 4_000;
const HOLD_TTL_MS = 5_000;
const PROVIDER_TIMEOUT_MS = 3_000;
const FUNDS = 10_000_000;

const readyz = (url: string) => json(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) });

describe('a placement outage (Dapr)', () => {
  let topology: RunningTopology;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-placement-'));
    topology = await startTopology({
      basePort: 16300,
      dataDir: join(dir, 'topology'),
      restartOnCrash: true,
      // Per-request holds: a chat's reserve is what meets the outage. (With a funds lease, a chat
      // carved before the outage was noticed is served and its settle retried: docs/money.md.)
      env: { GATEWAY_FUNDS_LEASE: 'off', GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', GATEWAY_ACTOR_CALL_TIMEOUT_MS: String(ACTOR_CALL_TIMEOUT_MS), GATEWAY_HOLD_TTL_MS: String(HOLD_TTL_MS), GATEWAY_PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS), GATEWAY_TEST_MODE: 'true' },
    });
  });

  afterAll(async () => {
    await topology?.stop();
  });

  it('when placement is gone, then /readyz answers 503 within seconds and a chat answers 503 within its deadline; once placement is back, both are well again and nothing stays held', async () => {
    const url = topology.gatewayUrls[0]!;
    const { apiKey } = await fundedAccount(url, FUNDS);
    const first = await chat(url, apiKey, { ...hello, max_tokens: 5 });
    expect(first.status).toBe(200);
    const charged = Number(first.headers.get('x-payg-charged'));
    expect(await readyz(url)).toMatchObject({ status: 200, body: { status: 'ready' } });

    // A stop the topology does not undo: killed on purpose, started again below.
    await topology.kill('placement');
    const stoppedAt = Date.now();
    // Both at once: readiness polled while a chat is asked, so each outcome is seen either way.
    const readiness = eventually(() => readyz(url), (r) => r.status === 503, 10_000).then((r) => ({ ...r, afterMs: Date.now() - stoppedAt }));
    const asked = Date.now();
    const refused = await json(`${url}/api/open/v1/models/sim-chat/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...hello, max_tokens: 5 }),
      // Without a bound of its own, the gateway would hold this call as long as placement is gone.
      signal: AbortSignal.timeout(30_000),
    }).catch((error: Error) => ({ status: `no answer: ${error.message}`, body: undefined }));
    const waited = Date.now() - asked;
    const notReady = await readiness;
    expect({
      readyz: notReady.status,
      checks: notReady.body.checks,
      readyzWithinSeconds: notReady.afterMs < 10_000,
      chat: refused.status,
      code: refused.body?.error?.code,
      chatWithinDeadline: waited >= ACTOR_CALL_TIMEOUT_MS - 500 && waited < ACTOR_CALL_TIMEOUT_MS + 3_000,
    }).toEqual({
      readyz: 503,
      checks: { sidecar: true, statestore: true, actors: false, ledger: true },
      readyzWithinSeconds: true,
      chat: 503,
      code: 'actor_unavailable',
      chatWithinDeadline: true,
    });

    await topology.restart('placement');
    await passes(async () => expect(await readyz(url)).toMatchObject({ status: 200, body: { status: 'ready', checks: { actors: true } } }), 60_000);
    const again = await passes(async () => {
      const answer = await chat(url, apiKey, { ...hello, max_tokens: 5 });
      expect(answer.status).toBe(200);
      return answer;
    }, 60_000);

    // The refused chat's reserve, should daprd have run it after all, expired: only the two
    // answered chats are charged and nothing is held.
    const after = await passes(async () => {
      const now = await balance(url, apiKey);
      expect(now.held).toBe(0);
      return now;
    }, HOLD_TTL_MS + 30_000);
    expect(after.balance).toBe(FUNDS - charged - Number(again.headers.get('x-payg-charged')));
  });
});
