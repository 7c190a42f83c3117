import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DaprSidecar } from './dapr-http';
import { GatewayError } from './errors';

/** A sidecar that takes calls and never answers them, as daprd does while placement is gone. */
function silentSidecar(): Promise<Server> {
  const server = createServer(() => undefined);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('DaprSidecar.request with a timeout', () => {
  let server: Server;
  let sidecar: DaprSidecar;
  beforeAll(async () => {
    server = await silentSidecar();
    sidecar = new DaprSidecar('127.0.0.1', (server.address() as AddressInfo).port);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await sidecar.close();
    await new Promise((r) => server.close(r));
  });

  it('when the sidecar does not answer in time, then the call fails with actor_unavailable at its deadline', async () => {
    const started = Date.now();
    const error = await sidecar.request('PUT', '/v1.0/actors/FundsHold/a/method/reserve', {}, {}, { timeoutMs: 300 }).catch((e: unknown) => e);
    const waited = Date.now() - started;
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('actor_unavailable');
    expect((error as GatewayError).message).toMatch(/no answer from the Dapr sidecar within 300 ms/);
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(2_000);
  });
});
