// A stand-in for a daprd sidecar over real HTTP, for tests of the Dapr host adapter on its own:
// the actor state API (read a key, one transaction per turn) on a Map, reminders accepted and
// recorded, the metadata the SDK's client asks for before its first call.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const STATE = /^\/v1\.0\/actors\/([^/]+)\/([^/]+)\/state(?:\/([^/]+))?$/;
const REMINDER = /^\/v1\.0\/actors\/([^/]+)\/([^/]+)\/reminders\/([^/?]+)/;

export interface FakeSidecar {
  server: Server;
  port: number;
  /** State by `<type>/<id>/<key>`. */
  store: Map<string, unknown>;
  /** Reminder names registered (in order). */
  reminders: string[];
  /** The size of each state transaction's body, bytes (in order). */
  transactionBytes: number[];
  /** The key of each state read (`<type>/<id>/<key>`, in order). */
  reads: string[];
  close(): Promise<void>;
}

/** The events of a stored outbox batch (`key`: `<type>/<id>/__outbox:batch:<n>`): its JSON text read, or an array as stored before. */
export function storedBatchEvents(sidecar: FakeSidecar, key: string): { id: string }[] {
  const stored = sidecar.store.get(key);
  return (typeof stored === 'string' ? JSON.parse(stored) : (stored ?? [])) as { id: string }[];
}

/**
 * The ids an actor's stored outbox holds (`actor`: `<type>/<id>`): each batch's, in the order of
 * the list of batches, then those of the batches added since the list was written (numbered on
 * from the highest listed, up to the first missing number).
 */
export function storedOutbox(sidecar: FakeSidecar, actor: string): string[] {
  const batches = [...((sidecar.store.get(`${actor}/__outbox:batches`) as number[] | undefined) ?? [])];
  for (let n = Math.max(0, ...batches) + 1; sidecar.store.has(`${actor}/__outbox:batch:${n}`); n++) batches.push(n);
  return batches.flatMap((n) => storedBatchEvents(sidecar, `${actor}/__outbox:batch:${n}`).map((event) => event.id));
}

export async function startFakeSidecar(): Promise<FakeSidecar> {
  const store = new Map<string, unknown>();
  const reminders: string[] = [];
  const transactionBytes: number[] = [];
  const reads: string[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const match = STATE.exec(req.url ?? '');
      if (match && req.method === 'GET' && match[3]) {
        const key = `${match[1]}/${decodeURIComponent(match[2])}/${decodeURIComponent(match[3])}`;
        reads.push(key);
        if (!store.has(key)) return res.writeHead(204).end();
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(store.get(key)));
      }
      if (match && req.method === 'POST' && !match[3]) {
        transactionBytes.push(Buffer.byteLength(raw));
        for (const { operation, request } of JSON.parse(raw) as { operation: string; request: { key: string; value?: unknown } }[]) {
          const key = `${match[1]}/${decodeURIComponent(match[2])}/${request.key}`;
          if (operation === 'upsert') store.set(key, request.value);
          else store.delete(key);
        }
        return res.writeHead(204).end();
      }
      // The SDK's client waits for the sidecar's metadata before its first call (a reminder).
      if (req.url === '/v1.0/metadata') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"actors"}');
      const reminder = REMINDER.exec(req.url ?? '');
      if (reminder && req.method !== 'DELETE') reminders.push(decodeURIComponent(reminder[3]));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    store,
    reminders,
    transactionBytes,
    reads,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
