// A run's start that fails after its hold was reserved: the turn fails, so the run does not exist,
// and its hold must not stay open (locking the funds and counting against the spend limits until
// it expired) — the gateway's next attempt is a new run with a new hold, never this one again.

import { GatewayError } from '../../lib/errors';
import type { ActorContext, ActorState } from '../runtime/port';
import { Session } from './Session';
import type { StartRunRequest } from './SessionInterface';

const owner = { accountId: 'acct_1', apiKeyId: 'key_a' };

/** A Session on a context whose FundsHold answers `reserve` as told and records every call. */
function sessionWith(options: { reserve?: () => unknown; register?: () => Promise<void> }) {
  const values = new Map<string, unknown>();
  const state: ActorState = {
    get: async <T>(key: string) => structuredClone(values.get(key)) as T | undefined,
    getUncached: async <T>(key: string) => structuredClone(values.get(key)) as T | undefined,
    set: (key, value) => void values.set(key, structuredClone(value)),
    remove: (key) => void values.delete(key),
  };
  const calls: { method: string; arg: unknown }[] = [];
  const ctx: ActorContext = {
    actorType: Session.actorType,
    actorId: 's1',
    state,
    reminders: { register: options.register ?? (async () => undefined), unregister: async () => undefined },
    emit: () => undefined,
    adjustGauge: () => undefined,
    actors: {
      invoke: async <R>(type: string, _id: string, method: string, arg: unknown) => {
        calls.push({ method: `${type}.${method}`, arg });
        if (method === 'reserve' && options.reserve) return options.reserve() as R;
        return { holdId: (arg as { holdId?: string }).holdId, state: method === 'reserve' ? 'open' : 'released', amount: '100000', charged: 0 } as R;
      },
    },
    now: () => 1_700_000_000_000,
  };
  return { session: new Session(ctx), calls: () => calls.filter((c) => c.method.startsWith('FundsHold.')).map((c) => [c.method, (c.arg as { holdId: string }).holdId]) };
}

const start = (runId: string): StartRunRequest => ({
  owner, runId, requestId: 'req', model: 'sim-chat', profileId: 'p', maxTokens: 16, capabilities: [], hold: { amount: 100_000, ttlMs: 600_000 }, leaseMs: 60_000,
});

describe('Session.startRun when it fails after the reservation', () => {
  it('when the lease reminder cannot be registered, then the start fails and the hold it reserved is released', async () => {
    const { session, calls } = sessionWith({ register: async () => { throw new GatewayError('actor_unavailable', 'the scheduler is unreachable'); } });
    await session.create({ owner, workspace: 'default' });
    await expect(session.startRun(start('r1'))).rejects.toMatchObject({ code: 'actor_unavailable' });
    expect(calls()).toEqual([['FundsHold.reserve', 'run:r1'], ['FundsHold.release', 'run:r1']]);
  });

  it('when the reservation\'s answer is lost (not a refusal), then the hold it may have left is released', async () => {
    const { session, calls } = sessionWith({ reserve: () => { throw new Error('socket hang up'); } });
    await session.create({ owner, workspace: 'default' });
    await expect(session.startRun(start('r2'))).rejects.toThrow('socket hang up');
    expect(calls()).toEqual([['FundsHold.reserve', 'run:r2'], ['FundsHold.release', 'run:r2']]);
  });

  it('when the reservation is refused (402), then nothing was held and nothing is released', async () => {
    const { session, calls } = sessionWith({ reserve: () => { throw new GatewayError('insufficient_funds', 'no'); } });
    await session.create({ owner, workspace: 'default' });
    await expect(session.startRun(start('r3'))).rejects.toMatchObject({ code: 'insufficient_funds' });
    expect(calls()).toEqual([['FundsHold.reserve', 'run:r3']]);
  });
});
