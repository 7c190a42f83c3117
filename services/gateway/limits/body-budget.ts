// The request bodies a gateway instance holds in memory. Two bounds, both per process:
// - each account's share of the bodies still being received (GATEWAY_ACCOUNT_BODY_BYTES, an
//   AccountShare): a slow sender cannot make the instance hold its bytes without end;
// - the instance's whole of the bodies of calls not yet answered, every account together
//   (GATEWAY_BODY_BYTES_IN_FLIGHT): a body is counted from its first byte until its answer is
//   finished (or its connection gone), because the call keeps it (parsed, and sent on to the
//   provider) all that time. Past it a request is refused 503 gateway_busy with Retry-After, so
//   many large calls at once are turned away instead of taking the process past its memory.

import { GatewayError } from '../../../lib/errors';
import type { AccountShare } from './account-share';

/** The bytes of bodies held by the instance's calls in progress, all accounts together. */
export class InstanceBytes {
  private held = 0;

  constructor(readonly limit: number) {}

  /** Counts `amount` more; false (nothing counted) when that would pass the limit. */
  take(amount: number): boolean {
    if (this.held + amount > this.limit) return false;
    this.held += amount;
    return true;
  }

  give(amount: number): void {
    this.held = Math.max(0, this.held - amount);
  }

  /** 503 gateway_busy: the instance, not the caller, is full; a moment later it may have room again. */
  refusal(): GatewayError {
    return new GatewayError('gateway_busy', `this gateway instance already holds ${this.limit} bytes of request bodies of calls in progress; send this request again in a moment`, {
      param: 'body_bytes_in_flight',
      headers: { 'retry-after': '1', 'retry-after-ms': '1000' },
    });
  }
}

/** What a route's JSON body is counted against (services/gateway/middleware/json-body.ts). */
export interface BodyBudget {
  perAccount: AccountShare;
  instance?: InstanceBytes;
}
