// Pins every error answer the responder writes: for each code, the native body, the OpenAI- and
// Anthropic-compatible bodies and each chat wire's stream error frame (snapshot, taken from the
// five formatters this module replaced); then the responder as middleware.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { errorAnswer, errorBody, errorResponder, notFound, streamErrorFrame, WIRE_ERROR_TYPE, type ErrorResponderOptions } from './error-responder';
import { ERROR_STATUS, GatewayError, NO_RETRY, RETRY_CAN_SUCCEED, type ErrorCode } from './errors';

const CODES = Object.keys(ERROR_STATUS) as ErrorCode[];
const plain = (code: ErrorCode) => new GatewayError(code, `refused: ${code}`);
const detailed = (code: ErrorCode) => new GatewayError(code, `refused: ${code}`, { param: 'max_tokens', extra: { gate: 'compat', condition: 'c' } });
// As JSON text: the order of the fields is part of what is pinned.
const byCode = (answer: (code: ErrorCode) => unknown[]): Record<string, string[]> => Object.fromEntries(CODES.map((code) => [code, answer(code).map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))]));

describe('error answers of every code', () => {
  it('native body', () => {
    expect(byCode((code) => [errorBody('native', plain(code), 'req-1'), errorBody('native', detailed(code), 'req-1')])).toMatchSnapshot();
  });
  it('OpenAI-compatible body', () => {
    expect(byCode((code) => [errorBody('openai', plain(code), 'req-1'), errorBody('openai', detailed(code), 'req-1')])).toMatchSnapshot();
  });
  it('Anthropic-compatible body', () => {
    expect(byCode((code) => [errorBody('anthropic', plain(code), 'req-1'), errorBody('anthropic', detailed(code), 'req-1')])).toMatchSnapshot();
  });
  it('stream error frames of both chat wires', () => {
    expect(byCode((code) => [streamErrorFrame('openai', detailed(code)), streamErrorFrame('anthropic', detailed(code))])).toMatchSnapshot();
  });
  it('the SDKs\' types of the common refusals', () => {
    const types = (code: ErrorCode) => [(errorBody('openai', plain(code), 'r').error as { type: string }).type, (errorBody('anthropic', plain(code), 'r').error as { type: string }).type];
    expect(types('invalid_request')).toEqual(['invalid_request_error', 'invalid_request_error']);
    expect(types('unauthorized')).toEqual(['authentication_error', 'authentication_error']);
    expect(types('insufficient_funds')).toEqual(['insufficient_quota', 'billing_error']);
    expect(types('compat_disabled')).toEqual(['permission_error', 'permission_error']);
    expect(types('model_not_found')).toEqual(['not_found_error', 'not_found_error']);
    expect(types('idempotency_key_reused')).toEqual(['conflict_error', 'invalid_request_error']);
    expect(types('payload_too_large')).toEqual(['invalid_request_error', 'request_too_large']);
    expect(types('provider_error')).toEqual(['api_error', 'api_error']);
    expect(types('actor_unavailable')).toEqual(['api_error', 'overloaded_error']);
    expect(types('provider_timeout')).toEqual(['api_error', 'timeout_error']);
  });
  it('a stream error frame says the code and message only (no param, no extra)', () => {
    const error = detailed('provider_timeout');
    expect(streamErrorFrame('openai', error)).toBe('data: {"error":{"code":"provider_timeout","message":"refused: provider_timeout"}}\n\n');
    expect(streamErrorFrame('anthropic', error)).toBe('event: error\ndata: {"type":"error","error":{"type":"timeout_error","message":"refused: provider_timeout","code":"provider_timeout"}}\n\n');
  });
});

describe('the error responder', () => {
  it('when a code has no wire types, then it does not compile; every code has both', () => {
    // @ts-expect-error a map without every code is refused by the type checker
    const incomplete: typeof WIRE_ERROR_TYPE = { invalid_request: { openai: 'invalid_request_error', anthropic: 'invalid_request_error' } };
    expect(Object.keys(incomplete)).toHaveLength(1);
    expect(Object.keys(WIRE_ERROR_TYPE).sort()).toEqual([...CODES].sort());
  });

  it('when an error carries headers and body fields, then every shape answers them, beside the error object', () => {
    const error = new GatewayError('image_unresolved', 'later', { headers: { 'retry-after': '5' }, bodyFields: { taskId: 't1' } });
    expect(JSON.stringify(errorAnswer('native', error, 'r'))).toBe('{"status":503,"headers":{"retry-after":"5"},"body":{"error":{"code":"image_unresolved","message":"later","request_id":"r"},"taskId":"t1"}}');
    expect(JSON.stringify(errorBody('openai', error, 'r'))).toBe('{"error":{"message":"later","type":"api_error","param":null,"code":"image_unresolved","request_id":"r"},"taskId":"t1"}');
    expect(JSON.stringify(errorBody('anthropic', error, 'r'))).toBe('{"type":"error","error":{"type":"overloaded_error","message":"later","code":"image_unresolved"},"request_id":"r","taskId":"t1"}');
    expect(streamErrorFrame('openai', error)).toBe('data: {"error":{"code":"image_unresolved","message":"later"}}\n\n');
    // Without a request id (the ledger's answers) the body names none.
    expect(errorBody('native', new GatewayError('not_found', 'no'))).toEqual({ error: { code: 'not_found', message: 'no' } });
  });

  it('when a refusal is one no retry of the same request can change, then it says x-should-retry: false; a retryable one, and every status the SDKs do not retry, say nothing', () => {
    const hints = Object.fromEntries(CODES.map((code) => [code, errorAnswer('openai', plain(code), 'r').headers['x-should-retry'] ?? null]));
    expect(Object.entries(hints).filter(([, hint]) => hint !== null)).toEqual([
      ['idempotency_key_reused', 'false'], ['credit_reference_reused', 'false'], ['hold_state_conflict', 'false'], ['task_state_conflict', 'false'],
      ['order_state_conflict', 'false'], ['callback_replayed', 'false'], ['run_not_active', 'false'], ['session_limit_reached', 'false'],
      ['api_key_inactive', 'false'], ['api_key_limit_reached', 'false'], ['debit_reference_reused', 'false'], ['oauth_disabled', 'false'],
    ]);
    // Every code of a status the SDKs retry is decided (the map does not compile otherwise), and no other is.
    expect(CODES.filter((code) => /^(409|429|5..)$/.test(String(ERROR_STATUS[code]))).sort()).toEqual(Object.keys(RETRY_CAN_SUCCEED).sort());
    // An error's own headers win: one answer of a retryable code may say that it is not.
    expect(errorAnswer('native', new GatewayError('provider_error', 'failed for good', { headers: { ...NO_RETRY } })).headers).toEqual({ 'x-should-retry': 'false' });
  });

  describe('as middleware', () => {
    let server: Server;
    let base: string;
    const logged: unknown[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });

    beforeAll(async () => {
      const app = express();
      app.use((req, _res, next) => {
        req.requestId = 'req-7';
        next();
      });
      const mount = (path: string, options: ErrorResponderOptions) => {
        const router = express.Router();
        router.get('/funds', () => {
          throw new GatewayError('insufficient_funds', 'short', { extra: { required: 5 } });
        });
        router.get('/task', () => {
          throw new GatewayError('image_unresolved', 'later', { headers: { 'retry-after': '5', 'x-payg-charged': '0' }, bodyFields: { taskId: 't1' } });
        });
        router.get('/item/:id', (_req, res) => {
          res.json({});
        });
        router.get('/bug', () => {
          throw new Error('secret');
        });
        // The call stopped because its client left: failed once the connection is gone.
        router.get('/left', (req, _res, next) => {
          req.once('close', () => setTimeout(() => next(new GatewayError('provider_error', 'the call was stopped: the client left before the answer')), 20));
        });
        router.get('/started', (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('part');
          throw new Error('cut');
        });
        router.use(notFound());
        router.use(errorResponder({ logger, ...options }));
        app.use(path, router);
      };
      mount('/native', {});
      mount('/openai', { shapeOf: () => 'openai' });
      mount('/anthropic', { shapeOf: () => 'anthropic' });
      mount('/cut', { started: 'cut' });
      server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    const call = async (path: string) => {
      const response = await fetch(`${base}${path}`);
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
    };

    it('when a route throws, then the answer has the code\'s status, the error\'s headers and the request\'s shape', async () => {
      expect(await call('/native/funds')).toEqual({ status: 402, retryAfter: null, body: { error: { code: 'insufficient_funds', message: 'short', request_id: 'req-7', required: 5 } } });
      expect(await call('/openai/funds')).toEqual({ status: 402, retryAfter: null, body: { error: { message: 'short', type: 'insufficient_quota', param: null, code: 'insufficient_funds', request_id: 'req-7', required: 5 } } });
      expect(await call('/anthropic/funds')).toEqual({ status: 402, retryAfter: null, body: { type: 'error', error: { type: 'billing_error', message: 'short', code: 'insufficient_funds', required: 5 }, request_id: 'req-7' } });
      expect(await call('/native/task')).toEqual({ status: 503, retryAfter: '5', body: { error: { code: 'image_unresolved', message: 'later', request_id: 'req-7' }, taskId: 't1' } });
      expect(await call('/native/nothing')).toEqual({ status: 404, retryAfter: null, body: { error: { code: 'not_found', message: 'no route GET /nothing', request_id: 'req-7' } } });
      expect(await call('/native/item/%E0%A4%A')).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', message: 'the request path is not valid percent-encoding' } } });
    });

    it('when the failure is the service\'s, then it is logged; a task\'s state report and a refusal are not', async () => {
      logged.length = 0;
      expect(await call('/native/bug')).toEqual({ status: 500, retryAfter: null, body: { error: { code: 'internal_error', message: 'internal error', request_id: 'req-7' } } });
      await call('/native/task');
      await call('/native/funds');
      expect(logged).toEqual([expect.objectContaining({ msg: 'request failed', requestId: 'req-7', err: expect.objectContaining({ message: 'secret' }) })]);
    });

    it('when the client left before its failure, then the failure is an info line, not an error line', async () => {
      logged.length = 0;
      const controller = new AbortController();
      const leaving = fetch(`${base}/native/left`, { signal: controller.signal }).catch(() => 'left');
      setTimeout(() => controller.abort(), 50);
      expect(await leaving).toBe('left');
      const deadline = Date.now() + 2000;
      while (logged.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(logged).toEqual([expect.objectContaining({ level: 30, msg: 'request ended after its client left', requestId: 'req-7' })]);
    });

    it('when the answer had started, then it is ended, or cut where the app says so', async () => {
      const ended = await fetch(`${base}/native/started`);
      expect(await ended.text()).toBe('part');
      await expect(fetch(`${base}/cut/started`).then((answer) => answer.text())).rejects.toThrow();
    });
  });
});
