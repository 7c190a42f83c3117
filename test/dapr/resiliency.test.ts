// Issue 6, point 6: the resiliency policy's retries on the money paths never double a charge.
// The actors app stalls (SIGSTOP, as a long GC pause or a frozen node would) while a chat's
// settle is on its way to it: daprd's timeout fires and the call is retried, and when the app
// resumes it receives the settle more than once. The customer is charged once, the ledger has one
// charge, and reconciliation finds no difference. The traces show that the retry really reached
// the app (more than one FundsHold/settle served in the request's trace).

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology, type RunningTopology } from '../../topology/topology';
import { traceIdOf, tracingEnv } from '../contract/tracing.suite';
import { balance, chat, fundedAccount, hello, json } from '../support/api';
import { writeTestCatalog } from '../support/catalog';
import { passes } from '../support/eventually';
import { OTLP_SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { ADMIN_TOKEN } from '../support/processes';
import { startUpstream, type Upstream } from '../support/upstream';

jest.setTimeout(180_000);

/** dapr/resiliency.yaml's actorCall timeout and the pause before a retry. */
const ACTOR_CALL_TIMEOUT_MS = 5_000;
const ACTOR_CALL_RETRY_MS = 1_000;
/** The upstream answers after this: the reservation is made before it, the settle after. */
const UPSTREAM_DELAY_MS = 1_500;
const FUNDS = 10_000_000;
const OUTBOX_ROUND_PASSED_MS = 3_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('resiliency of the money paths (Dapr)', () => {
  let topology: RunningTopology;
  let upstream: Upstream;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-dapr-resiliency-'));
    upstream = await startUpstream();
    receiver = await startOtlpReceiver();
    const catalogFile = writeTestCatalog(join(dir, 'catalog.json'), upstream.url);
    // A chat model whose upstream takes its time, so the actors app can be stalled in between.
    const catalog = JSON.parse(readFileSync(catalogFile, 'utf8'));
    const upstreamChat = catalog.models.find((m: { id: string }) => m.id === 'upstream-chat');
    catalog.providers['local-openai-delayed'] = { kind: 'openai', baseUrl: upstream.url, headers: { 'x-upstream-behaviour': `delay=${UPSTREAM_DELAY_MS}` } };
    catalog.models.push({ ...upstreamChat, id: 'delayed-chat', profiles: [{ ...upstreamChat.profiles[0], profile_id: '7a1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e77', provider: 'local-openai-delayed' }] });
    writeFileSync(catalogFile, JSON.stringify(catalog));
    topology = await startTopology({
      basePort: 24400,
      dataDir: join(dir, 'topology'),
      otelEndpoint: receiver.endpoint,
      // Per-request holds: this is about daprd's retries of FundsHold.settle (a lease's batches are
      // idempotent the same way, by hold id: test/dapr/funds-lease.test.ts, FundsHold lease contract).
      env: { ...tracingEnv(receiver), GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_CATALOG_FILE: catalogFile, GATEWAY_LOG_LEVEL: 'warn', GATEWAY_FUNDS_LEASE: 'off' },
    });
  });

  afterAll(async () => {
    await topology?.kill('actors', 'SIGCONT').catch(() => undefined);
    await topology?.stop();
    await receiver?.close();
    await upstream?.close();
  });

  it('when the actors app stalls past the timeout while a settle is on its way, then daprd retries it and the customer is still charged once', async () => {
    const url = topology.gatewayUrls[0];
    const { apiKey } = await fundedAccount(url, FUNDS);
    // Past the credit's outbox confirmation round (1 s after it, docs/money.md): a reminder in
    // flight to the stalled app would hold the actor's turn in daprd, and the settle would wait
    // behind it instead of reaching the app.
    await sleep(OUTBOX_ROUND_PASSED_MS);
    const before = await balance(url, apiKey);

    const answer = chat(url, apiKey, { ...hello, max_tokens: 5 }, { model: 'delayed-chat' });
    await sleep(UPSTREAM_DELAY_MS / 2);
    // The hold is made; the settle will reach a stalled app.
    expect((await balance(url, apiKey)).held).toBeGreaterThan(0);
    await topology.kill('actors', 'SIGSTOP');
    // Past the first attempt's timeout and into the retry's wait.
    await sleep(UPSTREAM_DELAY_MS / 2 + ACTOR_CALL_TIMEOUT_MS + ACTOR_CALL_RETRY_MS + 1_000);
    await topology.kill('actors', 'SIGCONT');
    const response = await answer;

    // Retried after the timeout, the settle succeeded: one answer, one charge. The stall outlasts
    // the answer's wait for its settle (SETTLE_WAIT_MS), so the answer may go out before the
    // charge lands, without x-payg-charged (docs/money.md); the charge lands all the same.
    expect(response.status).toBe(200);
    const bills = await passes(async () => {
      const page = await json(`${url}/api/distribution/api-credit/bills/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(page.body.items.filter((b: { kind: string }) => b.kind === 'charge')).toHaveLength(1);
      return page.body.items;
    }, 30_000);
    const charged: number = bills.find((b: { kind: string }) => b.kind === 'charge').amount;
    expect(charged).toBeGreaterThan(0);
    const header = response.headers.get('x-payg-charged');
    if (header !== null) expect(Number(header)).toBe(charged);
    const after = await passes(async () => {
      const now = await balance(url, apiKey);
      expect(now.held).toBe(0);
      return now;
    });
    expect(after.balance).toBe(before.balance - charged);

    const reconciliation = await json(`${url}/admin/v1/reconciliation`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(reconciliation.body.differences).toEqual([]);

    // And the settle really was retried: the actors' sidecar received it more than once (its
    // server spans, in this request's trace), while the app served it once.
    const { traceId } = traceIdOf(response);
    const attempts = (spans: ReturnType<OtlpReceiver['spans']>) =>
      spans.filter((s) => s.traceId === traceId && s.service === 'actors' && s.kind === OTLP_SPAN_KIND.server && s.name === 'CallActor/FundsHold/settle');
    expect(attempts(await receiver.waitFor((spans) => attempts(spans).length >= 2, 20_000)).length).toBeGreaterThanOrEqual(2);
  });

  it('when one settle reaches the actors app twice at once (a retry beside its first attempt), then the turns run one after the other and charge once', async () => {
    const url = topology.gatewayUrls[0];
    const { accountId, apiKey } = await fundedAccount(url, FUNDS);
    const holdId = randomUUID();
    const actor = `/actors/FundsHold/${encodeURIComponent(`${accountId}:pool-3`)}/method`;
    // Through the gateway's sidecar, as the gateway does: the reservation.
    const sidecar = `http://127.0.0.1:${topology.ports['daprd-gateway-http']}/v1.0${actor}`;
    const reserved = await json(`${sidecar}/reserve`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ holdId, amount: 50_000, ttlMs: 60_000, requestId: 'r', model: 'm', profileId: 'p' }) });
    expect(reserved.body).toMatchObject({ ok: true });
    // Straight to the app, twice at once: what daprd delivers when a retry overtakes a stalled attempt.
    const settle = JSON.stringify({ holdId, lines: [{ unit: 'TEXT_OUTPUT', quantity: 10, unitPrice: 400 }] });
    const app = `http://127.0.0.1:${topology.ports.actors}${actor}`;
    const both = await Promise.all([0, 1].map(() => json(`${app}/settle`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: settle })));
    for (const answer of both) expect(answer.body).toMatchObject({ ok: true, result: { charged: 4_000 } });
    const after = await passes(async () => {
      const now = await balance(url, apiKey);
      expect(now.held).toBe(0);
      return now;
    });
    expect(after.balance).toBe(FUNDS - 4_000);
    const bills = await passes(async () => {
      const page = await json(`${url}/api/distribution/api-credit/bills/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(page.body.items.some((b: { kind: string }) => b.kind === 'charge')).toBe(true);
      return page.body.items;
    });
    expect(bills.filter((b: { kind: string }) => b.kind === 'charge').map((b: { amount: number }) => b.amount)).toEqual([4_000]);
  });
});
