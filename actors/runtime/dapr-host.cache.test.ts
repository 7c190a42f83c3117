// The Dapr host adapter keeps in memory only the state its actor reads, kept current by its
// writes: a value only written (each ended hold's record) is not kept for the activation's life.
// The adapter talks to a stand-in for its daprd sidecar over real HTTP: the actor state API
// (read a key, one transaction per turn) on a Map, reminders accepted.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ActorId, DaprClient } from '@dapr/dapr';
import { FundsHold } from '../funds-hold/FundsHold';
import { DaprSidecar } from '../../lib/dapr-http';
import { daprActorClass } from './dapr-host';
import type { ActorCallResult } from './port';

const STATE = /^\/v1\.0\/actors\/([^/]+)\/([^/]+)\/state(?:\/([^/]+))?$/;

async function startSidecar(): Promise<{ server: Server; port: number; store: Map<string, unknown> }> {
  const store = new Map<string, unknown>();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const match = STATE.exec(req.url ?? '');
      if (match && req.method === 'GET' && match[3]) {
        const key = `${match[1]}/${decodeURIComponent(match[2])}/${decodeURIComponent(match[3])}`;
        if (!store.has(key)) return res.writeHead(204).end();
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(store.get(key)));
      }
      if (match && req.method === 'POST' && !match[3]) {
        for (const { operation, request } of JSON.parse(raw) as { operation: string; request: { key: string; value?: unknown } }[]) {
          const key = `${match[1]}/${decodeURIComponent(match[2])}/${request.key}`;
          if (operation === 'upsert') store.set(key, request.value);
          else store.delete(key);
        }
        return res.writeHead(204).end();
      }
      // The SDK's client waits for the sidecar's metadata before its first call (a reminder).
      if (req.url === '/v1.0/metadata') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"actors"}');
      res.writeHead(204).end(); // reminders
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, store };
}

describe('the Dapr host adapter, memory', () => {
  it('when hundreds of holds are reserved and settled on one account, then the activation caches what it reads, not each ended hold', async () => {
    const { server, port, store } = await startSidecar();
    const sidecar = new DaprSidecar('127.0.0.1', port);
    try {
      const Adapter = daprActorClass(FundsHold, async () => undefined, sidecar);
      const actor = new Adapter(new DaprClient({ daprHost: '127.0.0.1', daprPort: String(port) }), new ActorId('acct_mem:pool-3')) as unknown as
        Record<string, (arg: unknown) => Promise<ActorCallResult<Record<string, unknown>>>> & { cachedValues: number };
      const call = async (method: string, arg: unknown) => {
        const outcome = await actor[method](arg);
        if (!outcome.ok) throw Object.assign(new Error(outcome.error.message), outcome.error);
        return outcome.result;
      };
      await call('credit', { amount: 1_000_000, reference: 'seed' });
      for (let i = 0; i < 500; i++) {
        await call('reserve', { holdId: `h${i}`, amount: 1000, ttlMs: 3_600_000, requestId: `h${i}`, model: 'm', profileId: 'p' });
        await call('settle', { holdId: `h${i}`, lines: [{ unit: 'TEXT_OUTPUT', quantity: 1, unitPrice: 5 }] });
      }
      // The funds record and the outbox (read on every turn), and at most the last hold's key.
      expect(actor.cachedValues).toBeLessThanOrEqual(3);
      expect(store.get('FundsHold/acct_mem:pool-3/closed:h7')).toMatchObject({ state: 'settled' });
      // An ended hold is still known, from the state store: a repeat answers the same, a reuse conflicts.
      expect(await call('settle', { holdId: 'h7', lines: [] })).toMatchObject({ state: 'settled', charged: 5 });
      await expect(call('reserve', { holdId: 'h7', amount: 1000, ttlMs: 60_000, requestId: 'x', model: 'm', profileId: 'p' })).rejects.toMatchObject({ code: 'hold_state_conflict' });
      expect(await call('getBalance', {})).toMatchObject({ balance: 1_000_000 - 500 * 5, held: 0 });
    } finally {
      await sidecar.close();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 120_000);
});
