// The public API of the FundsHold actor (one per account and funding pool). Callers depend on
// this file only. The actor type name "FundsHold" is frozen: it is the Dapr actor type.

import type { UsageUnit } from '../../lib/events';

export const FUNDS_HOLD_ACTOR_TYPE = 'FundsHold';
export const DEFAULT_POOL = 'pool-3';
/** The member entitlement budget: what OAuth member routes pay from (docs/auth.md). */
export const MEMBER_POOL = 'member';

export function fundsHoldActorId(accountId: string, pool: string = DEFAULT_POOL): string {
  return `${accountId}:${pool}`;
}

export interface ReserveRequest {
  holdId: string;
  amount: number;
  /** How long the hold may stay open before its expiry reminder ends it (pushed out by progress). */
  ttlMs: number;
  requestId: string;
  model: string;
  profileId: string;
}

export interface UsageLine {
  unit: UsageUnit;
  quantity: number;
  unitPrice: number;
}

export interface SettleRequest {
  holdId: string;
  /** What the usage costs; settled for at most the hold amount. */
  lines: UsageLine[];
  /** When true the platform bears the cost: usage is recorded, the customer is charged 0. */
  platformBorne?: boolean;
}

/**
 * The usage a call has delivered so far, recorded on its open hold (and its expiry pushed to
 * now + ttlMs). Lines empty: a renewal only. A hold that expires with a record is charged for it.
 */
export interface ProgressRequest {
  holdId: string;
  lines: UsageLine[];
  ttlMs: number;
}

export interface ReleaseRequest {
  holdId: string;
  reason: string;
  /**
   * The call's process is gone (a session run's lease ran out): end the hold as its expiry
   * would, charged for its progress record if it has one, else released.
   */
  asExpiry?: boolean;
}

export interface CreditRequest {
  amount: number;
  reference: string;
}

export interface BalanceView {
  accountId: string;
  pool: string;
  balance: number;
  held: number;
  available: number;
  openHolds: number;
}

export interface HoldOutcome {
  holdId: string;
  state: 'open' | 'settled' | 'released' | 'expired';
  amount: number;
  charged: number;
  balance: number;
}

export interface CreditOutcome {
  reference: string;
  amount: number;
  applied: boolean;
  balance: number;
}

export interface FundsHoldApi {
  reserve(request: ReserveRequest): Promise<HoldOutcome>;
  settle(request: SettleRequest): Promise<HoldOutcome>;
  release(request: ReleaseRequest): Promise<HoldOutcome>;
  progress(request: ProgressRequest): Promise<HoldOutcome>;
  credit(request: CreditRequest): Promise<CreditOutcome>;
  getBalance(): Promise<BalanceView>;
}

export const FUNDS_HOLD_METHODS = ['reserve', 'settle', 'release', 'progress', 'credit', 'getBalance'] as const satisfies readonly (keyof FundsHoldApi)[];
