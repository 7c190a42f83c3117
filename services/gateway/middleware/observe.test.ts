import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLogger } from '../../../lib/logger';
import { registry } from '../../../lib/metrics';
import { parseTraceparent } from '../../../lib/request-context';
import { jsonBody } from './json-body';
import { observeRequests } from './observe';
import { requestId } from './request-id';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const lines: Record<string, unknown>[] = [];
const raw: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  const logger = createLogger('gateway', 'info', { write: (chunk: string) => { raw.push(chunk); lines.push(JSON.parse(chunk)); } });
  const app = express();
  app.use(requestId());
  app.use(observeRequests(logger));
  app.get('/api/distribution/api-credit/balance', async (_req, res) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    logger.info('inside the handler');
    res.status(201).json({ ok: true });
  });
  // The body arrives by stream events, outside the request's context: the handler after it must still be inside.
  app.post('/api/open/v1/models/:id/chat', jsonBody(1024), async (_req, res) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    logger.info('after the body');
    res.json({ ok: true });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

async function counted(family: string, status: string): Promise<number> {
  const { values } = await registry.getSingleMetric('payg_http_requests_total')!.get();
  return values.find((v) => v.labels.family === family && v.labels.method === 'GET' && v.labels.status === status)?.value ?? 0;
}

describe('observeRequests', () => {
  it('when a request carries a traceparent, then its trace continues, is answered, and is on every line of the request', async () => {
    lines.length = 0;
    const before = await counted('console', '201');
    const response = await fetch(`${base}/api/distribution/api-credit/balance?token=sk-payg-query-secret`, {
      headers: { traceparent: `00-${TRACE}-b7ad6b7169203331-01`, authorization: 'Bearer sk-payg-header-secret', 'x-request-id': 'req-observe-1' },
    });
    expect(response.status).toBe(201);
    const answered = parseTraceparent(response.headers.get('traceparent'));
    expect(answered).toEqual({ traceId: TRACE, parentId: expect.stringMatching(/^[0-9a-f]{16}$/), flags: '01' });
    expect(answered?.parentId).not.toBe('b7ad6b7169203331');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'inside the handler', requestId: 'req-observe-1', traceId: TRACE }),
      { level: 30, time: expect.any(Number), service: 'gateway', msg: 'request completed', requestId: 'req-observe-1', traceId: TRACE, method: 'GET', family: 'console', route: '/api/distribution/api-credit/balance', status: 201, durationMs: expect.any(Number) },
    ]);
    expect(raw.join('')).not.toMatch(/secret|authorization/i);
    expect(await counted('console', '201')).toBe(before + 1);
  });

  it('when a request carries no traceparent, then a new trace is started and answered', async () => {
    lines.length = 0;
    const response = await fetch(`${base}/nowhere`);
    expect(response.status).toBe(404);
    const answered = parseTraceparent(response.headers.get('traceparent'));
    expect(answered?.traceId).toMatch(/^[0-9a-f]{32}$/);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toEqual([expect.objectContaining({ msg: 'request completed', family: 'other', status: 404, traceId: answered?.traceId })]);
  });

  it('when a caller sends an unsampled traceparent, then its trace continues and the answer says sampled', async () => {
    const response = await fetch(`${base}/api/distribution/api-credit/balance`, { headers: { traceparent: `00-${TRACE}-b7ad6b7169203331-00` } });
    expect(response.headers.get('traceparent')).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
  });

  it.each([
    ['a path no route has', 'GET', '/api/distribution/api-credit/nowhere/path-zq7'],
    ['a method the route does not take', 'DELETE', '/api/distribution/api-credit/balance'],
    ['a method no route takes', 'PROPFIND', '/api/distribution/api-credit/balance'],
  ])('when %s is asked for, then the access line has the fixed route (none), never the path', async (_what, method, path) => {
    lines.length = 0;
    const response = await fetch(`${base}${path}`, { method });
    expect(response.status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toEqual([expect.objectContaining({ msg: 'request completed', method, route: '(none)', status: 404 })]);
    // A marker no id can hold (ids are hex or UUIDs): the path itself is never logged.
    expect(raw.join('')).not.toContain('path-zq7');
  });

  it('when a JSON body is read before the handler, then the handler still logs inside the request', async () => {
    lines.length = 0;
    const response = await fetch(`${base}/api/open/v1/models/m/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${TRACE}-b7ad6b7169203331-01` },
      body: JSON.stringify({ messages: [] }),
    });
    expect(response.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines[0]).toMatchObject({ msg: 'after the body', traceId: TRACE, requestId: expect.any(String) });
    expect(lines[1]).toMatchObject({ msg: 'request completed', family: 'open', method: 'POST', status: 200, traceId: TRACE });
  });
});
