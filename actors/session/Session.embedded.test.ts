// The Session actor on the embedded host, with a real local database and the real FundsHold and
// WorkspaceIndex beside it: the run's money, the ordered bounded log, the lease, owner-only reads.

import { randomUUID } from 'node:crypto';
import { FundsHoldClient } from '../funds-hold/client';
import { WorkspaceIndexClient } from '../workspace-index/client';
import { startEmbeddedActors, type ActorHostUnderTest } from '../../test/support/actor-hosts';
import { passes } from '../../test/support/eventually';
import { SessionClient } from './client';
import { MAX_EVENTS, PAGE_SIZE } from './event-log';
import type { SessionOwner, StartRunRequest } from './SessionInterface';

jest.setTimeout(30_000);

describe('Session actor on the embedded host', () => {
  let host: ActorHostUnderTest;
  let sessions: SessionClient;
  let funds: FundsHoldClient;

  beforeAll(async () => {
    host = await startEmbeddedActors('session-');
    sessions = new SessionClient(host.invoker);
    funds = new FundsHoldClient(host.invoker);
  });
  afterAll(async () => {
    await host?.close();
  });

  async function newSession(amount = 10_000_000): Promise<{ owner: SessionOwner; id: string }> {
    const owner = { accountId: `acct_${randomUUID().slice(0, 8)}`, apiKeyId: 'key_a' };
    if (amount > 0) await funds.of(owner.accountId).credit({ amount, reference: 'seed' });
    const id = randomUUID();
    await sessions.of(id).create({ owner, workspace: 'default' });
    return { owner, id };
  }

  const start = (owner: SessionOwner, overrides: Partial<StartRunRequest> = {}): StartRunRequest => ({
    owner, runId: randomUUID(), requestId: 'req', model: 'sim-chat', profileId: 'p', maxTokens: 16, capabilities: [], hold: { amount: 100_000, ttlMs: 600_000 }, leaseMs: 60_000, ...overrides,
  });
  const lines = (input: number, output: number) => [{ unit: 'TEXT_INPUT' as const, quantity: input, unitPrice: 100 }, { unit: 'TEXT_OUTPUT' as const, quantity: output, unitPrice: 400 }];

  it('when a run streams and completes, then its events are in order with increasing ids and it is charged once', async () => {
    const { owner, id } = await newSession();
    const session = sessions.of(id);
    const run = await session.startRun(start(owner));
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ held: 100_000 });
    await session.append({ runId: run.runId, delta: 'tok0 ' });
    await session.append({ runId: run.runId, delta: '' });
    await session.append({ runId: run.runId, delta: 'tok1' });
    const outcome = await session.finishRun({ runId: run.runId, usage: { inputTokens: 3, outputTokens: 2, lines: lines(3, 2) }, finishReason: 'stop' });
    expect(outcome).toMatchObject({ status: 'completed', charged: 3 * 100 + 2 * 400 });
    // A repeat (the gateway retrying after a lost answer) changes nothing.
    expect(await session.finishRun({ runId: run.runId, usage: { inputTokens: 3, outputTokens: 2, lines: lines(3, 2) } })).toMatchObject({ status: 'completed', charged: 1100 });
    const { events } = await session.readEvents({ owner, after: 0, limit: 100 });
    expect(events.map((e) => e.kind)).toEqual(['run.started', 'run.delta', 'run.delta', 'run.usage', 'run.completed']);
    expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(events[3].data).toMatchObject({ input_tokens: 3, output_tokens: 2, charged: 1100 });
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ balance: 10_000_000 - 1100, held: 0 });
    await expect(session.append({ runId: run.runId, delta: 'late' })).rejects.toMatchObject({ code: 'run_not_active' });
  });

  it('when a run finishes with a route, then its hold is settled with it and the usage rows show it; a bad route refuses the finish and changes nothing', async () => {
    const { owner, id } = await newSession();
    const session = sessions.of(id);
    const run = await session.startRun(start(owner));
    const route = { upstream: 'b', attempts: [{ upstream: 'a', outcome: 'timeout', durationMs: 9000, platformBorne: true }, { upstream: 'b', outcome: 'served', durationMs: 200 }] };
    await expect(session.finishRun({ runId: run.runId, usage: { inputTokens: 3, outputTokens: 2, lines: lines(3, 2), route: { upstream: 'b', attempts: [] } } })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ balance: 10_000_000, held: 100_000 });
    expect(await session.finishRun({ runId: run.runId, usage: { inputTokens: 3, outputTokens: 2, lines: lines(3, 2), route } })).toMatchObject({ status: 'completed', charged: 1100 });
    const { page } = await host.consoleUsage(owner.accountId);
    expect(page.items.map((item) => ['unit' in item ? item.unit : '', 'route' in item ? item.route : undefined])).toEqual([['TEXT_OUTPUT', route], ['TEXT_INPUT', route]]);
  });

  it('when a run is active, then a second is refused with run_in_progress and nothing more is held', async () => {
    const { owner, id } = await newSession();
    const first = await sessions.of(id).startRun(start(owner));
    await expect(sessions.of(id).startRun(start(owner))).rejects.toMatchObject({ code: 'run_in_progress', extra: { run_id: first.runId } });
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ held: 100_000, openHolds: 1 });
    await sessions.of(id).finishRun({ runId: first.runId, failure: { code: 'provider_error', message: 'x' } });
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ balance: 10_000_000, held: 0 });
    await sessions.of(id).startRun(start(owner));
  });

  it('when a start or an output batch is repeated (a retry whose first attempt ran), then it is taken once: one hold, one run.started, each delta once', async () => {
    const { owner, id } = await newSession();
    const session = sessions.of(id);
    const request = start(owner);
    const run = await session.startRun(request);
    expect(await session.startRun(request)).toEqual(run);
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ held: 100_000, openHolds: 1 });
    await session.append({ runId: run.runId, delta: 'a', seq: 1 });
    await session.append({ runId: run.runId, delta: 'a', seq: 1 });
    await session.append({ runId: run.runId, delta: '', seq: 2 });
    await session.append({ runId: run.runId, delta: 'b', seq: 3 });
    await session.append({ runId: run.runId, delta: 'a', seq: 1 });
    await expect(session.append({ runId: run.runId, delta: 'x', seq: 0 })).rejects.toMatchObject({ code: 'invalid_request', param: 'seq' });
    const { events } = await session.readEvents({ owner, after: 0, limit: 100 });
    expect(events.map((e) => [e.kind, (e.data as { delta?: string }).delta])).toEqual([['run.started', undefined], ['run.delta', 'a'], ['run.delta', 'b']]);
  });

  it('when the funds do not cover the hold, then 402 and the session has no run and no event', async () => {
    const { owner, id } = await newSession(1000);
    await expect(sessions.of(id).startRun(start(owner))).rejects.toMatchObject({ code: 'insufficient_funds' });
    expect(await sessions.of(id).readEvents({ owner, after: 0, limit: 10 })).toMatchObject({ events: [], lastEventId: 0 });
  });

  it('when another account reads or runs, then not_found, as for a session that does not exist', async () => {
    const { id } = await newSession();
    const stranger = { accountId: 'acct_stranger', apiKeyId: 'key_s' };
    await expect(sessions.of(id).readEvents({ owner: stranger, after: 0, limit: 10 })).rejects.toMatchObject({ code: 'not_found' });
    await expect(sessions.of(id).startRun(start(stranger))).rejects.toMatchObject({ code: 'not_found' });
    await expect(sessions.of(randomUUID()).readEvents({ owner: stranger, after: 0, limit: 10 })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('when the run stops reporting, then its lease reminder fails it and releases its hold; reports push the lease out', async () => {
    const { owner, id } = await newSession();
    const run = await sessions.of(id).startRun(start(owner, { leaseMs: 1000 }));
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 400));
      await sessions.of(id).append({ runId: run.runId, delta: `d${i}` });
    }
    expect((await funds.of(owner.accountId).getBalance()).held).toBe(100_000);
    const failed = await passes(async () => {
      const { events } = await sessions.of(id).readEvents({ owner, after: 0, limit: 100 });
      expect(events.at(-1)).toMatchObject({ kind: 'run.failed', data: { code: 'run_lease_expired', charged: 0 } });
      return events;
    }, 10_000);
    expect(failed.map((e) => e.kind)).toEqual(['run.started', 'run.delta', 'run.delta', 'run.delta', 'run.delta', 'run.failed']);
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ balance: 10_000_000, held: 0 });
    await expect(sessions.of(id).finishRun({ runId: run.runId, usage: { inputTokens: 1, outputTokens: 1, lines: lines(1, 1) } })).resolves.toMatchObject({ status: 'failed', charged: 0 });
  });

  /** The session's whole log once its run has been failed by its lease. */
  const endedByLease = (owner: SessionOwner, id: string) => passes(async () => {
    const { events } = await sessions.of(id).readEvents({ owner, after: 0, limit: 100 });
    expect(events.at(-1)).toMatchObject({ kind: 'run.failed', data: { code: 'run_lease_expired' } });
    return events;
  }, 10_000);

  it('when a run that recorded progress stops reporting, then the lease ends it with run.usage (the record\'s counts, its charge) just before run.failed', async () => {
    const { owner, id } = await newSession();
    const run = await sessions.of(id).startRun(start(owner, { leaseMs: 1000 }));
    await sessions.of(id).append({ runId: run.runId, delta: 'tok0 tok1' });
    // What the carrier records on the hold as it appends (services/gateway/chat/hold-progress.ts).
    await funds.of(owner.accountId).progress({ holdId: run.holdId, lines: lines(10, 20), ttlMs: 600_000 });
    await sessions.of(id).append({ runId: run.runId, delta: ' tok2' });
    const failed = await endedByLease(owner, id);
    expect(failed.map((e) => e.kind)).toEqual(['run.started', 'run.delta', 'run.delta', 'run.usage', 'run.failed']);
    expect(failed.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    const charged = 10 * 100 + 20 * 400;
    expect(failed[3].data).toEqual({ run_id: run.runId, input_tokens: 10, output_tokens: 20, charged });
    expect(failed[4].data).toMatchObject({ run_id: run.runId, charged });
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ balance: 10_000_000 - charged, held: 0 });
    await expect(sessions.of(id).finishRun({ runId: run.runId })).resolves.toMatchObject({ status: 'failed', charged, lastEventId: 5 });
    // A reader resuming after the deltas gets the run's end, usage first, once.
    expect((await sessions.of(id).readEvents({ owner, after: 3, limit: 100 })).events.map((e) => [e.id, e.kind])).toEqual([[4, 'run.usage'], [5, 'run.failed']]);
  });

  it('when the hold of a run with progress expired before its lease, then the lease still reports that charge\'s usage before run.failed', async () => {
    const { owner, id } = await newSession();
    const run = await sessions.of(id).startRun(start(owner, { leaseMs: 2500, hold: { amount: 100_000, ttlMs: 1000 } }));
    await funds.of(owner.accountId).progress({ holdId: run.holdId, lines: lines(3, 2), ttlMs: 1000 });
    await sessions.of(id).append({ runId: run.runId, delta: 'tok0 tok1' });
    const failed = await endedByLease(owner, id);
    expect(failed.map((e) => e.kind)).toEqual(['run.started', 'run.delta', 'run.usage', 'run.failed']);
    expect(failed[2].data).toEqual({ run_id: run.runId, input_tokens: 3, output_tokens: 2, charged: 1100 });
    expect(failed[3].data).toMatchObject({ charged: 1100 });
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ balance: 10_000_000 - 1100, held: 0 });
  });

  it('when a run that produced nothing stops reporting, then the lease ends it with run.failed alone, nothing charged', async () => {
    const { owner, id } = await newSession();
    const run = await sessions.of(id).startRun(start(owner, { leaseMs: 1000 }));
    const failed = await passes(async () => {
      const { events } = await sessions.of(id).readEvents({ owner, after: 0, limit: 100 });
      expect(events.at(-1)).toMatchObject({ kind: 'run.failed', data: { code: 'run_lease_expired', charged: 0 } });
      return events;
    }, 10_000);
    expect(failed.map((e) => e.kind)).toEqual(['run.started', 'run.failed']);
    expect(failed[1].data).toMatchObject({ run_id: run.runId });
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ balance: 10_000_000, held: 0 });
  });

  it('when the hold of a run was settled but the session never recorded its end, then the lease ends the run with that charge, once', async () => {
    const { owner, id } = await newSession();
    const run = await sessions.of(id).startRun(start(owner, { leaseMs: 1000 }));
    // What a finishRun whose settle committed, and whose own turn did not, leaves behind.
    await funds.of(owner.accountId).settle({ holdId: run.holdId, lines: lines(3, 2) });
    const failed = await passes(async () => {
      const { events } = await sessions.of(id).readEvents({ owner, after: 0, limit: 100 });
      expect(events.at(-1)).toMatchObject({ kind: 'run.failed', data: { code: 'run_lease_expired', charged: 1100 } });
      return events;
    }, 10_000);
    expect(failed.map((e) => e.kind)).toEqual(['run.started', 'run.failed']);
    expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ balance: 10_000_000 - 1100, held: 0 });
    await sessions.of(id).startRun(start(owner));
  });

  it('when the log passes its bound, then the oldest pages are evicted and a reader behind them is told of the gap', async () => {
    const { owner, id } = await newSession();
    const run = await sessions.of(id).startRun(start(owner));
    for (let i = 0; i < MAX_EVENTS + PAGE_SIZE; i++) await sessions.of(id).append({ runId: run.runId, delta: `d${i}` });
    const behind = await sessions.of(id).readEvents({ owner, after: 0, limit: 200 });
    expect(behind.gap).toBe(true);
    expect(behind.lastEventId).toBe(MAX_EVENTS + PAGE_SIZE + 1);
    expect(behind.lastEventId - behind.firstRetainedId + 1).toBeLessThanOrEqual(MAX_EVENTS);
    expect(behind.events[0].id).toBe(behind.firstRetainedId);
    const current = await sessions.of(id).readEvents({ owner, after: behind.lastEventId - 3, limit: 200 });
    expect([current.gap, current.events.map((e) => e.id)]).toEqual([false, [behind.lastEventId - 2, behind.lastEventId - 1, behind.lastEventId]]);
    await expect(sessions.of(id).readEvents({ owner, after: behind.lastEventId + 1, limit: 10 })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('when sessions are created in two workspaces, then the account index lists both, newest session first', async () => {
    const owner = { accountId: `acct_${randomUUID().slice(0, 8)}`, apiKeyId: 'key_a' };
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await sessions.of(ids[0]).create({ owner, workspace: 'b' });
    await sessions.of(ids[1]).create({ owner, workspace: 'a' });
    await sessions.of(ids[2]).create({ owner, workspace: 'b' });
    await sessions.of(ids[2]).create({ owner, workspace: 'b' });
    const { workspaces } = await new WorkspaceIndexClient(host.invoker).of(owner.accountId).list({});
    expect(workspaces.map((w) => [w.name, w.sessions.map((s) => s.sessionId)])).toEqual([['a', [ids[1]]], ['b', [ids[2], ids[0]]]]);
  });

  it('when a workspace is named like a member of every object ("constructor"), then it is listed like any other', async () => {
    const owner = { accountId: `acct_${randomUUID().slice(0, 8)}`, apiKeyId: 'key_a' };
    const id = randomUUID();
    await sessions.of(id).create({ owner, workspace: 'constructor' });
    const { workspaces } = await new WorkspaceIndexClient(host.invoker).of(owner.accountId).list({});
    expect(workspaces.map((w) => [w.name, w.sessions.map((s) => s.sessionId)])).toEqual([['constructor', [id]]]);
  });
});
