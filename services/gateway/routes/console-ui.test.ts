import express from 'express';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { errorResponder } from '../../../lib/error-responder';
import pino from 'pino';
import { CONSOLE_CSP, consoleUiRoutes } from './console-ui';

describe('the web console routes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-ui-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/console/assets/main-ABCDEFGH.js"></script>');
  writeFileSync(join(dir, 'assets', 'main-ABCDEFGH.js'), 'console.log(1)');
  writeFileSync(join(dir, 'assets', 'main-ABCDEFGH.js.gz'), gzipSync('console.log(1)'));
  let base = '';
  let server: ReturnType<express.Express['listen']>;
  beforeAll(async () => {
    const app = express();
    app.use(consoleUiRoutes(dir));
    app.use(errorResponder({ logger: pino({ level: 'silent' }) }));
    server = app.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it('when /console is requested without a credential, then the page is answered with a strict CSP and no-cache', async () => {
    const res = await fetch(`${base}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toContain('main-ABCDEFGH.js');
  });

  it('when a hashed asset is requested, then it is immutable for a year, compressed when the client accepts it', async () => {
    const plain = await fetch(`${base}/console/assets/main-ABCDEFGH.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe('console.log(1)');
    // fetch (undici) asks for gzip and decodes it.
    const gzip = await fetch(`${base}/console/assets/main-ABCDEFGH.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    expect(gzip.headers.get('vary')).toBe('accept-encoding');
    expect(await gzip.text()).toBe('console.log(1)');
  });

  it('when an asset that is not a built one is asked for, then 404, never a file outside the assets', async () => {
    for (const path of ['main-ABCDEFGH.map', 'main-ZZZZZZZZ.js', '..%2Findex.html', '.env', 'main.js']) {
      const res = await fetch(`${base}/console/assets/${path}`);
      expect([path, res.status]).toEqual([path, 404]);
    }
  });
});
