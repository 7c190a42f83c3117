// The ledger app's error answers over HTTP: native bodies without a request id, the status of
// each code, and Express's own refusals answered as internal errors (as before one responder).

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../../lib/errors';
import { createLedgerApp } from './app';
import type { LedgerStore } from './entries';

describe('ledger app error answers', () => {
  let server: Server;
  let base: string;
  const failing = new Error('store down');
  const store = { account: () => Promise.reject(failing), has: () => Promise.reject(new GatewayError('actor_unavailable', 'busy')) } as unknown as LedgerStore;

  beforeAll(async () => {
    server = createLedgerApp(store).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const call = async (method: string, path: string, body?: string) => {
    const response = await fetch(`${base}${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body });
    return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
  };

  it('refusals, an unknown list, a GatewayError and an unexpected failure keep their status and body', async () => {
    const json = 'application/json; charset=utf-8';
    expect(await call('POST', '/events/stored', '{"ids":"x"}')).toEqual({ status: 400, type: json, body: { error: { code: 'invalid_request', message: 'ids: Invalid input: expected array, received string' } } });
    expect(await call('GET', '/accounts/a/pools/p/nothing/page')).toEqual({ status: 404, type: json, body: { error: { code: 'not_found', message: 'no console list nothing' } } });
    expect(await call('GET', '/events/e1')).toEqual({ status: 503, type: json, body: { error: { code: 'actor_unavailable', message: 'busy' } } });
    expect(await call('GET', '/accounts/a/pools/p')).toEqual({ status: 500, type: json, body: { error: { code: 'internal_error', message: 'internal error' } } });
    // A body that is not JSON is Express's own refusal, which the ledger answers as an internal error.
    expect(await call('POST', '/events/stored', '{')).toEqual({ status: 500, type: json, body: { error: { code: 'internal_error', message: 'internal error' } } });
  });
});
