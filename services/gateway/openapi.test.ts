import { openApiDocument } from './openapi';
import { violationsOf } from '../../test/support/openapi-conformance';
import { parseIdempotencyKey } from './images/request';

// Which routes the document describes is the route table's test (route-table.test.ts).
describe('OpenAPI document', () => {
  it('when read, then it is OpenAPI 3.1', () => {
    expect(openApiDocument.openapi).toBe('3.1.0');
  });
  it('when the image routes are read, then their 200/400/409/503 answers are described, the failures with taskId and status', () => {
    const paths = openApiDocument.paths as Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>;
    const generate = paths['/api/open/v1/models/{id}/images/generations'].post.responses;
    const recover = paths['/api/open/v1/models/{id}/images/tasks/{taskId}'].get.responses;
    expect(Object.keys(generate)).toEqual(expect.arrayContaining(['200', '400', '409', '503']));
    expect(Object.keys(recover)).toEqual(expect.arrayContaining(['200', '400', '404', '503']));
    for (const answer of [generate['400'], generate['503'], recover['400'], recover['503']]) {
      expect(JSON.stringify(answer.content)).toContain('#/components/schemas/ImageTaskError');
    }
    const failure = openApiDocument.components.schemas.ImageTaskError as { required: string[] };
    expect(failure.required).toEqual(expect.arrayContaining(['error', 'taskId', 'status']));
  });
});

describe('OpenAPI document of Idempotency-Key', () => {
  it('when a key is read against the declared pattern, then it matches exactly the keys the routes take', () => {
    const uuid = 'f0e1d2c3-b4a5-4968-8776-655443322110';
    const paths = openApiDocument.paths as unknown as Record<string, Record<string, { parameters?: { name: string; schema: { pattern: string } }[] }>>;
    const patterns = [paths['/api/open/v1/models/{id}/images/generations'].post, paths['/api/consumer/orders'].post, paths['/admin/v1/accounts/{accountId}/orders'].post]
      .map((operation) => new RegExp(operation.parameters!.find((p) => p.name === 'Idempotency-Key')!.schema.pattern));
    const taken = (key: string) => { try { parseIdempotencyKey(key); return true; } catch { return false; } };
    for (const key of [uuid, `"${uuid}"`, `"${uuid}`, `${uuid}"`, uuid.toUpperCase(), `${uuid}x`]) {
      expect([key, patterns.map((pattern) => pattern.test(key))]).toEqual([key, patterns.map(() => taken(key))]);
    }
  });
});

describe('OpenAPI document of the compatibility and member routes', () => {
  const paths = openApiDocument.paths as unknown as Record<string, Record<string, { security: unknown[]; description?: string; 'x-gate'?: string }>>;
  it('when the compatibility routes are read, then each is marked gated and names every condition of the gate with its code', () => {
    for (const [path, method] of [['/v1/models', 'get'], ['/v1/chat/completions', 'post'], ['/v1/messages', 'post']]) {
      const operation = paths[path][method];
      expect(operation['x-gate']).toBe('compat');
      for (const code of ['compat_disabled', 'compat_scope_required', 'compat_model_not_eligible', 'compat_account_unfunded']) expect(operation.description).toContain(code);
    }
    for (const path of Object.keys(paths).filter((p) => !p.startsWith('/v1/'))) {
      for (const operation of Object.values(paths[path])) expect(operation['x-gate']).toBeUndefined();
    }
  });
  it('when a chat route is read, then it declares the X-Payg-Capabilities header it honours, on both wires', () => {
    for (const path of ['/api/open/v1/models/{id}/chat', '/api/open/v1/models/{id}/chat/anthropic'] as const) {
      const parameters = (paths[path].post as unknown as { parameters: { name: string; in: string }[] }).parameters;
      expect([path, parameters.some((p) => p.name === 'X-Payg-Capabilities' && p.in === 'header')]).toEqual([path, true]);
    }
  });

  it('when the member routes are read, then they take the OAuth scheme only', () => {
    for (const path of ['/api/member/v1/entitlement', '/api/member/v1/models/{id}/chat', '/api/member/v1/models/{id}/chat/anthropic']) {
      for (const operation of Object.values(paths[path])) expect(operation.security).toEqual([{ oauth: [] }]);
    }
  });
});

describe('OpenAPI document of orders', () => {
  const paths = openApiDocument.paths as unknown as Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown> }>>;
  it('when the order routes are read, then creation answers 201/400/401/409 and the owner-only read 200/401/404, both with an API key', () => {
    const create = paths['/api/consumer/orders'].post;
    const read = paths['/api/consumer/orders/{orderId}'].get;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '409']));
    expect(Object.keys(read.responses)).toEqual(expect.arrayContaining(['200', '401', '404']));
    expect([create.security, read.security]).toEqual([[{ apiKey: [] }, { oauth: [] }], [{ apiKey: [] }, { oauth: [] }]]);
  });
  it('when the checkout callback is read, then it is signature-verified and answers 200/400/401/404/409', () => {
    const callback = paths['/api/consumer/checkout/callback'].post;
    expect(callback.security).toEqual([{ checkoutSignature: [] }]);
    expect(Object.keys(callback.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404', '409']));
    expect(openApiDocument.components.securitySchemes.checkoutSignature).toMatchObject({ type: 'apiKey', in: 'header', name: 'Checkout-Signature' });
  });
});

describe('OpenAPI document of refusals every route shares', () => {
  type Operation = { security?: unknown[]; requestBody?: { content: Record<string, unknown> }; responses: Record<string, unknown> };
  const operations = Object.entries(openApiDocument.paths as unknown as Record<string, Record<string, Operation>>)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })));
  const missing = (wanted: string[], selected: typeof operations) =>
    selected.flatMap(({ name, operation }) => wanted.filter((status) => !(status in operation.responses)).map((status) => `${name} ${status}`));

  it('when a route takes a credential, then it declares 400 (ambiguous credential), 401 and 503 (a dependency unavailable)', () => {
    const authenticated = operations.filter(({ operation }) => (operation.security ?? []).length > 0 && !JSON.stringify(operation.security).includes('checkoutSignature'));
    expect(authenticated.length).toBeGreaterThan(10);
    expect(missing(['400', '401', '503'], authenticated)).toEqual([]);
  });
  it('when a route reads a JSON body, then it declares 400 (invalid JSON or UTF-8), 413 and 415', () => {
    const withBody = operations.filter(({ operation }) => operation.requestBody?.content['application/json'] !== undefined);
    expect(missing(['400', '413', '415'], withBody)).toEqual([]);
  });
  it('when any route is read, then it declares 408 (the request not received whole in time) and 431 (headers too large), which Node answers before routing, and 500 internal_error', () => {
    expect(missing(['408', '431', '500'], operations)).toEqual([]);
  });
  it('when Node refuses a request before routing (400 not HTTP/1.1, 408, 431), then its answer in the gateway\'s own shape is what the route declares, whatever the route\'s wire', () => {
    const body = { error: { code: 'invalid_request', message: 'the request is not valid HTTP/1.1', request_id: 'f0e1d2c3-b4a5-4968-8776-655443322110' } };
    const violations = operations.flatMap(({ name }) => {
      const [method, path] = name.split(' ');
      const url = `http://gateway${path.replace(/\{[^}]+\}/g, 'x')}`;
      return [400, 408, 431].flatMap((status) => violationsOf({ method, url, status, contentType: 'application/json; charset=utf-8', body }));
    });
    expect(violations).toEqual([]);
  });
  it('when any answer is read, then it declares the x-request-id and traceparent every answer carries, as required', () => {
    const lacking = operations.flatMap(({ name, operation }) => Object.entries(operation.responses as Record<string, { headers?: Record<string, { required?: boolean }> }>)
      .filter(([, answer]) => answer.headers?.['x-request-id']?.required !== true || answer.headers?.traceparent?.required !== true)
      .map(([status]) => `${name} ${status}`));
    expect(lacking).toEqual([]);
  });
  it('when an answer of a status the SDKs retry (409, 429, 5xx) is read, then it declares x-should-retry, which only those may carry', () => {
    const declared = operations.flatMap(({ name, operation }) => Object.entries(operation.responses as Record<string, { headers?: Record<string, unknown> }>)
      .map(([status, answer]) => [`${name} ${status}`, /^(409|429|5..)$/.test(status), answer.headers?.['x-should-retry'] !== undefined]));
    expect(declared.filter(([, retried, has]) => retried !== has)).toEqual([]);
    expect(declared.filter(([name]) => String(name).endsWith(' 409')).length).toBeGreaterThan(5);
  });
  it('when a call counted under a rate limit is read, then its success and its 429 declare the rate-limit headers of its wire, and its 429 Retry-After', () => {
    const rateHeaders = (name: string, status: string) => Object.keys((operations.find((o) => o.name === name)!.operation.responses[status] as { headers?: object }).headers ?? {});
    for (const [name, success, style] of [
      ['POST /api/open/v1/models/{id}/chat', '200', 'x-ratelimit-remaining-requests'],
      ['POST /api/open/v1/models/{id}/chat/anthropic', '200', 'anthropic-ratelimit-requests-remaining'],
      ['POST /v1/chat/completions', '200', 'x-ratelimit-remaining-tokens'],
      ['POST /v1/messages', '200', 'anthropic-ratelimit-tokens-remaining'],
      ['POST /v1/messages/count_tokens', '200', 'anthropic-ratelimit-requests-reset'],
      ['POST /v1/embeddings', '200', 'x-ratelimit-reset-tokens'],
      ['POST /api/open/v1/models/{id}/images/generations', '200', 'x-ratelimit-limit-requests'],
      ['POST /api/consumer/orders', '201', 'x-ratelimit-limit-requests'],
    ]) {
      expect([name, rateHeaders(name, success)]).toEqual([name, expect.arrayContaining([style])]);
      expect([name, rateHeaders(name, '429')]).toEqual([name, expect.arrayContaining([style, 'Retry-After', 'Retry-After-Ms'])]);
    }
  });
  it('when a route calls a chat provider, then it declares 502 provider_error and 504 provider_timeout', () => {
    const chats = operations.filter(({ name }) => /\/chat(\/anthropic)?$|\/chat\/completions$|\/v1\/messages$/.test(name));
    expect(chats).toHaveLength(6);
    expect(missing(['502', '503', '504'], chats)).toEqual([]);
  });
});
