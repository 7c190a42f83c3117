// The prototype session routes end to end: the same cases against the embedded process and the
// Dapr topology. A run is a real model call billed like the chat route; its events reach every
// reader in order, resumable; only the owner reaches a session; a run whose gateway dies is
// failed by its lease and its hold released; every answer is marked prototype.

import { admin, apiKeyFor, balance, chat, fundedAccount, hello, json } from '../support/api';
import { eventually, passes } from '../support/eventually';
import { createSession, follow, newSession, ofRun, runEnded, startRun, workspaces, type StreamedEvent } from '../support/sessions';

export interface SessionDeployment {
  /** Gateway URLs (Dapr: two instances); runs are started on the first, readers may use any. */
  urls: string[];
  /** kill -9 of the gateway process carrying the runs (embedded: with its actors) and, once `whileDown` is done, its start again. */
  killGateway(whileDown?: () => Promise<void>): Promise<void>;
  /** SIGTERM of that gateway (graceful drain) and its start again. */
  restartGateway(): Promise<void>;
  ledgerBalance(accountId: string): Promise<number>;
  close(): Promise<void>;
}

const PROTOTYPE = 'legacy; excluded-from=open-navigation';
const run = (extra: Record<string, unknown> = {}) => ({ model: 'sim-chat', ...hello, max_tokens: 64, ...extra });
const kinds = (events: StreamedEvent[]) => events.map((e) => e.event);
const text = (events: StreamedEvent[]) => events.filter((e) => e.event === 'run.delta').map((e) => e.data.delta).join('');

/** started → at least one delta → usage → completed, ids strictly increasing. */
function expectCompletedRun(events: StreamedEvent[]): void {
  const seen = kinds(events);
  expect(seen[0]).toBe('run.started');
  expect(seen.slice(-2)).toEqual(['run.usage', 'run.completed']);
  expect(seen.slice(1, -2).every((k) => k === 'run.delta')).toBe(true);
  expect(seen.length).toBeGreaterThan(3);
  const ids = events.map((e) => e.id as number);
  for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]);
}

export function sessionsSuite(hostName: string, start: () => Promise<SessionDeployment>): void {
  describe(`prototype sessions on the ${hostName} host`, () => {
    let d: SessionDeployment;
    const url = () => d.urls[0];
    const otherUrl = () => d.urls[d.urls.length - 1];
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    it('when a session is created, then 201 with its id, listed under its workspace, and every answer is marked prototype', async () => {
      const { apiKey } = await fundedAccount(url(), 0);
      const plain = await createSession(url(), apiKey);
      expect(plain.status).toBe(201);
      expect(plain.body).toMatchObject({ workspace: 'default', events_url: `/v1/sessions/${plain.body.session_id}/events` });
      expect(plain.headers.get('x-payg-prototype')).toBe(PROTOTYPE);
      const named = await createSession(url(), apiKey, { workspace: 'research' });
      expect(named.body.workspace).toBe('research');
      const list = await workspaces(otherUrl(), apiKey);
      expect(list.headers.get('x-payg-prototype')).toBe(PROTOTYPE);
      expect(list.body.workspaces.map((w: { name: string; sessions: { session_id: string }[] }) => [w.name, w.sessions.map((s) => s.session_id)]))
        .toEqual([['default', [plain.body.session_id]], ['research', [named.body.session_id]]]);
      for (const body of [{ workspace: 'Bad Name' }, { workspace: 'x', extra: 1 }, [1]]) {
        const refused = await createSession(url(), apiKey, body);
        expect([refused.status, refused.body.error.code, refused.headers.get('x-payg-prototype')]).toEqual([400, 'invalid_request', PROTOTYPE]);
      }
      expect((await workspaces(url(), apiKey)).body.workspaces.flatMap((w: { sessions: unknown[] }) => w.sessions)).toHaveLength(2);
    });

    it('when a run streams, then its events come in order with increasing ids: started, deltas, usage, completed', async () => {
      const { apiKey } = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), apiKey);
      const accepted = await startRun(url(), apiKey, sessionId, run(), { 'x-sim-directive': 'tokens=6; stream-delay=30' });
      expect(accepted.status).toBe(202);
      expect(accepted.body).toMatchObject({ session_id: sessionId, status: 'running', model: 'sim-chat', started_event_id: 1, events_url: `/v1/sessions/${sessionId}/events` });
      expect(accepted.headers.get('x-payg-prototype')).toBe(PROTOTYPE);
      const followed = await follow(url(), apiKey, sessionId, { until: runEnded() });
      expect(followed.headers.get('content-type')).toMatch(/text\/event-stream/);
      expect(followed.headers.get('x-payg-prototype')).toBe(PROTOTYPE);
      expectCompletedRun(followed.events);
      expect(followed.events[0].data).toMatchObject({ run_id: accepted.body.run_id, model: 'sim-chat', max_tokens: 64 });
      expect(text(followed.events)).toBe('tok0 tok1 tok2 tok3 tok4 tok5');
      expect(followed.events.every((e) => e.data.id === e.id && e.data.kind === e.event && e.data.run_id === accepted.body.run_id)).toBe(true);
    });

    it('when a run completes, then it is charged exactly as the same chat is, once, and balance, ledger and bills agree with the hold closed', async () => {
      const { accountId, apiKey } = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), apiKey);
      const accepted = await startRun(url(), apiKey, sessionId, run({ max_tokens: 8 }), { 'x-sim-directive': 'tokens=5' });
      const { events } = await follow(url(), apiKey, sessionId, { until: runEnded() });
      const usage = events.find((e) => e.event === 'run.usage')!.data;
      const charge = usage.input_tokens * 100 + usage.output_tokens * 400;
      expect(usage).toMatchObject({ output_tokens: 5, charged: charge });
      expect(events.at(-1)!.data).toMatchObject({ charged: charge, finish_reason: 'stop' });
      const sameChat = await chat(url(), apiKey, { ...hello, max_tokens: 8 }, { headers: { 'x-sim-directive': 'tokens=5' } });
      expect(Number(sameChat.headers.get('x-payg-charged'))).toBe(charge);
      const expected = 10_000_000 - 2 * charge;
      expect(await balance(url(), apiKey)).toMatchObject({ balance: expected, held: 0 });
      expect(await eventually(() => d.ledgerBalance(accountId), (b) => b === expected)).toBe(expected);
      const bills = await passes(async () => {
        const page = await json(`${url()}/api/distribution/api-credit/bills/page?page=1&size=10`, { headers: { authorization: `Bearer ${apiKey}` } });
        const rows = page.body.items.filter((item: { holdId?: string }) => item.holdId === `run:${accepted.body.run_id}`);
        expect(rows.map((r: { kind: string; amount: number }) => [r.kind, r.amount])).toEqual([['charge', charge]]);
        return rows;
      });
      expect(bills[0]).toMatchObject({ model: 'sim-chat', balanceDelta: -charge });
    });

    it('when a reader reconnects with Last-Event-ID (or last_event_id), then it gets exactly what it missed, nothing twice', async () => {
      const { apiKey } = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), apiKey);
      await startRun(url(), apiKey, sessionId, run(), { 'x-sim-directive': 'tokens=12; stream-delay=60' });
      const first = await follow(url(), apiKey, sessionId, { until: (events) => events.length >= 3 });
      expect(first.ended).toBe('until');
      const lastSeen = first.events.at(-1)!.id!;
      const rest = await follow(otherUrl(), apiKey, sessionId, { lastEventId: lastSeen, until: runEnded() });
      const whole = await follow(url(), apiKey, sessionId, { until: runEnded() });
      expectCompletedRun(whole.events);
      expect([...first.events, ...rest.events].map((e) => e.id)).toEqual(whole.events.map((e) => e.id));
      expect([...first.events, ...rest.events]).toEqual(whole.events);
      // The query form, for a first connection that cannot set headers; the header wins over it.
      const byQuery = await follow(url(), apiKey, sessionId, { query: `?last_event_id=${lastSeen}`, until: runEnded() });
      expect(byQuery.events).toEqual(rest.events);
      const both = await follow(url(), apiKey, sessionId, { query: '?last_event_id=1', lastEventId: lastSeen, until: runEnded() });
      expect(both.events).toEqual(rest.events);
      const beyond = await follow(url(), apiKey, sessionId, { lastEventId: whole.events.at(-1)!.id! + 1 });
      expect([beyond.status, beyond.body.error.code, beyond.body.error.param]).toEqual([400, 'invalid_request', 'Last-Event-ID']);
      // The same id in the query: the error names the query parameter.
      const beyondQuery = await follow(url(), apiKey, sessionId, { query: `?last_event_id=${whole.events.at(-1)!.id! + 1}` });
      expect([beyondQuery.status, beyondQuery.body.error.code, beyondQuery.body.error.param]).toEqual([400, 'invalid_request', 'last_event_id']);
      expect(beyondQuery.body.error.message).toContain('last_event_id');
      const head = await fetch(`${url()}/v1/sessions/${sessionId}/events`, { method: 'HEAD', headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(5000) });
      expect([head.status, head.headers.get('content-type'), head.headers.get('x-payg-prototype')]).toEqual([200, 'text/event-stream; charset=utf-8', PROTOTYPE]);
      const junk = await follow(url(), apiKey, sessionId, { headers: { 'last-event-id': 'abc' } });
      expect([junk.status, junk.headers.get('x-payg-prototype')]).toEqual([400, PROTOTYPE]);
    });

    it('when several readers follow one session (on different gateways where there are two), then each sees the same sequence', async () => {
      const { apiKey } = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), apiKey);
      const readers = [url(), otherUrl(), url()].map((base) => follow(base, apiKey, sessionId, { until: runEnded() }));
      await new Promise((r) => setTimeout(r, 200));
      await startRun(url(), apiKey, sessionId, run(), { 'x-sim-directive': 'tokens=8; stream-delay=20' });
      const seen = await Promise.all(readers);
      expectCompletedRun(seen[0].events);
      for (const other of seen.slice(1)) expect(other.events).toEqual(seen[0].events);
    });

    it('when a run is in progress, then a second is refused with 409 run_in_progress and holds nothing; after it, the next one runs', async () => {
      const { apiKey } = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), apiKey);
      const first = await startRun(url(), apiKey, sessionId, run(), { 'x-sim-directive': 'tokens=10; stream-delay=50' });
      const held = (await balance(url(), apiKey)).held;
      expect(held).toBeGreaterThan(0);
      const second = await startRun(otherUrl(), apiKey, sessionId, run());
      expect([second.status, second.body.error.code, second.body.error.run_id]).toEqual([409, 'run_in_progress', first.body.run_id]);
      expect((await balance(url(), apiKey)).held).toBe(held);
      await follow(url(), apiKey, sessionId, { until: runEnded(first.body.run_id) });
      const third = await startRun(url(), apiKey, sessionId, run(), { 'x-sim-directive': 'tokens=2' });
      expect(third.status).toBe(202);
      const { events } = await follow(url(), apiKey, sessionId, { until: runEnded(third.body.run_id) });
      expect(events.filter((e) => e.event === 'run.started').map((e) => e.data.run_id)).toEqual([first.body.run_id, third.body.run_id]);
      // Runs never interleave: the first ended before the next started.
      expect(kinds(events).indexOf('run.completed')).toBeLessThan(kinds(events).lastIndexOf('run.started'));
      expect(await eventually(() => balance(url(), apiKey), (b) => b.held === 0)).toMatchObject({ held: 0 });
    });

    it('when another account, no key or a token asks, then 404, 401 and 403, each marked prototype, and nothing moves', async () => {
      const owner = await fundedAccount(url(), 10_000_000);
      const stranger = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), owner.apiKey);
      const unknown = crypto.randomUUID();
      const answers = [
        await follow(url(), stranger.apiKey, sessionId),
        await startRun(url(), stranger.apiKey, sessionId, run()),
        await follow(url(), stranger.apiKey, unknown),
        await startRun(url(), stranger.apiKey, unknown, run()),
        await startRun(url(), stranger.apiKey, 'not-a-session', run()),
      ];
      for (const answer of answers) expect([answer.status, answer.body.error.code, answer.headers.get('x-payg-prototype')]).toEqual([404, 'not_found', PROTOTYPE]);
      expect(answers[0].body.error.message).toBe(answers[2].body.error.message);
      const anonymous = [
        await json(`${url()}/v1/sessions`, { method: 'POST' }),
        await json(`${url()}/v1/workspaces`),
        await json(`${url()}/v1/sessions/${sessionId}/events`),
        await json(`${url()}/v1/sessions/${sessionId}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(run()) }),
      ];
      for (const answer of anonymous) expect([answer.status, answer.body.error.code, answer.headers.get('x-payg-prototype')]).toEqual([401, 'unauthorized', PROTOTYPE]);
      const token = await json(`${url()}/v1/workspaces`, { headers: { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' } });
      expect([token.status, token.body.error.code, token.headers.get('x-payg-prototype')]).toEqual([403, 'credential_family_mismatch', PROTOTYPE]);
      const elsewhere = await json(`${url()}/v1/sessions/${sessionId}/nothing`, { headers: { authorization: `Bearer ${owner.apiKey}` } });
      expect([elsewhere.status, elsewhere.headers.get('x-payg-prototype')]).toEqual([404, PROTOTYPE]);
      expect((await workspaces(url(), stranger.apiKey)).body).toEqual({ workspaces: [] });
      // Another key of the owner's own account reaches it: the account owns the session.
      const secondKey = await apiKeyFor(url(), owner.accountId);
      expect((await follow(url(), secondKey, sessionId, { timeoutMs: 300 })).status).toBe(200);
      for (const who of [owner, stranger]) expect(await balance(url(), who.apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
    });

    it('when the upstream fails, then run.failed follows, the hold is released and only output produced is charged', async () => {
      const { accountId, apiKey } = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), apiKey);
      const before = await startRun(url(), apiKey, sessionId, run(), { 'x-sim-directive': 'fail-before-output' });
      const failed = await follow(url(), apiKey, sessionId, { until: runEnded(before.body.run_id) });
      expect(kinds(failed.events)).toEqual(['run.started', 'run.failed']);
      expect(failed.events[1].data).toMatchObject({ code: 'provider_error', charged: 0 });
      expect(await balance(url(), apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      const midway = await startRun(url(), apiKey, sessionId, run(), { 'x-sim-directive': 'tokens=20; fail-after-chunks=3' });
      const cut = ofRun((await follow(url(), apiKey, sessionId, { until: runEnded(midway.body.run_id) })).events, midway.body.run_id);
      expect(kinds(cut)[0]).toBe('run.started');
      expect(kinds(cut).slice(-2)).toEqual(['run.usage', 'run.failed']);
      const usage = cut.at(-2)!.data;
      expect(usage.output_tokens).toBe(3);
      expect(usage.charged).toBe(usage.input_tokens * 100 + 3 * 400);
      expect(cut.at(-1)!.data).toMatchObject({ code: 'provider_error', charged: usage.charged });
      expect(await balance(url(), apiKey)).toMatchObject({ balance: 10_000_000 - usage.charged, held: 0 });
      expect(await eventually(() => d.ledgerBalance(accountId), (b) => b === 10_000_000 - usage.charged)).toBe(10_000_000 - usage.charged);
    });

    describe('routed as a streaming chat of its profile (docs/providers.md, "Routing")', () => {
      /** The route on the usage rows of an account's one charged call (every row of the call carries it), durations left out. */
      const routeOf = async (apiKey: string) => {
        const page = await eventually(
          () => json(`${url()}/api/distribution/api-credit/usage/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } }),
          (r) => r.body.items?.length >= 2,
        );
        const routes = (page.body.items as { route?: { upstream: string; attempts: { durationMs: number }[] } }[]).map((row) => row.route);
        expect(routes.every((route) => JSON.stringify(route) === JSON.stringify(routes[0]))).toBe(true);
        return routes[0] && { upstream: routes[0].upstream, attempts: routes[0].attempts.map(({ durationMs: _ms, ...attempt }) => attempt) };
      };
      /** payg_upstream_attempts_total of one provider and outcome, from the gateway carrying the runs. */
      const attempts = async (provider: string, outcome: string) => {
        const text = (await json(`${url()}/metrics`)).body as string;
        return Number(new RegExp(`^payg_upstream_attempts_total\\{provider="${provider}",outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
      };

      it('when the first upstream fails before any output, then the fallback serves the run, billed once, its route on the usage rows', async () => {
        const { apiKey } = await fundedAccount(url(), 10_000_000);
        const sessionId = await newSession(url(), apiKey);
        const accepted = await startRun(url(), apiKey, sessionId, run({ model: 'routed-chat', max_tokens: 5 }));
        expect(accepted.status).toBe(202);
        const { events } = await follow(url(), apiKey, sessionId, { until: runEnded() });
        expectCompletedRun(events);
        expect(text(events)).toBe('tok0 tok1 tok2 tok3 tok4');
        const charged = events.at(-1)!.data.charged as number;
        expect(charged).toBeGreaterThan(0);
        expect(events.at(-2)!.data).toMatchObject({ output_tokens: 5, charged });
        expect(await eventually(() => balance(url(), apiKey), (b) => b.held === 0)).toMatchObject({ balance: 10_000_000 - charged, held: 0 });
        expect(await routeOf(apiKey)).toEqual({ upstream: 'local-openai', attempts: [{ upstream: 'local-openai-503', outcome: 'unavailable' }, { upstream: 'local-openai', outcome: 'served' }] });
        const bills = await passes(async () => {
          const page = await json(`${url()}/api/distribution/api-credit/bills/page?page=1&size=10`, { headers: { authorization: `Bearer ${apiKey}` } });
          const rows = page.body.items.filter((item: { holdId?: string }) => item.holdId === `run:${accepted.body.run_id}`);
          expect(rows.map((r: { kind: string; amount: number }) => [r.kind, r.amount])).toEqual([['charge', charged]]);
          return rows;
        });
        expect(bills).toHaveLength(1);
      });

      it('when the upstream serving a run breaks after output, then no fallback is tried: run.failed, charged for what was produced, its route says broken', async () => {
        const { apiKey } = await fundedAccount(url(), 10_000_000);
        const sessionId = await newSession(url(), apiKey);
        await startRun(url(), apiKey, sessionId, run({ model: 'routed-cut-chat' }));
        const { events } = await follow(url(), apiKey, sessionId, { until: runEnded() });
        expect(kinds(events).slice(-2)).toEqual(['run.usage', 'run.failed']);
        expect(text(events)).toBe('tok0 tok1 tok2');
        const usage = events.at(-2)!.data;
        expect(usage).toMatchObject({ output_tokens: 3, charged: usage.input_tokens * 100 + 3 * 400 });
        expect(events.at(-1)!.data).toMatchObject({ code: 'provider_error', charged: usage.charged });
        expect(await eventually(() => balance(url(), apiKey), (b) => b.held === 0)).toMatchObject({ balance: 10_000_000 - usage.charged, held: 0 });
        expect(await routeOf(apiKey)).toEqual({ upstream: 'local-openai-cut', attempts: [{ upstream: 'local-openai-cut', outcome: 'broken' }] });
      });

      it('when every upstream of the profile fails before any output, then each is tried once and the run ends run.failed, nothing charged, nothing held', async () => {
        const before = [await attempts('local-openai-refused', 'refused'), await attempts('local-openai-502', 'unavailable')];
        const { accountId, apiKey } = await fundedAccount(url(), 10_000_000);
        const sessionId = await newSession(url(), apiKey);
        await startRun(url(), apiKey, sessionId, run({ model: 'routed-down-chat' }));
        const { events } = await follow(url(), apiKey, sessionId, { until: runEnded() });
        expect(kinds(events)).toEqual(['run.started', 'run.failed']);
        expect(events[1].data).toMatchObject({ code: 'provider_error', charged: 0 });
        expect([await attempts('local-openai-refused', 'refused'), await attempts('local-openai-502', 'unavailable')]).toEqual(before.map((n) => n + 1));
        expect(await eventually(() => balance(url(), apiKey), (b) => b.held === 0)).toMatchObject({ balance: 10_000_000, held: 0 });
        expect(await eventually(() => d.ledgerBalance(accountId), (b) => b === 10_000_000)).toBe(10_000_000);
        const usage = await json(`${url()}/api/distribution/api-credit/usage/page?size=100`, { headers: { authorization: `Bearer ${apiKey}` } });
        expect(usage.body.items).toEqual([]);
      });
    });

    it('when a run request breaks a chat limit or the funds do not cover it, then it is refused as the chat route refuses it and nothing is held or streamed', async () => {
      const { apiKey } = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), apiKey);
      const cases: [unknown, number, string][] = [
        [run({ max_tokens: 1_048_577 }), 400, 'max_tokens_out_of_range'],
        [run({ max_completion_tokens: 5 }), 400, 'max_completion_tokens_unsupported'],
        [run({ n: 2 }), 400, 'n_unsupported'],
        [{ ...hello }, 400, 'invalid_request'],
        [run({ messages: [] }), 400, 'invalid_request'],
        [run({ model: 'no-such-model' }), 404, 'model_not_found'],
        [run({ model: 'unpriced-chat' }), 403, 'model_not_eligible'],
      ];
      for (const [body, status, code] of cases) {
        const refused = await startRun(url(), apiKey, sessionId, body);
        expect([refused.status, refused.body.error?.code, refused.headers.get('x-payg-prototype')]).toEqual([status, code, PROTOTYPE]);
      }
      const poor = await fundedAccount(url(), 1000);
      const poorSession = await newSession(url(), poor.apiKey);
      const unfunded = await startRun(url(), poor.apiKey, poorSession, run());
      expect([unfunded.status, unfunded.body.error.code]).toEqual([402, 'insufficient_funds']);
      for (const [key, id] of [[apiKey, sessionId], [poor.apiKey, poorSession]]) {
        expect((await follow(url(), key, id, { timeoutMs: 500 })).events).toEqual([]);
      }
      expect(await balance(url(), apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      expect(await balance(url(), poor.apiKey)).toMatchObject({ balance: 1000, held: 0 });
    });

    it('when a run asks for Agent Run, then it is refused 403 capability_gate_closed until every gate passes, and runs, stating the grant, once they do', async () => {
      const { accountId, apiKey } = await fundedAccount(url(), 10_000_000);
      const agentKey = (await admin(url(), `/admin/v1/accounts/${accountId}/api-keys`, { scopes: ['agent_run'] })).body.apiKey;
      const sessionId = await newSession(url(), apiKey);
      const agent = { 'x-payg-capabilities': 'agent_run', 'x-sim-directive': 'tokens=3' };
      const closed: [string, string, string][] = [[apiKey, 'capable-chat', 'scopes'], [agentKey, 'sim-chat', 'source'], [agentKey, 'capable-unpriced-chat', 'price']];
      for (const [key, model, gate] of closed) {
        const refused = await startRun(url(), key, sessionId, run({ model }), agent);
        expect([refused.status, refused.body.error.code, refused.body.error.capability, refused.body.error.gate]).toEqual([403, 'capability_gate_closed', 'agent_run', gate]);
      }
      const other = await startRun(url(), agentKey, sessionId, run({ model: 'capable-chat' }), { 'x-payg-capabilities': 'signing' });
      expect([other.status, other.body.error.param]).toEqual([400, 'X-Payg-Capabilities']);
      expect(await balance(url(), apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
      expect((await follow(url(), apiKey, sessionId, { timeoutMs: 300 })).events).toEqual([]);
      const granted = await startRun(url(), agentKey, sessionId, run({ model: 'capable-chat' }), agent);
      expect([granted.status, granted.headers.get('x-payg-capabilities'), granted.body.capabilities]).toEqual([202, 'agent_run', ['agent_run']]);
      const { events } = await follow(url(), apiKey, sessionId, { until: runEnded() });
      expectCompletedRun(events);
      expect(events[0].data.capabilities).toEqual(['agent_run']);
    });

    it('when the OpenAPI document of the open routes is read, then no prototype route is in it', async () => {
      const openapi = await json(`${url()}/api/open/v1/openapi.json`);
      expect(openapi.status).toBe(200);
      expect(openapi.headers.get('x-payg-prototype')).toBeNull();
      expect(JSON.stringify(openapi.body)).not.toMatch(/\/v1\/(sessions|workspaces)/);
    });

    it('when the gateway is stopped gracefully mid-run, then readers are let go and the run finishes and is billed before it exits', async () => {
      const { apiKey } = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), apiKey);
      const accepted = await startRun(url(), apiKey, sessionId, run({ max_tokens: 20 }), { 'x-sim-directive': 'tokens=20; stream-delay=50' });
      await follow(url(), apiKey, sessionId, { until: (events) => events.some((e) => e.event === 'run.delta') });
      await d.restartGateway();
      const { events } = await follow(url(), apiKey, sessionId, { until: runEnded() });
      expectCompletedRun(events);
      expect(events.at(-2)!.data.output_tokens).toBe(20);
      expect(text(events)).toContain('tok19');
      expect(await balance(url(), apiKey)).toMatchObject({ balance: 10_000_000 - events.at(-1)!.data.charged, held: 0 });
      expect(events[0].data.run_id).toBe(accepted.body.run_id);
    });

    it('when the gateway carrying a run is killed midway, then after the lease the run is failed, charged at most for the output readers saw', async () => {
      const { accountId, apiKey } = await fundedAccount(url(), 10_000_000);
      const sessionId = await newSession(url(), apiKey);
      const accepted = await startRun(url(), apiKey, sessionId, run({ max_tokens: 200 }), { 'x-sim-directive': 'tokens=200; stream-delay=50' });
      // Past the first progress record (every 2 s by default), so the lease usually charges one.
      const seen = await follow(url(), apiKey, sessionId, { until: (events) => events.filter((e) => e.event === 'run.delta').length >= 60 });
      expect((await balance(url(), apiKey)).held).toBeGreaterThan(0);
      let watched: StreamedEvent[] = [];
      await d.killGateway(async () => {
        // Where another gateway serves, a reader there sees the run fail while this one is down.
        if (d.urls.length > 1) watched = (await follow(otherUrl(), apiKey, sessionId, { lastEventId: seen.events.at(-1)!.id, until: runEnded(), timeoutMs: 30_000 })).events;
      });
      const rest = await follow(url(), apiKey, sessionId, { lastEventId: seen.events.at(-1)!.id, until: runEnded(), timeoutMs: 30_000 });
      if (d.urls.length > 1) expect(watched).toEqual(rest.events);
      const all = [...seen.events, ...rest.events];
      expect(all.at(-1)).toMatchObject({ event: 'run.failed', data: { run_id: accepted.body.run_id, code: 'run_lease_expired' } });
      // What its gateway had recorded on the hold as appended (docs/money.md, progress), never more.
      const charged = all.at(-1)!.data.charged as number;
      const seenTokens = (text(all).match(/tok\d+/g) ?? []).length;
      expect(charged).toBeLessThanOrEqual(seenTokens * 400 + 10_000);
      // Charged for a progress record: its usage (run.usage, the same charge) comes before run.failed.
      if (charged > 0) {
        expect(kinds(all).filter((k) => k !== 'run.delta')).toEqual(['run.started', 'run.usage', 'run.failed']);
        expect(all.at(-2)!.data).toMatchObject({ run_id: accepted.body.run_id, charged });
        expect(all.at(-2)!.data.output_tokens).toBeGreaterThan(0);
      } else {
        expect(kinds(all).filter((k) => k !== 'run.delta')).toEqual(['run.started', 'run.failed']);
      }
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
      expect(await balance(url(), apiKey)).toMatchObject({ balance: 10_000_000 - charged, held: 0 });
      expect(await eventually(() => d.ledgerBalance(accountId), (b) => b === 10_000_000 - charged)).toBe(10_000_000 - charged);
      // The session takes the next run.
      const next = await startRun(url(), apiKey, sessionId, run(), { 'x-sim-directive': 'tokens=2' });
      expect(next.status).toBe(202);
      expectCompletedRun(ofRun((await follow(url(), apiKey, sessionId, { until: runEnded(next.body.run_id) })).events, next.body.run_id));
    });
  });
}
