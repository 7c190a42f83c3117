// The image's health check asks the app its container runs, on the port that app listens on.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appOf, healthUrl, healthy } from './healthcheck';

describe('container health check', () => {
  it.each([
    [['node', 'dist/services/gateway/main.js'], 'gateway'],
    [['/sbin/docker-init', '--', 'node', 'dist/actors/host/dapr-main.js'], 'actors'],
    [['node', '/app/dist/services/ledger/main.js'], 'ledger'],
    [['node'], 'gateway'],
  ])('when PID 1 runs %j, then the app is %s', (args, app) => {
    expect(appOf(args)).toBe(app);
  });

  it('when the env sets the ports, then each app is asked on its own port and address', () => {
    expect(healthUrl('gateway', { PORT: '9000', HOST: '0.0.0.0', APP_PORT: '3999' })).toBe('http://127.0.0.1:9000/healthz');
    expect(healthUrl('gateway', { HOST: '10.1.2.3' })).toBe('http://10.1.2.3:8080/healthz');
    expect(healthUrl('actors', { PORT: '9000' })).toBe('http://127.0.0.1:3101/healthz');
    expect(healthUrl('ledger', { APP_PORT: '4102' })).toBe('http://127.0.0.1:4102/healthz');
  });

  describe('against a real server', () => {
    let server: Server;
    let status = 200;
    let port: number;
    beforeAll(async () => {
      server = createServer((req, res) => res.writeHead(req.url === '/healthz' ? status : 404).end());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    it('when /healthz answers 200, then healthy; 503, then not; nothing listening, then not', async () => {
      const url = healthUrl('ledger', { APP_PORT: String(port) });
      status = 200;
      expect(await healthy(url)).toBe(true);
      status = 503;
      expect(await healthy(url)).toBe(false);
      await new Promise((resolve) => server.close(resolve));
      expect(await healthy(url)).toBe(false);
      server.listen(port, '127.0.0.1');
    });
  });
});
