// Malformed input never gets a 5xx and never moves money: every open route is sent broken JSON,
// wrong types, absurd numbers, hostile path segments and headers, and must answer 4xx (or a
// well-formed success); nothing is left held, and the balance moved only by what was served.

import { createHmac, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { admin, balance, fundedAccount, hello, json as request } from '../support/api';
import { CHECKOUT_SECRET, createOrder } from '../support/orders';
import { ADMIN_TOKEN } from '../support/processes';
import { rawRequest } from '../support/raw-http';
import { newSession, workspaces } from '../support/sessions';
import { passes } from '../support/eventually';
import { itConformsToOpenApi, recordAnswers } from '../support/openapi-conformance';

export interface MalformedDeployment {
  url: string;
  ledgerBalance(accountId: string): Promise<number>;
  close(): Promise<void>;
}

interface Probe {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

const BODIES = [
  '',
  '{',
  'null',
  '[]',
  '"text"',
  '123',
  '{"messages":"hello"}',
  '{"messages":[{"role":1}]}',
  '{"messages":[{"role":"user","content":"hi"}],"max_tokens":1e400}',
  '{"messages":[{"role":"user","content":"hi"}],"max_tokens":-1}',
  '{"messages":[{"role":"user","content":"hi"}],"max_tokens":"5"}',
  '{"messages":[{"role":"user","content":"hi"}],"thinking":{"budget_tokens":{"$gt":0}}}',
  '{"messages":[{"role":"user","content":"hi"}],"stream":"yes"}',
  '{"prompt":{"text":"x"}}',
  '{"prompt":"x","n":1.5}',
  '{"prompt":"x","response_format":null}',
  '{"__proto__":{"admin":true},"prompt":"x"}',
  '{"constructor":{"prototype":{"x":1}},"messages":[]}',
  `{"prompt":"${'\\u0000'.repeat(100)}"}`,
  `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`,
  // Valid requests apart from a deeply nested extra field (passed through to the provider).
  `{"prompt":"x","extra":${'['.repeat(3000)}${']'.repeat(3000)}}`,
  `{"messages":[{"role":"user","content":"hi"}],"extra":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`,
  '{"amount":"100000000000000000000000","reference":"r"}',
  '{"amount":-5,"reference":"r"}',
  '{"model":7,"messages":[{"role":"user","content":"hi"}]}',
  '{"model":"sim-chat","max_tokens":8,"messages":[{"role":"user","content":7}]}',
  '{"model":"sim-chat","max_tokens":8,"system":{"a":1},"messages":[{"role":"user","content":"hi"}]}',
  '{"model":"sim-chat","max_tokens":8,"messages":[{"role":"user","content":[{"type":"image","source":null}]}]}',
  '{"model":"../admin","messages":[{"role":"user","content":"hi"}]}',
];

const HOSTILE_IDS = ['%00', '..%2F..%2Fadmin', 'x'.repeat(5000), '%E2%80%AE', "'%20OR%201=1", '%ZZ'];

export function malformedSuite(hostName: string, start: () => Promise<MalformedDeployment>): void {
  describe(`malformed input on the ${hostName} host`, () => {
    let d: MalformedDeployment;
    const openApi = recordAnswers(() => d?.url);
    beforeAll(async () => {
      d = await start();
    });
    afterAll(async () => {
      await d?.close();
    });

    it('when any open route gets malformed input, then no answer is a 5xx, nothing stays held, and the balance moves only by what was served', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, 100_000_000);
      const auth = { authorization: `Bearer ${apiKey}` };
      const json = { ...auth, 'content-type': 'application/json' };
      const compatKey = (await admin(d.url, `/admin/v1/accounts/${accountId}/api-keys`, { scopes: ['compat'] })).body.apiKey;
      const compat = { authorization: `Bearer ${compatKey}`, 'content-type': 'application/json' };
      const probes: Probe[] = [];
      for (const body of BODIES) {
        probes.push({ method: 'POST', path: '/api/open/v1/models/sim-chat/chat/anthropic', headers: json, body });
        probes.push({ method: 'POST', path: '/v1/chat/completions', headers: compat, body });
        probes.push({ method: 'POST', path: '/v1/messages', headers: { 'x-api-key': compatKey, 'content-type': 'application/json' }, body });
        probes.push({ method: 'POST', path: '/api/member/v1/models/sim-chat/chat', headers: { authorization: 'Bearer eyJhbGciOiJFUzI1NiJ9.e30.AAAA', 'content-type': 'application/json' }, body });
        probes.push({ method: 'POST', path: '/api/open/v1/models/sim-chat/chat', headers: json, body });
        probes.push({ method: 'POST', path: '/api/open/v1/models/sim-image/images/generations', headers: { ...json, 'idempotency-key': randomUUID() }, body });
        probes.push({ method: 'POST', path: '/api/open/v1/models/sim-chat/chat', headers: { ...auth, 'content-type': 'text/plain' }, body });
      }
      for (const id of HOSTILE_IDS) {
        probes.push({ method: 'POST', path: `/api/open/v1/models/${id}/chat`, headers: json, body: '{"messages":[{"role":"user","content":"hi"}]}' });
        probes.push({ method: 'GET', path: `/api/open/v1/models/sim-image/images/tasks/${id}`, headers: auth });
        probes.push({ method: 'GET', path: `/api/open/v1/models/${id}/images/tasks/${randomUUID()}`, headers: auth });
      }
      for (const header of ['Bearer', 'Bearer ', 'Basic abc', `Bearer ${'a'.repeat(10_000)}`, 'Bearer a.b.c', 'Bearer \u00e9', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', `Bearer ${'eyJ'.repeat(3000)}.e30.x`]) {
        for (const path of ['/api/open/v1/models/sim-chat/chat', '/v1/chat/completions', '/api/member/v1/models/sim-chat/chat', '/api/distribution/api-credit/balance']) {
          probes.push({ method: path.endsWith('balance') ? 'GET' : 'POST', path, headers: { authorization: header, 'content-type': 'application/json' }, body: path.endsWith('balance') ? undefined : '{}' });
        }
        probes.push({ method: 'POST', path: '/v1/messages', headers: { 'x-api-key': header.slice(7), 'content-type': 'application/json' }, body: '{}' });
      }
      for (const capabilities of ['telepathy', ',,,', 'signing,'.repeat(500), 'SIGNING']) {
        probes.push({ method: 'POST', path: '/api/open/v1/models/sim-chat/chat', headers: { ...json, 'x-payg-capabilities': capabilities }, body: '{"messages":[{"role":"user","content":"hi"}]}' });
      }
      probes.push({ method: 'GET', path: '/v1/models?limit=-1&after_id=%ZZ', headers: compat });
      for (const key of ['', '""', '"', 'null', randomUUID().toUpperCase(), `${randomUUID()}, ${randomUUID()}`]) {
        probes.push({ method: 'POST', path: '/api/open/v1/models/sim-image/images/generations', headers: { ...json, 'idempotency-key': key }, body: '{"prompt":"x"}' });
      }
      for (const directive of ['tokens=-1', 'tokens=99999999999999999999', 'hang=1', ';;;', 'late-artifact']) {
        probes.push({ method: 'POST', path: '/api/open/v1/models/sim-chat/chat', headers: { ...json, 'x-sim-directive': directive }, body: '{"messages":[{"role":"user","content":"hi"}]}' });
      }
      probes.push({ method: 'GET', path: '/api/distribution/api-credit/balance?account=../other', headers: auth });
      for (const kind of ['bills', 'usage']) {
        for (const query of ['page=-1', 'page=1e400', 'size=0x10', 'page=1&page=2', 'size[]=1', 'accountId=x', '%ZZ=1', `page=${'9'.repeat(400)}`]) {
          probes.push({ method: 'GET', path: `/api/distribution/api-credit/${kind}/page?${query}`, headers: auth });
        }
        for (const query of ['format=xml', 'from=yesterday', 'to=2026-13-45T00:00:00Z', 'from=2026-01-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'format=csv&format=jsonl']) {
          probes.push({ method: 'GET', path: `/api/distribution/api-credit/${kind}/export?${query}`, headers: auth });
        }
      }
      for (const body of [...BODIES, '{"amount":0}', '{"amount":1.5}', '{"amount":"1000"}', '{"amount":1e30}']) {
        probes.push({ method: 'POST', path: '/api/consumer/orders', headers: json, body });
        probes.push({ method: 'POST', path: '/api/consumer/checkout/callback', headers: { 'content-type': 'application/json', 'checkout-signature': 't=1,v1=00' }, body });
        probes.push({ method: 'POST', path: '/api/consumer/checkout/callback', headers: { 'content-type': 'application/json' }, body });
      }
      for (const id of HOSTILE_IDS) probes.push({ method: 'GET', path: `/api/consumer/orders/${id}`, headers: auth });
      // The prototype session routes: any run a probe starts fails before output (nothing charged).
      const sessionId = await newSession(d.url, apiKey);
      const runHeaders = { ...json, 'x-sim-directive': 'fail-before-output' };
      for (const body of BODIES) {
        probes.push({ method: 'POST', path: '/v1/sessions', headers: json, body });
        probes.push({ method: 'POST', path: `/v1/sessions/${sessionId}/runs`, headers: runHeaders, body });
      }
      for (const id of HOSTILE_IDS) {
        probes.push({ method: 'GET', path: `/v1/sessions/${id}/events`, headers: auth });
        probes.push({ method: 'POST', path: `/v1/sessions/${id}/runs`, headers: runHeaders, body: '{"model":"sim-chat","messages":[{"role":"user","content":"hi"}]}' });
      }
      for (const lastEventId of ['-1', 'abc', '1e3', '1.0', '9'.repeat(20), '18446744073709551616', '99999']) {
        probes.push({ method: 'GET', path: `/v1/sessions/${sessionId}/events`, headers: { ...auth, 'last-event-id': lastEventId } });
        probes.push({ method: 'GET', path: `/v1/sessions/${sessionId}/events?last_event_id=${encodeURIComponent(lastEventId)}`, headers: auth });
      }
      probes.push({ method: 'GET', path: `/v1/sessions/${sessionId}/events?last_event_id=1&last_event_id=2`, headers: auth });
      for (const capabilities of ['telepathy', 'signing', 'agent_run', 'agent_run,media']) {
        probes.push({ method: 'POST', path: `/v1/sessions/${sessionId}/runs`, headers: { ...runHeaders, 'x-payg-capabilities': capabilities }, body: '{"model":"sim-chat","messages":[{"role":"user","content":"hi"}]}' });
      }
      probes.push({ method: 'POST', path: '/v1/sessions', headers: { ...auth, 'content-type': 'text/plain' }, body: '{}' });
      probes.push({ method: 'POST', path: '/v1/sessions', headers: json, body: `{"workspace":"${'w'.repeat(5000)}"}` });
      probes.push({ method: 'GET', path: '/v1/workspaces?page=%ZZ', headers: auth });
      probes.push({ method: 'PUT', path: '/v1/sessions', headers: json, body: '{}' });
      probes.push({ method: 'PUT', path: '/api/open/v1/models/sim-chat/chat', headers: json, body: '{}' });
      probes.push({ method: 'POST', path: '/admin/v1/accounts', headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, body: '{"name":1}' });

      const failures: string[] = [];
      let charged = 0;
      let sessionsCreated = 1;
      for (const probe of probes) {
        const response = await fetch(`${d.url}${probe.path}`, { method: probe.method, headers: probe.headers, body: probe.body });
        await response.arrayBuffer();
        if (response.status >= 500) failures.push(`${probe.method} ${probe.path.slice(0, 80)} ${probe.body?.slice(0, 60) ?? ''} → ${response.status}`);
        if (probe.path.startsWith('/v1/sessions') && response.headers.get('x-payg-prototype') === null) failures.push(`${probe.method} ${probe.path.slice(0, 80)}: no X-Payg-Prototype`);
        if (probe.method === 'POST' && probe.path === '/v1/sessions' && response.status === 201) sessionsCreated += 1;
        // A probe that was in fact valid (say, an extra "__proto__" key) is served and charged.
        if (response.status < 300) charged += Number(response.headers.get('x-payg-charged') ?? 0);
      }
      expect(failures).toEqual([]);
      // A body nested deeper than 64 levels is refused up front, however valid the rest is.
      const deep = await fetch(`${d.url}/api/open/v1/models/sim-image/images/generations`, {
        method: 'POST', headers: { ...json, 'idempotency-key': randomUUID() }, body: `{"prompt":"x","extra":${'['.repeat(65)}${']'.repeat(65)}}`,
      });
      expect([deep.status, ((await deep.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_request']);
      // Only a session answered 201 exists: no refused request left one behind.
      const listed = (await workspaces(d.url, apiKey)).body.workspaces.flatMap((w: { sessions: unknown[] }) => w.sessions);
      expect(listed).toHaveLength(sessionsCreated);
      await passes(async () => expect(await balance(d.url, apiKey)).toMatchObject({ balance: 100_000_000 - charged, held: 0 }));
      await passes(async () => expect(await d.ledgerBalance(accountId)).toBe(100_000_000 - charged));
    });

    /** `text` with `bytes` (not valid UTF-8) put where `@` stands. */
    const withBytes = (text: string, bytes: number[]) => {
      const [before, after] = text.split('@');
      return Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
    };
    const errorCode = (body: any) => body?.error?.code;

    it('when a JSON body is not valid UTF-8, then every body route answers 400 invalid_utf8, nothing is served, held or charged', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, 100_000_000);
      const compatKey = (await admin(d.url, `/admin/v1/accounts/${accountId}/api-keys`, { scopes: ['compat'] })).body.apiKey;
      const json = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
      const post = (path: string, headers: Record<string, string>, body: Buffer) => request(`${d.url}${path}`, { method: 'POST', headers, body: body as unknown as string });
      // A stray byte, an overlong encoding of "/", a UTF-16 surrogate encoded in UTF-8.
      for (const bytes of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
        const chat = withBytes('{"model":"sim-chat","max_tokens":8,"messages":[{"role":"user","content":"hi @"}]}', bytes);
        const refusals = [
          await post('/api/open/v1/models/sim-chat/chat', json, chat),
          await post('/api/open/v1/models/sim-chat/chat/anthropic', json, chat),
          await post('/v1/chat/completions', { ...json, authorization: `Bearer ${compatKey}` }, chat),
          await post('/v1/messages', { 'x-api-key': compatKey, 'content-type': 'application/json' }, chat),
          await post('/api/open/v1/models/sim-image/images/generations', { ...json, 'idempotency-key': randomUUID() }, withBytes('{"prompt":"a red square @"}', bytes)),
          await post('/api/consumer/orders', json, withBytes('{"amount":1000000000,"note":"@"}', bytes)),
        ];
        expect(refusals.map((r) => [r.status, errorCode(r.body)])).toEqual(refusals.map(() => [400, 'invalid_utf8']));
      }
      // Two image requests that differ only in their invalid bytes are not one payload served twice.
      const key = randomUUID();
      for (const bytes of [[0xff], [0xfe]]) {
        const reply = await post('/api/open/v1/models/sim-image/images/generations', { ...json, 'idempotency-key': key }, withBytes('{"prompt":"a red square @","response_format":"b64_json"}', bytes));
        expect([reply.status, errorCode(reply.body)]).toEqual([400, 'invalid_utf8']);
      }
      // A signed checkout callback is refused after its signature, before anything is recorded.
      const order = await createOrder(d.url, apiKey, { amount: 1_000_000_000 });
      expect(order.status).toBe(201);
      const event = withBytes(`{"id":"evt_@","type":"payment.pending","orderId":"${order.body.orderId}","amount":1000000000,"currency":"USD","occurredAt":"${new Date().toISOString()}"}`, [0xff]);
      const t = Math.floor(Date.now() / 1000);
      const v1 = createHmac('sha256', CHECKOUT_SECRET).update(Buffer.concat([Buffer.from(`${t}.`), event])).digest('hex');
      const callback = await post('/api/consumer/checkout/callback', { 'content-type': 'application/json', 'checkout-signature': `t=${t},v1=${v1}` }, event);
      expect([callback.status, errorCode(callback.body)]).toEqual([400, 'invalid_utf8']);
      const after = await request(`${d.url}/api/consumer/orders/${order.body.orderId}`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(after.body).toMatchObject({ status: 'created', payments: [] });
      await passes(async () => expect(await balance(d.url, apiKey)).toMatchObject({ balance: 100_000_000, held: 0 }));
      await passes(async () => expect(await d.ledgerBalance(accountId)).toBe(100_000_000));
    });

    it('when a request names two credentials (two Authorization headers, or Authorization and another x-api-key), then 400 ambiguous_credential before any lookup; the same key in both is served', async () => {
      const { accountId, apiKey } = await fundedAccount(d.url, 100_000_000);
      const other = await fundedAccount(d.url, 100_000_000);
      const compatKey = (await admin(d.url, `/admin/v1/accounts/${accountId}/api-keys`, { scopes: ['compat'] })).body.apiKey;
      const type: [string, string] = ['content-type', 'application/json'];
      const chatBody = '{"model":"sim-chat","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}';
      const refusals = [
        await rawRequest(`${d.url}/api/open/v1/models/sim-chat/chat`, 'POST', [['authorization', `Bearer ${apiKey}`], ['authorization', `Bearer ${other.apiKey}`], type], chatBody),
        await rawRequest(`${d.url}/api/open/v1/models/sim-chat/chat`, 'POST', [['authorization', `Bearer ${apiKey}`], ['authorization', `Bearer ${apiKey}`], type], chatBody),
        await rawRequest(`${d.url}/api/open/v1/models/sim-chat/chat/anthropic`, 'POST', [['authorization', `Bearer ${apiKey}`], ['x-api-key', other.apiKey], type], chatBody),
        await rawRequest(`${d.url}/api/open/v1/models/sim-chat/chat/anthropic`, 'POST', [['x-api-key', apiKey], ['x-api-key', other.apiKey], type], chatBody),
        await rawRequest(`${d.url}/v1/messages`, 'POST', [['authorization', `Bearer ${compatKey}`], ['x-api-key', other.apiKey], type], chatBody),
        await rawRequest(`${d.url}/api/distribution/api-credit/balance`, 'GET', [['authorization', `Bearer ${apiKey}`], ['authorization', `Bearer ${other.apiKey}`]]),
        await rawRequest(`${d.url}/api/consumer/orders`, 'POST', [['authorization', `Bearer ${apiKey}`], ['authorization', `Bearer ${other.apiKey}`], type], '{"amount":1000000000}'),
        await rawRequest(`${d.url}/admin/v1/accounts`, 'POST', [['authorization', `Bearer ${ADMIN_TOKEN}`], ['authorization', 'Bearer someone-else'], type], '{"name":"ambiguous"}'),
      ];
      expect(refusals.map((r) => [r.status, errorCode(r.body)])).toEqual(refusals.map(() => [400, 'ambiguous_credential']));
      // The same key as Authorization and x-api-key names one credential.
      const same = await rawRequest(`${d.url}/api/open/v1/models/sim-chat/chat/anthropic`, 'POST', [['authorization', `Bearer ${apiKey}`], ['x-api-key', apiKey], type], chatBody);
      expect(same.status).toBe(200);
      const served = await balance(d.url, apiKey);
      expect(served.balance).toBeLessThan(100_000_000);
      await passes(async () => expect(await balance(d.url, other.apiKey)).toMatchObject({ balance: 100_000_000, held: 0 }));
    });

    it('when the balance is asked with any query parameter, then 400 invalid_request naming it, like the pages', async () => {
      const { apiKey } = await fundedAccount(d.url, 1_000);
      for (const [query, param] of [['account=../other', 'account'], ['accountId=acct_x', 'accountId'], ['pool=member', 'pool'], ['page=1', 'page']]) {
        const reply = await request(`${d.url}/api/distribution/api-credit/balance?${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
        expect([reply.status, reply.body.error?.code, reply.body.error?.param]).toEqual([400, 'invalid_request', param]);
      }
      expect((await request(`${d.url}/api/distribution/api-credit/balance`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
    });

    it('when the request line and headers pass 16 KiB, or the request is not HTTP, then 431 or 400 in the JSON error shape with a request id', async () => {
      const long = await fetch(`${d.url}/api/open/v1/catalog/models?${'a'.repeat(20_000)}=1`);
      const body = (await long.json()) as { error?: { code?: string; request_id?: string } };
      expect([long.status, body.error?.code, long.headers.get('x-request-id'), long.headers.get('traceparent')]).toEqual([431, 'invalid_request', body.error?.request_id, expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)]);
      const target = new URL(d.url);
      const sent = (raw: string) => new Promise<string>((resolve, reject) => {
        const socket = connect(Number(target.port), target.hostname, () => socket.write(raw));
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      const garbage = await sent('NOT HTTP AT ALL\r\n\r\n');
      expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'invalid_request' } });
      // HTTP/0.9 and HTTP/2.0 request lines, which Node's parser reads as HTTP/1.x: refused too,
      // before any route (a chat among them is neither served nor charged).
      const { apiKey } = await fundedAccount(d.url, 10_000_000);
      const chatBody = JSON.stringify(hello);
      for (const version of ['2.0', '0.9']) {
        for (const raw of [
          `POST /api/open/v1/models/sim-chat/chat HTTP/${version}\r\nhost: ${target.host}\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(chatBody)}\r\n\r\n${chatBody}`,
          `GET /healthz HTTP/${version}\r\nhost: ${target.host}\r\n\r\n`,
        ]) {
          const answer = await sent(raw);
          expect([version, answer.slice(0, answer.indexOf('\r\n'))]).toEqual([version, 'HTTP/1.1 400 Bad Request']);
          expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'invalid_request', request_id: expect.any(String) } });
        }
      }
      expect(await balance(d.url, apiKey)).toMatchObject({ balance: 10_000_000, held: 0 });
    });

    it('when OPTIONS is asked of any path, then 404 not_found in the JSON error shape with its request id, never an Allow list', async () => {
      for (const path of ['/api/distribution/api-credit/balance', '/api/open/v1/models/sim-chat/chat', '/v1/chat/completions', '/admin/v1/accounts', '/nope']) {
        const reply = await fetch(`${d.url}${path}`, { method: 'OPTIONS' });
        const body = (await reply.json()) as { error?: { code?: string } };
        expect([path, reply.status, body.error?.code, reply.headers.get('allow'), reply.headers.get('x-request-id')]).toEqual([path, 404, 'not_found', null, expect.any(String)]);
        expect([path, reply.headers.get('x-payg-prototype')]).toEqual([path, null]);
      }
      // Under the prototypes' paths every answer is marked, this one too.
      for (const path of ['/v1/sessions', '/v1/sessions/s-1/runs', '/v1/workspaces']) {
        const reply = await fetch(`${d.url}${path}`, { method: 'OPTIONS' });
        expect([path, reply.status, reply.headers.get('x-payg-prototype')]).toEqual([path, 404, 'legacy; excluded-from=open-navigation']);
      }
    });

    it('when a route that takes no query parameter gets one, or a body an unknown field, then 400 invalid_request naming it', async () => {
      const { apiKey, accountId } = await fundedAccount(d.url, 1_000);
      const key = { authorization: `Bearer ${apiKey}` };
      const operator = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const gets: Array<[string, Record<string, string>]> = [
        ['/api/open/v1/catalog/models', {}], ['/api/open/v1/capabilities', {}], ['/api/open/v1/openapi.json', {}],
        ['/api/consumer/orders/ord_00000000000000000000000000000000', key],
        ['/api/open/v1/models/sim-image/images/tasks/0b0c6a8e-1111-4a4a-8a8a-000000000000', key],
        ['/v1/workspaces', key], ['/admin/v1/reconciliation', operator], ['/admin/v1/accounts', operator],
        [`/admin/v1/accounts/${accountId}`, operator], ['/admin/v1/audit', operator],
      ];
      for (const [path, headers] of gets) {
        const reply = await request(`${d.url}${path}?x=1`, { headers });
        expect([path, reply.status, reply.body.error?.code, reply.body.error?.param, reply.body.error?.message]).toEqual([path, 400, 'invalid_request', 'x', expect.stringContaining('unknown query parameter x')]);
      }
      const posts: Array<[string, Record<string, string>, unknown, string]> = [
        ['/admin/v1/accounts', operator, { name: 'a', x: 1 }, 'x'],
        ['/api/consumer/orders', { ...key, 'idempotency-key': 'k-unknown-field' }, { amount: 1_000_000_000, currency: 'EUR' }, 'currency'],
        ['/v1/sessions', key, { x: 1 }, 'x'],
      ];
      for (const [path, headers, body, param] of posts) {
        const reply = await request(`${d.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect([path, reply.status, reply.body.error?.code, reply.body.error?.param, reply.body.error?.message]).toEqual([path, 400, 'invalid_request', param, `unknown field ${param}`]);
      }
    });

    it('when a write gets a query parameter (one that looks like it picks a pool too), then 400 invalid_request naming it, and nothing moves', async () => {
      const { apiKey, accountId } = await fundedAccount(d.url, 1_000_000_000);
      const key = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
      const operator = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
      const chatBody = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
      const session = await newSession(d.url, apiKey);
      const writes: Array<[string, string, Record<string, string>, string | undefined]> = [
        [`/admin/v1/accounts/${accountId}/credits?pool=member`, 'POST', operator, JSON.stringify({ amount: 5, reference: 'query-pool' })],
        [`/admin/v1/accounts/${accountId}/suspend?x=1`, 'POST', operator, '{}'],
        ['/api/open/v1/models/sim-chat/chat?x=1', 'POST', key, chatBody],
        ['/api/open/v1/models/sim-chat/chat/anthropic?x=1', 'POST', key, chatBody],
        ['/api/open/v1/models/sim-image/images/generations?x=1', 'POST', { ...key, 'idempotency-key': randomUUID() }, JSON.stringify({ prompt: 'a cat' })],
        ['/api/consumer/orders?x=1', 'POST', { ...key, 'idempotency-key': randomUUID() }, JSON.stringify({ amount: 1_000_000_000 })],
        ['/v1/sessions?x=1', 'POST', key, '{}'],
        [`/v1/sessions/${session}/runs?x=1`, 'POST', key, JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 })],
      ];
      const before = await balance(d.url, apiKey);
      for (const [path, method, headers, body] of writes) {
        const reply = await request(`${d.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
        const param = path.includes('pool=') ? 'pool' : 'x';
        expect([path, reply.status, reply.body.error?.code, reply.body.error?.param]).toEqual([path, 400, 'invalid_request', param]);
      }
      // A misspelt resume parameter would have sent the whole log again: refused too.
      const events = await request(`${d.url}/v1/sessions/${session}/events?lastEventId=3`, { headers: key });
      expect([events.status, events.body.error?.param]).toEqual([400, 'lastEventId']);
      expect(await balance(d.url, apiKey)).toEqual(before);
      const detail = await request(`${d.url}/admin/v1/accounts/${accountId}`, { headers: operator });
      expect(detail.body).toMatchObject({ suspendedAt: null });
      expect(detail.body.pools.map((p: { pool: string; balance: number }) => [p.pool, p.balance])).toEqual([['pool-3', 1_000_000_000], ['member', 0]]);
    });

    itConformsToOpenApi(openApi);
  });
}
