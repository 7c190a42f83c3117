import { codeOf as code } from '../../../test/support/errors';
import { canonicalJson, imageTaskId, parseIdempotencyKey, parseImageBody, requestFingerprint } from './request';

const KEY = '3f2b8c1e-7d4a-4e5f-9a6b-0c1d2e3f4a5b';

describe('Idempotency-Key', () => {
  it('when canonical, or the same value quoted as a structured-field string, then it is the key', () => {
    expect(parseIdempotencyKey(KEY)).toBe(KEY);
    expect(parseIdempotencyKey(`"${KEY}"`)).toBe(KEY);
    expect(parseIdempotencyKey(` ${KEY} `)).toBe(KEY);
  });
  it('when missing, then idempotency_key_required', () => {
    expect(code(() => parseIdempotencyKey(undefined))).toBe('idempotency_key_required');
  });
  it.each([
    ['upper case', KEY.toUpperCase()],
    ['braces', `{${KEY}}`],
    ['urn', `urn:uuid:${KEY}`],
    ['no hyphens', KEY.replaceAll('-', '')],
    ['one quote', `"${KEY}`],
    ['single quotes', `'${KEY}'`],
    ['empty', ''],
    ['too long', `${KEY}0`],
    ['two values', [KEY, KEY]],
  ])('when %s, then idempotency_key_invalid', (_name, header) => {
    expect(code(() => parseIdempotencyKey(header))).toBe('idempotency_key_invalid');
  });
});

describe('image task id and fingerprint', () => {
  it('when the scope (account, API key, key) is the same, then the task id is the same UUID; any part changed, another', () => {
    const id = imageTaskId('acct', 'key1', KEY);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(imageTaskId('acct', 'key1', KEY)).toBe(id);
    expect(new Set([id, imageTaskId('acct', 'key2', KEY), imageTaskId('other', 'key1', KEY), imageTaskId('acct', 'key1', KEY.replace('3f', '4f'))]).size).toBe(4);
  });
  it('when two payloads differ only in key order, then they have one fingerprint; any value, the model or a directive changed, another', () => {
    const a = requestFingerprint('sim-image', { prompt: 'p', size: '1x1', extra: { b: 1, a: [1, 2] } }, undefined);
    expect(requestFingerprint('sim-image', { extra: { a: [1, 2], b: 1 }, size: '1x1', prompt: 'p' }, {})).toBe(a);
    expect(requestFingerprint('sim-image', { prompt: 'p', size: '1x2', extra: { b: 1, a: [1, 2] } }, undefined)).not.toBe(a);
    expect(requestFingerprint('other', { prompt: 'p', size: '1x1', extra: { b: 1, a: [1, 2] } }, undefined)).not.toBe(a);
    expect(requestFingerprint('sim-image', { prompt: 'p', size: '1x1', extra: { b: 1, a: [1, 2] } }, { reject: true })).not.toBe(a);
    expect(canonicalJson({ b: [{ d: 1, c: null }], a: 'x' })).toBe('{"a":"x","b":[{"c":null,"d":1}]}');
  });
});

describe('image request body', () => {
  it('when valid, then prompt, format (url by default) and the other fields to pass through', () => {
    expect(parseImageBody({ prompt: 'p', size: '1024x1024', n: 1, model: 'ignored' })).toEqual({ prompt: 'p', responseFormat: 'url', passthrough: { size: '1024x1024' } });
    expect(parseImageBody({ prompt: 'p', response_format: 'b64_json' }).responseFormat).toBe('b64_json');
  });
  it.each([
    [{ prompt: 'p', n: 2 }, 'n_unsupported'],
    [{ prompt: 'p', n: 0 }, 'n_unsupported'],
    [{ prompt: 'p', n: '1' }, 'n_unsupported'],
    [{ prompt: 'p', n: null }, 'n_unsupported'],
    [{ prompt: '' }, 'invalid_request'],
    [{ prompt: 'x'.repeat(32_001) }, 'invalid_request'],
    [{}, 'invalid_request'],
    [{ prompt: 'p', response_format: 'png' }, 'invalid_request'],
    [{ prompt: 'p', stream: true }, 'invalid_request'],
    [[], 'invalid_request'],
    [null, 'invalid_request'],
    ['prompt', 'invalid_request'],
  ])('when the body is %j, then %s', (body, expected) => {
    expect(code(() => parseImageBody(body))).toBe(expected);
  });
});
