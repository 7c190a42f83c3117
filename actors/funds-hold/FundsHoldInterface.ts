// The public API of the FundsHold actor (one per account and funding pool). Callers depend on
// this file only. The actor type name "FundsHold" is frozen: it is the Dapr actor type.

import { z } from 'zod';
import { SPEND_LIMITS, type SpendLimits } from '../../lib/limits';
import type { UsageUnit } from '../../lib/events';
import { routeRecordSchema, type RouteRecord } from '../../lib/route-record';

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
  /**
   * The spend limits the hold must fit (lib/limits.ts): the account's and the calling key's.
   * What each scope was charged in the period plus what its open holds hold plus this amount
   * must not pass a limit, else 402 spend_limit_exceeded and nothing is held.
   */
  spend?: SpendScopes;
  /**
   * The spend key of the API key the call came with (the first key of its rotation chain): the
   * hold's charge counts towards that key's spend, with or without a spend limit, so that a limit
   * set later counts what the key spent before. Absent: not an API key, or not counted (sessions).
   */
  spendKeyId?: string;
}

export interface SpendScopes {
  /** The key's spend key (null: not an API key): its charges count against the key's spend limits. */
  apiKeyId: string | null;
  account?: SpendLimits;
  key?: SpendLimits;
}

export interface UsageLine {
  unit: UsageUnit;
  quantity: number;
  unitPrice: number;
  /** TEXT_OUTPUT only: how many of the quantity were reasoning tokens (billed as output, recorded apart). */
  reasoningTokens?: number;
}

export interface SettleRequest {
  holdId: string;
  /** What the usage costs; settled for at most the hold amount. */
  lines: UsageLine[];
  /** When true the platform bears the cost: usage is recorded, the customer is charged 0. */
  platformBorne?: boolean;
  /**
   * How the call was routed (lib/route-record.ts): recorded on the usage event of this settle and
   * so on each of its usage rows. A bad one refuses the settle (invalid_request), nothing changes.
   */
  route?: RouteRecord;
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

/** An operator's correction: takes `amount` off the balance, never below what is available. */
export interface DebitRequest {
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
  /** What open funds leases still lock (granted − charged): not available, not yet spent. */
  leased: number;
  openLeases: number;
}

/** What reconciliation compares with the ledger, read in one turn: the balance and how many bill rows the actor's events make. */
export interface LedgerFigures {
  balance: number;
  /** The bills this actor's events make in the ledger (FundsState.bills); null: not counted (a record from before it was kept). */
  bills: number | null;
}

export interface HoldOutcome {
  holdId: string;
  state: 'open' | 'settled' | 'released' | 'expired';
  amount: number;
  charged: number;
  balance: number;
  /**
   * A hold that expired with a progress record (its expiry, a release asExpiry, or a repeated
   * release of it): that record's lines, the usage its charge is for. Absent otherwise.
   */
  chargedFor?: UsageLine[];
}

export interface CreditOutcome {
  reference: string;
  amount: number;
  applied: boolean;
  balance: number;
}

/**
 * A funds lease: a bulk hold a gateway instance takes and carves each request's hold from
 * locally (docs/money.md, "Funds leases"). Granted only when it fits a quarter of the available
 * balance and is at least minAmount; else refused (nothing changes) and the gateway reserves
 * per request. Idempotent by leaseId.
 */
export interface OpenLeaseRequest {
  leaseId: string;
  amount: number;
  minAmount: number;
  ttlMs: number;
}

export interface LeaseOutcome {
  leaseId: string;
  state: 'open' | 'closed' | 'expired' | 'refused';
  /** Granted (0 when refused). */
  amount: number;
  /** Charged against the lease so far (its carved holds' settles and expiries). */
  charged: number;
  balance: number;
  /** The account's available balance after this call (balance − holds − leases' rest). */
  available: number;
}

/** A hold the gateway carved from a lease: who it is for and its amount (the cap of its charge). */
export interface CarvedHold {
  holdId: string;
  amount: number;
  requestId: string;
  model: string;
  profileId: string;
  /**
   * The hold's number in its lease (0, 1, 2… in the order of carving; the same in every batch
   * that carries the hold). The lease records which numbers have ended, so a batch reads an item's
   * `closed:` record only when the item may have ended before; without it, it always reads.
   */
  carve?: number;
  /** The spend key of the API key the call came with (ReserveRequest.spendKeyId): its charge counts there. */
  apiKeyId?: string;
}

export interface CarvedSettle extends CarvedHold {
  lines: UsageLine[];
  platformBorne?: boolean;
  /** As a settle's (SettleRequest.route); a bad one refuses this item alone. */
  route?: RouteRecord;
}

export interface CarvedRelease extends CarvedHold {
  reason: string;
}

/** Delivered usage of a carved hold: charged by the lease's expiry if the hold never settles. */
export interface CarvedProgress extends CarvedHold {
  lines: UsageLine[];
}

/**
 * One batch against a lease, applied in one actor turn (one commit): progress records first,
 * then settles, then releases; the lease renewed to now + ttlMs; closed (the rest returned to
 * available) when `close`. Every item is idempotent by its holdId, so a retried batch charges once.
 */
export interface LeaseBatchRequest {
  leaseId: string;
  ttlMs: number;
  progress?: CarvedProgress[];
  settle?: CarvedSettle[];
  release?: CarvedRelease[];
  close?: boolean;
}

/** Per settle and release item, in request order: its outcome, or why it was refused. */
export interface CarvedResult {
  holdId: string;
  outcome?: HoldOutcome;
  error?: { code: string; message: string };
}

/** One scope's spend as its spend limits count it: charged in the UTC day, month and in all, and what it holds open now. */
export interface SpendFigures {
  spend_per_day: number;
  spend_per_month: number;
  spend_total: number;
  /** Open now: the account's open holds and what its leases still lock; a key's own open holds and its lease-carved calls that recorded progress. Counted against every period's limit. */
  held: number;
}

/** The account's figures: its `held` counts what its funds leases lock, told apart. */
export interface AccountSpendFigures extends SpendFigures {
  /** Of `held`, what funds leases lock (counted until their gateways return them, idle or not). */
  leased: number;
}

export interface SpendView {
  account: AccountSpendFigures;
  /** The key's figures (its spend key: the first key of a rotation chain); null when no key was asked for. */
  key: SpendFigures | null;
}

export interface LeaseBatchOutcome {
  lease: LeaseOutcome;
  settled: CarvedResult[];
  released: CarvedResult[];
}

export interface FundsHoldApi {
  reserve(request: ReserveRequest): Promise<HoldOutcome>;
  settle(request: SettleRequest): Promise<HoldOutcome>;
  release(request: ReleaseRequest): Promise<HoldOutcome>;
  progress(request: ProgressRequest): Promise<HoldOutcome>;
  credit(request: CreditRequest): Promise<CreditOutcome>;
  /**
   * Takes `amount` off the balance once per reference (a repeat answers applied: false; another
   * amount under the same reference is refused). Refused with insufficient_funds, nothing moved,
   * when it exceeds what is available (the balance less open holds and leases).
   */
  debit(request: DebitRequest): Promise<CreditOutcome>;
  getBalance(): Promise<BalanceView>;
  /** Reconciliation's read: the balance and the count of bills emitted, as of one moment. */
  ledgerFigures(): Promise<LedgerFigures>;
  /** What the account, and a key when one is named, have spent and hold, as the spend limits count it (read only). */
  getSpend(request: { apiKeyId: string | null }): Promise<SpendView>;
  openLease(request: OpenLeaseRequest): Promise<LeaseOutcome>;
  leaseBatch(request: LeaseBatchRequest): Promise<LeaseBatchOutcome>;
}

export const FUNDS_HOLD_METHODS = ['reserve', 'settle', 'release', 'progress', 'credit', 'debit', 'getBalance', 'ledgerFigures', 'getSpend', 'openLease', 'leaseBatch'] as const satisfies readonly (keyof FundsHoldApi)[];

/** Each method's argument, checked by the host before the actor sees it (actors/runtime/args.ts); amounts are then read exactly by the actor. */
const holdIdArg = z.string().min(1).max(200);
const amountArg = z.union([z.number(), z.string(), z.bigint()]);
/** The longest a progress record or a lease may push an expiry out by. */
export const MAX_RENEWAL_MS = 86_400_000;
const ttlArg = z.number().int().min(1).max(MAX_RENEWAL_MS);
const usageLines = z.array(z.looseObject({ unit: z.string(), quantity: z.number(), unitPrice: z.number() }));
/** An API key's id as an actor argument (a spend key, a carved hold's key). */
export const keyIdArg = z.string().min(1).max(100);
const carved = { holdId: holdIdArg, amount: amountArg, requestId: z.string().optional(), model: z.string().optional(), profileId: z.string().optional(), carve: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(), apiKeyId: keyIdArg.optional() };
const spendLimitsArg = z.object(Object.fromEntries(SPEND_LIMITS.map((name) => [name, z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional()]))).strict();
export const spendScopesArg = z.looseObject({ apiKeyId: keyIdArg.nullable(), account: spendLimitsArg.optional(), key: spendLimitsArg.optional() });

export const FUNDS_HOLD_ARGS = {
  reserve: z.looseObject({
    holdId: holdIdArg, amount: amountArg, ttlMs: z.number().int().min(1).describe("an image hold outlives its 24-hour deadline: no upper bound here"), requestId: z.string(), model: z.string(), profileId: z.string(),
    spend: spendScopesArg.optional(),
    spendKeyId: keyIdArg.optional(),
  }),
  settle: z.looseObject({ holdId: holdIdArg, lines: usageLines, platformBorne: z.boolean().optional(), route: routeRecordSchema.optional() }),
  release: z.looseObject({ holdId: holdIdArg, reason: z.string().optional(), asExpiry: z.boolean().optional() }),
  progress: z.looseObject({ holdId: holdIdArg, lines: usageLines, ttlMs: ttlArg }),
  credit: z.looseObject({ amount: amountArg, reference: z.string().min(1).max(200) }),
  debit: z.looseObject({ amount: amountArg, reference: z.string().min(1).max(200) }),
  getBalance: z.looseObject({}),
  ledgerFigures: z.looseObject({}),
  getSpend: z.looseObject({ apiKeyId: keyIdArg.nullable() }),
  openLease: z.looseObject({ leaseId: holdIdArg, amount: amountArg, minAmount: amountArg, ttlMs: ttlArg }),
  leaseBatch: z.looseObject({
    leaseId: holdIdArg,
    ttlMs: ttlArg,
    progress: z.array(z.looseObject({ ...carved, lines: usageLines })).optional(),
    // A carved settle's route is checked by the actor, item by item: a bad one refuses its item, not the batch.
    settle: z.array(z.looseObject({ ...carved, lines: usageLines, platformBorne: z.boolean().optional(), route: z.unknown().optional() })).optional(),
    release: z.array(z.looseObject({ ...carved, reason: z.string().optional() })).optional(),
    close: z.boolean().optional(),
  }),
} satisfies Record<(typeof FUNDS_HOLD_METHODS)[number], z.ZodType>;
