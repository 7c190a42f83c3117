import { createHmac } from 'node:crypto';
import { checkoutSignature, verifyCheckoutSignature } from './signature';

// The worked example of docs/orders.md, computed there with openssl:
//   printf '%s.%s' "$T" "$BODY" | openssl dgst -sha256 -hmac "$SECRET"
const SECRET = 'whsec_0123456789abcdef0123456789abcdef';
const T = 1767225600;
const BODY = Buffer.from('{"id":"evt_1","type":"payment.succeeded","orderId":"ord_0f8c2d3e4a5b46c7980a1b2c3d4e5f60","amount":5000000000,"currency":"USD","occurredAt":"2026-01-01T00:00:00Z"}');
const OPENSSL_HEX = '110feafcf8fe128e471f0dfe71024cfe524940ab4a7a37e600b5f49dd4218bb4';

const check = (header: string | string[] | undefined, overrides: Partial<Parameters<typeof verifyCheckoutSignature>[0]> = {}) =>
  () => verifyCheckoutSignature({ header, body: BODY, secret: SECRET, toleranceS: 300, nowMs: T * 1000, ...overrides });

describe('checkout callback signatures', () => {
  it('when computed, then it is the HMAC-SHA256 of "<t>.<body>" that openssl prints for the documented example', () => {
    expect(checkoutSignature(SECRET, T, BODY).toString('hex')).toBe(OPENSSL_HEX);
  });

  it('when the header carries the right signature, then it is accepted (any order of parts, upper-case hex, unknown schemes ignored)', () => {
    expect(check(`t=${T},v1=${OPENSSL_HEX}`)).not.toThrow();
    expect(check(` v1=${OPENSSL_HEX.toUpperCase()} , t=${T}`)).not.toThrow();
    expect(check(`t=${T},v0=abc,v1=${OPENSSL_HEX}`)).not.toThrow();
  });

  it('when several v1 signatures are sent (a secret rotation), then one matching is enough', () => {
    const other = createHmac('sha256', 'another-secret-another-secret-0123').update(`${T}.`).update(BODY).digest('hex');
    expect(check(`t=${T},v1=${other},v1=${OPENSSL_HEX}`)).not.toThrow();
    expect(check(`t=${T},v1=${other}`)).toThrow(expect.objectContaining({ code: 'signature_invalid' }));
  });

  it('when the header is missing or empty, then signature_required', () => {
    expect(check(undefined)).toThrow(expect.objectContaining({ code: 'signature_required', status: 401 }));
    expect(check('')).toThrow(expect.objectContaining({ code: 'signature_required' }));
  });

  it.each([
    ['no timestamp', `v1=${OPENSSL_HEX}`],
    ['no signature', `t=${T}`],
    ['two timestamps', `t=${T},t=${T},v1=${OPENSSL_HEX}`],
    ['a non-numeric timestamp', `t=soon,v1=${OPENSSL_HEX}`],
    ['a fractional timestamp', `t=${T}.5,v1=${OPENSSL_HEX}`],
    ['a short signature', `t=${T},v1=${OPENSSL_HEX.slice(2)}`],
    ['a signature that is not hex', `t=${T},v1=${'z'.repeat(64)}`],
    ['a part without "="', `t=${T},${OPENSSL_HEX}`],
    ['two header values', [`t=${T},v1=${OPENSSL_HEX}`, `t=${T},v1=${OPENSSL_HEX}`]],
  ])('when the header has %s, then signature_invalid', (_what, header) => {
    expect(check(header)).toThrow(expect.objectContaining({ code: 'signature_invalid', status: 401 }));
  });

  it('when the body, the timestamp or the secret differ from what was signed, then signature_invalid', () => {
    const header = `t=${T},v1=${OPENSSL_HEX}`;
    expect(check(header, { body: Buffer.from(BODY.toString().replace('5000000000', '5000000001')) })).toThrow(expect.objectContaining({ code: 'signature_invalid' }));
    expect(check(header, { body: Buffer.concat([BODY, Buffer.from(' ')]) })).toThrow(expect.objectContaining({ code: 'signature_invalid' }));
    expect(check(`t=${T + 1},v1=${OPENSSL_HEX}`)).toThrow(expect.objectContaining({ code: 'signature_invalid' }));
    expect(check(header, { secret: `${SECRET}x` })).toThrow(expect.objectContaining({ code: 'signature_invalid' }));
  });

  it('when the signed timestamp is further than the tolerance from now, either way, then signature_stale; at the tolerance it is accepted', () => {
    const header = `t=${T},v1=${OPENSSL_HEX}`;
    expect(check(header, { nowMs: (T + 300) * 1000 })).not.toThrow();
    expect(check(header, { nowMs: (T - 300) * 1000 })).not.toThrow();
    expect(check(header, { nowMs: (T + 301) * 1000 })).toThrow(expect.objectContaining({ code: 'signature_stale', status: 401 }));
    expect(check(header, { nowMs: (T - 301) * 1000 })).toThrow(expect.objectContaining({ code: 'signature_stale' }));
    expect(check(header, { nowMs: (T + 61) * 1000, toleranceS: 60 })).toThrow(expect.objectContaining({ code: 'signature_stale' }));
  });
});
