// The ImageTask contract: the same cases against every actor host (embedded and Dapr). Each
// path of the UNKNOWN_IMAGE_V1 table is driven through the actor, with the real FundsHold and
// the real ledger behind it: the balance and the ledger must agree after every path.

import { randomUUID } from 'node:crypto';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import { ImageTaskClient } from '../../actors/image-task/client';
import type { Owner, StartRequest } from '../../actors/image-task/ImageTaskInterface';
import type { ActorInvoker } from '../../actors/runtime/port';
import type { AccountLedgerView } from '../../services/ledger/entries';
import { passes } from '../support/eventually';

export interface ImageHostUnderTest {
  invoker: ActorInvoker;
  /** Restarts the host (process, or the actors app and its sidecar); returns the invoker to use after. */
  restart(): Promise<ActorInvoker>;
  ledger(accountId: string): Promise<AccountLedgerView>;
  ledgerHas(eventId: string): Promise<boolean>;
  close(): Promise<void>;
}

const PRICE = 40_000_000;
const artifact = { b64Json: 'aW1hZ2U=', created: 1_700_000_000 };

export function imageTaskContract(hostName: string, start: () => Promise<ImageHostUnderTest>, options: { deadlineMs: number }): void {
  describe(`ImageTask contract on the ${hostName} host`, () => {
    let host: ImageHostUnderTest;
    let tasks: ImageTaskClient;
    let funds: FundsHoldClient;

    beforeAll(async () => {
      host = await start();
      tasks = new ImageTaskClient(host.invoker);
      funds = new FundsHoldClient(host.invoker);
    });
    afterAll(async () => {
      await host?.close();
    });

    async function fundedOwner(amount = 100_000_000): Promise<Owner> {
      const owner = { accountId: `acct_${randomUUID().slice(0, 8)}`, apiKeyId: `key_${randomUUID().slice(0, 8)}` };
      await funds.of(owner.accountId).credit({ amount, reference: 'seed' });
      return owner;
    }

    function startRequest(owner: Owner, overrides: Partial<StartRequest> = {}): StartRequest {
      return {
        owner,
        fingerprint: 'f1',
        requestId: 'req',
        startId: 'start-1',
        model: 'sim-image',
        profileId: 'p-image',
        price: PRICE,
        deadlineMs: 86_400_000,
        holdTtlMs: 90_000_000,
        call: { provider: 'sim', upstreamModel: 'sim-image-1', prompt: 'a red square', responseFormat: 'b64_json', passthrough: {} },
        ...overrides,
      };
    }

    /**
     * The actor's balance and the ledger's agree; `rows`: the ledger also holds this many usage
     * events and bills (waited for: events reach the ledger a moment after their turn, each topic
     * on its own, and a release or a usage row moves no balance).
     */
    async function agree(owner: Owner, balance: number, rows: { usage?: number; bills?: number } = {}): Promise<AccountLedgerView> {
      expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ balance, held: 0 });
      return passes(async () => {
        const view = await host.ledger(owner.accountId);
        expect(view.balance).toBe(balance);
        if (rows.usage !== undefined) expect(view.usage).toBe(rows.usage);
        if (rows.bills !== undefined) expect(view.bills).toBe(rows.bills);
        return view;
      });
    }

    it('when started, then the hold is reserved and the deadline frozen; the same fingerprint returns the same task; another conflicts and holds nothing', async () => {
      const owner = await fundedOwner();
      const task = tasks.of(randomUUID());
      const before = Date.now();
      const first = await task.start(startRequest(owner));
      expect(first.role).toBe('owner');
      expect(first.task).toMatchObject({ status: 'unresolved', phase: 'running', charged: 0 });
      expect(first.task.deadlineAt - first.task.reservedAt).toBe(86_400_000);
      expect(first.task.reservedAt).toBeGreaterThanOrEqual(before - 1000);
      expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ held: PRICE, openHolds: 1 });
      const again = await task.start(startRequest(owner, { requestId: 'retry', startId: 'start-2' }));
      expect(again.role).toBe('existing');
      // A client's retry with the same X-Request-Id is another start: a retry too, never a second owner.
      expect((await task.start(startRequest(owner, { startId: 'start-3' }))).role).toBe('existing');
      expect(again.task.reservedAt).toBe(first.task.reservedAt);
      // The same request's start repeated (a sidecar retry after a lost answer): still its owner, one hold.
      const repeated = await task.start(startRequest(owner));
      expect(repeated.role).toBe('owner');
      expect(repeated.task.reservedAt).toBe(first.task.reservedAt);
      await expect(task.start(startRequest(owner, { fingerprint: 'f2' }))).rejects.toMatchObject({ code: 'idempotency_key_reused' });
      expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ held: PRICE, openHolds: 1 });
    });

    it('when the balance does not cover the image, then 402 and no task exists', async () => {
      const owner = await fundedOwner(PRICE - 1);
      const task = tasks.of(randomUUID());
      await expect(task.start(startRequest(owner))).rejects.toMatchObject({ code: 'insufficient_funds' });
      await expect(task.view(owner)).rejects.toMatchObject({ code: 'not_found' });
      expect(await funds.of(owner.accountId).getBalance()).toMatchObject({ held: 0, openHolds: 0 });
    });

    it('when an artifact is recorded and finished, then it settles one IMAGE, later outcomes change nothing, and balance and ledger agree', async () => {
      const owner = await fundedOwner();
      const task = tasks.of(randomUUID());
      await task.start(startRequest(owner));
      const recorded = await task.record({ kind: 'succeeded', artifact, via: 'response' });
      expect(recorded).toMatchObject({ status: 'unresolved', phase: 'settling' });
      expect(recorded.artifact).toBeUndefined();
      const done = await task.finish({});
      expect(done).toMatchObject({ status: 'succeeded', charged: PRICE, artifact });
      expect(await task.record({ kind: 'failed', reason: 'late rejection', via: 'lookup' })).toMatchObject({ status: 'succeeded' });
      expect(await task.finish({})).toMatchObject({ status: 'succeeded', charged: PRICE });
      expect(await task.expire({})).toMatchObject({ status: 'succeeded' });
      const ledger = await agree(owner, 100_000_000 - PRICE, { usage: 1 });
      expect(ledger.bills).toBeGreaterThanOrEqual(2);
    });

    it('when a confirmed rejection is recorded and finished, then the hold is released and the task failed', async () => {
      const owner = await fundedOwner();
      const task = tasks.of(randomUUID());
      await task.start(startRequest(owner));
      await task.record({ kind: 'failed', reason: 'content policy', via: 'response' });
      expect(await task.finish({})).toMatchObject({ status: 'failed', failure: 'content policy', charged: 0 });
      expect(await task.record({ kind: 'succeeded', artifact, via: 'lookup' })).toMatchObject({ status: 'failed' });
      await agree(owner, 100_000_000);
      expect((await host.ledger(owner.accountId)).usage).toBe(0);
    });

    it('when unresolved past the deadline, then the reminder makes it UNKNOWN: hold released, evidence kept, no usage; a late artifact is released only after the ledger has its zero-charge event', async () => {
      const owner = await fundedOwner();
      const taskId = randomUUID();
      const task = tasks.of(taskId);
      await task.start(startRequest(owner, { deadlineMs: options.deadlineMs, holdTtlMs: 600_000 }));
      await task.record({ kind: 'unresolved', what: 'no answer within the provider timeout' });
      expect(await task.expire({})).toMatchObject({ phase: 'running' }); // not before the deadline
      const unknown = await passes(async () => {
        const view = await task.view(owner);
        expect(view.status).toBe('unknown');
        return view;
      }, options.deadlineMs + 15_000);
      expect(unknown.unknown).toMatchObject({ profile: 'UNKNOWN_IMAGE_V1', resolution: 'image_unknown_resolved', sent: { prompt: 'a red square' } });
      expect(unknown.unknown!.seen.map((s) => s.what)).toContain('no answer within the provider timeout');
      expect(unknown.unknown!.resolvedAt).toBeGreaterThanOrEqual(unknown.deadlineAt);
      expect(unknown.artifact).toBeUndefined();
      await agree(owner, 100_000_000);
      expect((await host.ledger(owner.accountId)).usage).toBe(0); // no zero usage invented

      const late = await task.record({ kind: 'succeeded', artifact, via: 'response' });
      expect(late).toMatchObject({ status: 'unknown', lateArtifact: { state: 'awaiting_ledger' } });
      expect(late.artifact).toBeUndefined();
      const eventIds = late.lateArtifact!.eventIds;
      await expect(task.releaseLate({ eventIds: [] })).rejects.toMatchObject({ code: 'invalid_request' });
      await passes(async () => {
        for (const id of eventIds) expect(await host.ledgerHas(id)).toBe(true);
      });
      const released = await task.releaseLate({ eventIds });
      expect(released).toMatchObject({ status: 'unknown', artifact, charged: 0, lateArtifact: { state: 'released' } });
      expect(released.unknown?.resolution).toBe('image_unknown_resolved');
      await agree(owner, 100_000_000, { usage: 1 }); // the real IMAGE quantity-1 event, charged 0
    });

    it('when asked by another owner or another key of the same owner, then the task is not found', async () => {
      const owner = await fundedOwner();
      const task = tasks.of(randomUUID());
      await task.start(startRequest(owner));
      await expect(task.view({ ...owner, apiKeyId: 'key_other' })).rejects.toMatchObject({ code: 'not_found' });
      await expect(task.view({ accountId: 'acct_other', apiKeyId: owner.apiKeyId })).rejects.toMatchObject({ code: 'not_found' });
      await expect(tasks.of(randomUUID()).view(owner)).rejects.toMatchObject({ code: 'not_found' });
    });

    it('when the host restarts before the deadline, then the reminder still fires once after it', async () => {
      const owner = await fundedOwner();
      const taskId = randomUUID();
      await tasks.of(taskId).start(startRequest(owner, { deadlineMs: options.deadlineMs + 3000, holdTtlMs: 600_000 }));
      const invoker = await host.restart();
      tasks = new ImageTaskClient(invoker);
      funds = new FundsHoldClient(invoker);
      const after = tasks.of(taskId);
      const view = await passes(async () => {
        const v = await after.view(owner);
        expect(v.status).toBe('unknown');
        return v;
      }, options.deadlineMs + 30_000);
      expect(view.unknown?.resolvedAt).toBeGreaterThanOrEqual(view.deadlineAt);
      await agree(owner, 100_000_000, { bills: 2 }); // the credit, and one release
      // And no second one.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await agree(owner, 100_000_000)).bills).toBe(2);
    });
  });
}
