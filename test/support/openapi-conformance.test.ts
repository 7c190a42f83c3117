// The error bodies the server builds, read against the OpenAPI document by the same checker the
// end-to-end suites use: each shape is declared where it is sent.

import { randomUUID } from 'node:crypto';
import type { ImageTaskView } from '../../actors/image-task/ImageTaskInterface';
import { ERROR_STATUS, GatewayError, type ErrorCode } from '../../lib/errors';
import { errorAnswer, errorBody } from '../../lib/error-responder';
import { reply } from '../../services/gateway/images/answer';
import { operationOf, violationsOf, type Answer } from './openapi-conformance';

const JSON_TYPE = 'application/json; charset=utf-8';
const answer = (method: string, path: string, status: number, body: unknown): Answer => ({ method, url: `http://gateway${path}`, status, contentType: JSON_TYPE, body });
const refusal = (code: ErrorCode, param?: string) => new GatewayError(code, `refused: ${code}`, { param });
/** The answer for an image task that has no image: the use case throws it, the responder says it. */
const refusedTask = (view: ImageTaskView) => {
  try {
    reply(view);
  } catch (error) {
    return errorAnswer('native', error as GatewayError, 'r');
  }
  throw new Error('the task has an image');
};

describe('OpenAPI conformance of error answers', () => {
  it('when the checker meets an undeclared status or a gateway error with "param": null, then it says so; an undescribed route is not its business', () => {
    expect(violationsOf(answer('POST', '/api/open/v1/models/sim-chat/chat', 418, {}))).toEqual([expect.stringContaining('status not declared')]);
    const withNull = { error: { code: 'invalid_request', message: 'x', param: null, request_id: 'r' } };
    expect(violationsOf(answer('POST', '/api/open/v1/models/sim-chat/chat', 400, withNull))).toEqual([expect.stringContaining('error.param')]);
    expect(violationsOf(answer('POST', '/v1/sessions', 418, {}))).toEqual([]);
    expect(operationOf('GET', '/api/open/v1/models/sim-image/images/tasks/abc')?.template).toBe('/api/open/v1/models/{id}/images/tasks/{taskId}');
  });

  it('when a gateway route refuses a request, then its body (with or without param) is the declared Error, for the body and credential refusals of every route that reads a body', () => {
    const bodyRoutes = [
      '/api/open/v1/models/sim-chat/chat', '/api/open/v1/models/sim-chat/chat/anthropic', '/api/member/v1/models/sim-chat/chat',
      '/api/member/v1/models/sim-chat/chat/anthropic', '/api/open/v1/models/sim-image/images/generations', '/api/consumer/orders',
    ];
    for (const path of bodyRoutes) {
      for (const error of [refusal('invalid_utf8'), refusal('ambiguous_credential', 'Authorization'), refusal('payload_too_large'), refusal('unsupported_media_type'), refusal('actor_unavailable')]) {
        expect(violationsOf(answer('POST', path, error.status, errorBody('native', error, 'req-1')))).toEqual([]);
      }
    }
  });

  it('when a chat route meets a provider failure or timeout, then 502 and 504 are declared on every chat route, in its own shape', () => {
    for (const code of ['provider_error', 'provider_timeout', 'actor_unavailable'] as const) {
      const error = refusal(code);
      for (const path of ['/api/open/v1/models/m/chat', '/api/open/v1/models/m/chat/anthropic', '/api/member/v1/models/m/chat', '/api/member/v1/models/m/chat/anthropic']) {
        expect(violationsOf(answer('POST', path, error.status, errorBody('native', error, 'r')))).toEqual([]);
      }
      expect(violationsOf(answer('POST', '/v1/chat/completions', error.status, errorBody('openai', error, 'r')))).toEqual([]);
      expect(violationsOf(answer('POST', '/v1/messages', error.status, errorBody('anthropic', error, 'r')))).toEqual([]);
    }
  });

  it('when a compatibility route refuses, then OpenAI\'s shape ("param": null included) and Anthropic\'s (request_id at the top) are what the document declares', () => {
    const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ['invalid_json', 'invalid_utf8', 'unauthorized', 'compat_disabled', 'model_not_found', 'insufficient_funds', 'ambiguous_credential'].includes(code));
    for (const code of codes) {
      for (const error of [refusal(code), refusal(code, 'max_tokens')]) {
        expect(violationsOf(answer('POST', '/v1/chat/completions', error.status, errorBody('openai', error, 'r')))).toEqual([]);
        expect(violationsOf(answer('POST', '/v1/messages', error.status, errorBody('anthropic', error, 'r')))).toEqual([]);
      }
    }
    for (const shape of ['openai', 'anthropic'] as const) {
      expect(violationsOf(answer('GET', '/v1/models', 403, errorBody(shape, refusal('compat_disabled'), 'r')))).toEqual([]);
    }
    // The shapes are not interchangeable.
    expect(violationsOf(answer('POST', '/v1/messages', 400, errorBody('openai', refusal('invalid_json'), 'r')))).not.toEqual([]);
    expect(violationsOf(answer('POST', '/v1/chat/completions', 400, errorBody('native', refusal('invalid_json'), 'r')))).not.toEqual([]);
  });

  it('when the image route refuses before any task, then the plain error is declared; a task\'s failure carries taskId and status', () => {
    const path = '/api/open/v1/models/sim-image/images/generations';
    expect(violationsOf(answer('POST', path, 400, errorBody('native', refusal('idempotency_key_invalid', 'Idempotency-Key'), 'r')))).toEqual([]);
    const view = { taskId: randomUUID(), status: 'failed', phase: 'failed', model: 'sim-image', charged: 0, failure: 'no', deadlineAt: Date.now() } as unknown as ImageTaskView;
    const failed = refusedTask(view);
    expect(failed.status).toBe(400);
    expect(violationsOf(answer('POST', path, 400, failed.body))).toEqual([]);
    const unresolved = refusedTask({ ...view, status: 'unresolved', phase: 'unresolved' } as unknown as ImageTaskView);
    expect(violationsOf(answer('GET', `/api/open/v1/models/sim-image/images/tasks/${view.taskId}`, 503, unresolved.body))).toEqual([]);
    // A body that claims to be a task's but names an unknown status is not.
    expect(violationsOf(answer('POST', path, 400, { ...(failed.body as object), status: 'exploded' }))).not.toEqual([]);
  });

  it('when an answer\'s headers are kept, then a required one missing, or one that does not match its schema, is a violation', () => {
    const path = '/api/open/v1/models/sim-chat/chat';
    const body = { error: { code: 'rate_limit_exceeded', message: 'm', param: 'requests_per_minute', request_id: 'r' } };
    const headers = { 'x-request-id': 'r', traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, 'retry-after': '3', 'x-ratelimit-reset-requests': '3s' };
    expect(violationsOf({ ...answer('POST', path, 429, body), headers })).toEqual([]);
    const { 'x-request-id': _id, ...unnamed } = headers;
    expect(violationsOf({ ...answer('POST', path, 429, body), headers: unnamed })).toEqual([expect.stringContaining('required header x-request-id missing')]);
    expect(violationsOf({ ...answer('POST', path, 429, body), headers: { ...headers, 'x-ratelimit-reset-requests': 'soon' } })).toEqual([expect.stringContaining('header x-ratelimit-reset-requests')]);
    expect(violationsOf({ ...answer('POST', path, 429, body), headers: { ...headers, 'retry-after': 'later' } })).toEqual([expect.stringContaining('header Retry-After')]);
  });

  it('when a route fails unexpectedly, then its 500 internal_error is declared in the route\'s own shape', () => {
    const failure = new GatewayError('internal_error', 'internal error');
    expect(violationsOf(answer('POST', '/v1/chat/completions', 500, errorBody('openai', failure, 'r')))).toEqual([]);
    expect(violationsOf(answer('POST', '/v1/messages', 500, errorBody('anthropic', failure, 'r')))).toEqual([]);
    expect(violationsOf(answer('GET', '/api/distribution/api-credit/balance', 500, errorBody('native', failure, 'r')))).toEqual([]);
    expect(violationsOf(answer('POST', '/v1/chat/completions', 500, errorBody('native', failure, 'r')))).not.toEqual([]);
  });
});
