// Checkout callback signatures (docs/orders.md): the payment provider signs `<timestamp>.<raw body>`
// with HMAC-SHA256 under the shared secret (GATEWAY_CHECKOUT_SECRET) and sends
//   Checkout-Signature: t=<unix seconds>,v1=<lowercase hex>
// The signature is checked over the body's exact bytes, before the body is parsed, in constant
// time; a timestamp further than the tolerance from now is refused, so a captured callback cannot
// be replayed later (and one replayed within the tolerance is refused by the order's event ids).

import { createHmac, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../../../lib/errors';

export const SIGNATURE_HEADER = 'Checkout-Signature';
const TIMESTAMP = /^\d{1,12}$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** HMAC-SHA256 of `<timestampS>.<body>` under `secret`. */
export function checkoutSignature(secret: string, timestampS: number | string, body: Buffer): Buffer {
  return createHmac('sha256', secret).update(`${timestampS}.`).update(body).digest();
}

export interface SignatureCheck {
  header: string | string[] | undefined;
  /** The body exactly as received. */
  body: Buffer;
  secret: string;
  toleranceS: number;
  nowMs: number;
}

/** Throws signature_required, signature_invalid or signature_stale (all 401) unless the body is signed. */
export function verifyCheckoutSignature(check: SignatureCheck): void {
  const { timestampS, signatures } = parseSignatureHeader(check.header);
  const expected = checkoutSignature(check.secret, timestampS, check.body);
  // Every candidate is compared (no early exit), each in constant time.
  let valid = false;
  for (const candidate of signatures) valid = timingSafeEqual(expected, candidate) || valid;
  if (!valid) throw new GatewayError('signature_invalid', `the ${SIGNATURE_HEADER} signature does not match the body`, { param: SIGNATURE_HEADER });
  if (Math.abs(check.nowMs - timestampS * 1000) > check.toleranceS * 1000) {
    throw new GatewayError('signature_stale', `the ${SIGNATURE_HEADER} timestamp is more than ${check.toleranceS} s from now`, { param: SIGNATURE_HEADER });
  }
}

/** `t=<unix seconds>` once and `v1=<hex>` at least once (several during a secret rotation); other schemes are ignored. */
function parseSignatureHeader(header: string | string[] | undefined): { timestampS: number; signatures: Buffer[] } {
  if (header === undefined || header === '') {
    throw new GatewayError('signature_required', `the ${SIGNATURE_HEADER} header is required: t=<unix seconds>,v1=<hex HMAC-SHA256>`, { param: SIGNATURE_HEADER });
  }
  const malformed = () => new GatewayError('signature_invalid', `the ${SIGNATURE_HEADER} header must be t=<unix seconds>,v1=<hex HMAC-SHA256>`, { param: SIGNATURE_HEADER });
  if (Array.isArray(header)) throw malformed();
  const timestamps: string[] = [];
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (at < 0) throw malformed();
    if (key === 't') timestamps.push(value);
    else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) throw malformed();
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamps.length !== 1 || !TIMESTAMP.test(timestamps[0]) || signatures.length === 0) throw malformed();
  return { timestampS: Number(timestamps[0]), signatures };
}
