// JSON bodies up to the service/proxy limit (the upstream's is checked once the model is known).
// Records the body's size for the effective-limit check and the reservation estimate. Once the
// body is in, a request with a credential has it checked again (it may have taken a while).
// A lean reader instead of body-parser: on the chat hot path its type sniffing, charset
// decoding and stream plumbing cost more than the whole actor round trip (see bench/).

import { isUtf8 } from 'node:buffer';
import type { NextFunction, Request, Response } from 'express';
import { HARD_BODY_LIMIT } from '../../../lib/config';
import { GatewayError } from '../../../lib/errors';
import type { BodyBudget } from '../limits/body-budget';

declare module 'express-serve-static-core' {
  interface Request {
    bodyBytes: number;
    /** The body's exact bytes, set by rawJsonBody (signatures are computed over them). */
    rawBody?: Buffer;
  }
}

const JSON_TYPE = /^application\/(.+\+)?json\s*(;|$)/i;
const DRAIN_MAX = 2 * HARD_BODY_LIMIT;

/**
 * Deeper JSON is refused: no real request nests this far, and code that walks a body (request
 * fingerprints, state encoders) must never meet a depth that exhausts its stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * More objects and arrays than this in one body are refused. Each costs the parser tens of bytes
 * and far more time than its two or three bytes of text: a 32 MiB body of `[{},{},…]` took 3.6 s
 * and 680 MB to parse, one of `[[[…]]]` 7.8 s and 930 MB. No real request comes near it (2,048
 * embeddings inputs, a long conversation's messages and their parts: thousands).
 */
export const MAX_JSON_CONTAINERS = 100_000;

/**
 * Refuses a JSON text nested deeper than MAX_JSON_DEPTH or holding more than MAX_JSON_CONTAINERS
 * objects and arrays, from the text alone, before it is parsed: what the parse of such a body
 * costs is the attack. Exact for valid JSON (strings are skipped whole); text that is not JSON is
 * left to the parser, which refuses it.
 */
export function refuseCostlyStructure(text: string): void {
  let depth = 0;
  let containers = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote, over escaped characters.
      for (i++; i < length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) throw new GatewayError('invalid_request', `request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
      if (++containers > MAX_JSON_CONTAINERS) throw new GatewayError('invalid_request', `request body holds more than ${MAX_JSON_CONTAINERS} objects and arrays`);
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
}

/**
 * The text of a JSON body, refused unless it is valid UTF-8 (RFC 8259): a lenient decode would
 * replace bad bytes with U+FFFD, serving and billing a request the client never sent, and
 * making bodies that differ only in those bytes the same payload.
 */
export function decodeJsonText(raw: Buffer): string {
  if (!isUtf8(raw)) throw new GatewayError('invalid_utf8', 'request body is not valid UTF-8');
  return raw.toString('utf8');
}

/** A form's fields by name (WHATWG URL parsing, as a browser encodes them); a name given twice gives an array. */
function formFields(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(text)) {
    const earlier = fields[name];
    fields[name] = earlier === undefined ? value : Array.isArray(earlier) ? [...earlier, value] : [earlier, value];
  }
  return fields;
}

/**
 * A JSON body; with a budget (after authentication), counted against its caller's account while
 * it is received, and against the instance's bodies in flight until its answer is finished.
 */
/** A body that took this long to come has its credential checked again once it is in (as an open event stream checks its own). */
export const BODY_RECHECK_AFTER_MS = 250;

export function jsonBody(limitBytes: number, budget?: BodyBudget) {
  return readBody(limitBytes, 'json', budget);
}

/** A JSON-typed body kept unparsed in req.rawBody: for a signature over the exact bytes, checked before parsing. */
export function rawJsonBody(limitBytes: number) {
  return readBody(limitBytes, 'raw');
}

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/**
 * An HTML form's body (application/x-www-form-urlencoded, UTF-8), as an object of its fields: a
 * name given twice is an array, for the route's schema to refuse as such. For the routes a
 * browser reaches by submitting a form (a download the browser saves as it arrives), read before
 * the credential, which such a form carries in a field (middleware/auth.ts): a small limit only.
 */
export function formBody(limitBytes: number) {
  return readBody(limitBytes, 'form');
}

function readBody(limitBytes: number, kind: 'json' | 'raw' | 'form', budget?: BodyBudget) {
  return function parseJsonBody(req: Request, res: Response, next: NextFunction): void {
    const type = req.headers['content-type'];
    if (kind === 'form' ? type === undefined || !FORM_TYPE.test(type) : type !== undefined && !JSON_TYPE.test(type)) {
      return next(new GatewayError('unsupported_media_type', kind === 'form' ? 'the request body must be application/x-www-form-urlencoded (UTF-8)' : 'the request body must be application/json'));
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      return next(new GatewayError('unsupported_media_type', `content-encoding ${encoding} is not accepted`));
    }
    let done = false;
    const started = Date.now();
    // What this body counts in its account's budget, given back once it is received (or not).
    const accountId = budget ? req.caller?.accountId : undefined;
    let counted = 0;
    const giveBack = () => {
      if (counted > 0) budget!.perAccount.give(accountId!, counted);
      counted = 0;
    };
    // What it counts in the instance's bodies in flight: given back once the answer is finished
    // or the connection gone, whichever comes first (the call holds the body until then).
    const instance = accountId !== undefined ? budget!.instance : undefined;
    let inFlight = 0;
    if (instance) {
      res.once('close', () => {
        instance.give(inFlight);
        inFlight = 0;
      });
    }
    const finish = (error?: GatewayError) => {
      giveBack();
      if (done) return;
      done = true;
      // The credential was checked when the headers came; a body can take up to the request
      // timeout to arrive. One that took BODY_RECHECK_AFTER_MS or more has it checked again now
      // (the same lookup, cached for at most a second), so a key revoked, expired or past its
      // grace, or an account suspended, while its body was on the way is refused like any new
      // request, and the call runs under the limits of now. A body that came with its headers
      // (nearly every call) is not looked up twice.
      if (error !== undefined || !req.recheckCredential || Date.now() - started < BODY_RECHECK_AFTER_MS) return next(error);
      req.recheckCredential().then(() => next(), next);
    };
    const tooLarge = () => new GatewayError('payload_too_large', `request body exceeds the limit of ${limitBytes} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    // Over the limit, the rest is read and dropped so the client sees the 413 (not a reset);
    // past DRAIN_MAX bytes, or past the account's share of bodies on the way, the body is
    // refused as it comes, nothing of it kept, and the connection closed.
    const refuseAndClose = (error = tooLarge()) => {
      chunks.length = 0;
      res.setHeader('connection', 'close');
      req.removeAllListeners('data');
      req.resume();
      finish(error);
    };
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > DRAIN_MAX) return refuseAndClose();
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > DRAIN_MAX) refuseAndClose();
      else if (size <= limitBytes) {
        if (accountId !== undefined) {
          const share = budget!.perAccount;
          if (!share.take(accountId, chunk.length)) {
            return refuseAndClose(share.refusal(`the account is already sending ${share.perAccount} bytes of request bodies at once; send this one again once those are received`));
          }
          counted += chunk.length;
          if (instance) {
            if (!instance.take(chunk.length)) return refuseAndClose(instance.refusal());
            inFlight += chunk.length;
          }
        }
        chunks.push(chunk);
      }
    });
    // A client that goes away mid-body ends nothing else: its bytes leave the budget.
    if (accountId !== undefined) req.once('close', giveBack);
    req.once('error', () => finish(new GatewayError('invalid_request', 'request body was not received whole')));
    req.once('end', () => {
      if (done) return;
      if (size > limitBytes) return finish(tooLarge());
      req.bodyBytes = size;
      if (size === 0) {
        req.body = undefined;
        return finish();
      }
      const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      if (kind === 'raw') {
        req.rawBody = raw;
        return finish();
      }
      let text: string;
      try {
        text = decodeJsonText(raw);
        if (kind === 'form') {
          req.body = formFields(text);
          return finish();
        }
        refuseCostlyStructure(text);
      } catch (error) {
        return finish(error as GatewayError);
      }
      try {
        req.body = JSON.parse(text);
      } catch {
        return finish(new GatewayError('invalid_json', 'request body is not valid JSON'));
      }
      finish();
    });
  };
}
