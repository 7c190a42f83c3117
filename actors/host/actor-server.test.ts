import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { REMIND_METHOD } from '../runtime/dapr-host';
import { MAX_ACTOR_BODY_BYTES, startActorServer, type ActorRuntimePort } from './actor-server';

/** A runtime that records what daprd's calls reach it with. */
function recordingRuntime() {
  const calls: { type: string; id: string; method: string; body: string }[] = [];
  const deactivated: string[] = [];
  const runtime: ActorRuntimePort = {
    invoke: async (type, id, method, body) => {
      if (method === 'boom') throw new Error('no such method');
      calls.push({ type, id, method, body: body.toString('utf8') });
      return { ok: true, result: { echoed: body.toString('utf8') } };
    },
    deactivate: async (type, id) => void deactivated.push(`${type}/${id}`),
    getRegisteredActorTypes: () => ['FundsHold', 'Order'],
    getActorRuntimeOptions: () => ({ actorIdleTimeout: '1h' }),
  };
  return { runtime, calls, deactivated };
}

describe('the actors app server (daprd calls it)', () => {
  let server: Server;
  let base: string;
  const rec = recordingRuntime();
  beforeAll(async () => {
    server = await startActorServer(rec.runtime, '127.0.0.1', 0);
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('when daprd asks for the actor config, then every registered type is named with the runtime options', async () => {
    const response = await fetch(`${base}/dapr/config`);
    expect(await response.json()).toEqual({ entities: ['FundsHold', 'Order'], actorIdleTimeout: '1h' });
  });

  it('when an actor method is called, then the runtime gets the id decoded and the body as sent, and its result is the JSON answer', async () => {
    const response = await fetch(`${base}/actors/FundsHold/${encodeURIComponent('acct_1:pool-3')}/method/reserve`, { method: 'PUT', body: '{"holdId":"h1"}', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, result: { echoed: '{"holdId":"h1"}' } });
    expect(rec.calls.at(-1)).toEqual({ type: 'FundsHold', id: 'acct_1:pool-3', method: 'reserve', body: '{"holdId":"h1"}' });
  });

  it('when a reminder fires, then the adapter method gets its name and decoded data', async () => {
    const data = Buffer.from(JSON.stringify({ name: 'expiry', data: { at: 5 } })).toString('base64');
    const response = await fetch(`${base}/actors/FundsHold/a1/method/remind/expiry`, { method: 'PUT', body: JSON.stringify({ data, dueTime: '1s' }) });
    expect(response.status).toBe(200);
    expect(rec.calls.at(-1)).toMatchObject({ type: 'FundsHold', id: 'a1', method: REMIND_METHOD });
    expect(JSON.parse(rec.calls.at(-1)!.body)).toEqual({ name: 'expiry', data: { name: 'expiry', data: { at: 5 } } });
  });

  it('when daprd deactivates an actor, then the runtime is told', async () => {
    const response = await fetch(`${base}/actors/Order/o1`, { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect(rec.deactivated).toEqual(['Order/o1']);
  });

  it('when the runtime fails, an unknown route is called or the body is too large, then the answer says so and the server goes on', async () => {
    expect((await fetch(`${base}/actors/FundsHold/a1/method/boom`, { method: 'PUT', body: '{}' })).status).toBe(500);
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
    expect((await fetch(`${base}/actors/FundsHold/a1/method/reserve`)).status).toBe(405);
    const big = await fetch(`${base}/actors/FundsHold/a1/method/reserve`, { method: 'PUT', body: 'x'.repeat(MAX_ACTOR_BODY_BYTES + 1) }).catch(() => undefined);
    if (big) expect(big.status).toBe(413);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
