// Typed client of the FundsHold actor over any ActorInvoker (embedded or Dapr).

import type { ActorInvoker } from '../runtime/port';
import {
  FUNDS_HOLD_ACTOR_TYPE,
  fundsHoldActorId,
  type BalanceView,
  type CreditOutcome,
  type CreditRequest,
  type FundsHoldApi,
  type HoldOutcome,
  type LeaseBatchOutcome,
  type LeaseBatchRequest,
  type LeaseOutcome,
  type OpenLeaseRequest,
  type ProgressRequest,
  type ReleaseRequest,
  type ReserveRequest,
  type SettleRequest,
} from './FundsHoldInterface';

export class FundsHoldClient {
  constructor(private readonly actors: ActorInvoker) {}

  of(accountId: string, pool?: string): FundsHoldApi {
    const id = fundsHoldActorId(accountId, pool);
    const call = <R>(method: keyof FundsHoldApi, arg: unknown) => this.actors.invoke<R>(FUNDS_HOLD_ACTOR_TYPE, id, method, arg);
    return {
      reserve: (request: ReserveRequest) => call<HoldOutcome>('reserve', request),
      settle: (request: SettleRequest) => call<HoldOutcome>('settle', request),
      release: (request: ReleaseRequest) => call<HoldOutcome>('release', request),
      progress: (request: ProgressRequest) => call<HoldOutcome>('progress', request),
      credit: (request: CreditRequest) => call<CreditOutcome>('credit', request),
      getBalance: () => call<BalanceView>('getBalance', {}),
      openLease: (request: OpenLeaseRequest) => call<LeaseOutcome>('openLease', request),
      leaseBatch: (request: LeaseBatchRequest) => call<LeaseBatchOutcome>('leaseBatch', request),
    };
  }
}
