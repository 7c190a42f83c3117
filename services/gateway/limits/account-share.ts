// What one account may hold at once of a gateway instance's resources that cost it while they
// last, whatever the account's balance: the bytes of request bodies still being received
// (GATEWAY_ACCOUNT_BODY_BYTES), the session event streams open (GATEWAY_ACCOUNT_EVENT_STREAMS) and
// the model calls running (GATEWAY_ACCOUNT_CALLS).
// Counted per account in this process; past its share a request is refused 429 with a `param`
// naming the share.

import { GatewayError } from '../../../lib/errors';

export class AccountShare {
  private readonly held = new Map<string, number>();

  /** `param`: the name a refusal gives the share (`body_bytes_in_flight`, `event_streams`, `calls_in_flight`). */
  constructor(readonly perAccount: number, private readonly param: string) {}

  /** Counts `amount` more for the account; false (nothing counted) when that would pass its share. */
  take(accountId: string, amount: number): boolean {
    const now = (this.held.get(accountId) ?? 0) + amount;
    if (now > this.perAccount) return false;
    this.held.set(accountId, now);
    return true;
  }

  give(accountId: string, amount: number): void {
    const left = (this.held.get(accountId) ?? 0) - amount;
    if (left > 0) this.held.set(accountId, left);
    else this.held.delete(accountId);
  }

  /** 429 rate_limit_exceeded naming the share; a second later it may have room again. */
  refusal(message: string): GatewayError {
    return new GatewayError('rate_limit_exceeded', message, { param: this.param, headers: { 'retry-after': '1', 'retry-after-ms': '1000' } });
  }
}

/**
 * One model call of the account counted while it runs (GATEWAY_ACCOUNT_CALLS: chats, embeddings,
 * the provider call of a new image task, session runs), or refused 429 past the account's share.
 * The answer gives it back, once however often it is called; without a share it does nothing.
 */
export function countCall(calls: AccountShare | undefined, accountId: string): () => void {
  if (!calls) return () => {};
  if (!calls.take(accountId, 1)) throw calls.refusal(`this account already has ${calls.perAccount} model calls running on this gateway instance`);
  let running = true;
  return () => {
    if (running) calls.give(accountId, 1);
    running = false;
  };
}
