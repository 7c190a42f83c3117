// Funds leases for the chat path (GATEWAY_FUNDS_LEASE, docs/money.md "Funds leases"): the same
// FundsHoldApi as the actor's client, so the chat use case does not change, but a reserve is
// carved locally from this instance's lease on the account, and settles, releases and progress
// records go to the actor in batches per lease (./account-leases.ts, ./lease-batcher.ts). Holds
// this layer did not carve (per-request fallback) pass through to the actor unchanged.

import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { fundsHoldActorId, type FundsHoldApi } from '../../../actors/funds-hold/FundsHoldInterface';
import { Kept } from '../../../lib/kept';
import { AccountLeases, type LeaseSettings } from './account-leases';

/** How often leases are renewed, returned when idle and forgotten when ended (at most). */
const TICK_MS = 1000;

/** Accounts whose funds source is kept for reuse (lib/kept.ts). */
const KEPT_SOURCES = 1024;

export interface FundsSource {
  of(accountId: string, pool?: string): FundsHoldApi;
}

export class LeasedFunds implements FundsSource {
  private readonly accounts = new Map<string, AccountLeases>();
  /** Each account's FundsHoldApi, made once: it holds only the account's key and actor proxy. */
  private readonly sources = new Kept<FundsHoldApi>(KEPT_SOURCES);
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly client: FundsHoldClient, private readonly settings: LeaseSettings) {
    this.timer = setInterval(() => this.tick(), Math.max(10, Math.min(TICK_MS, Math.floor(settings.ttlMs / 8), Math.floor(settings.idleMs / 2))));
    this.timer.unref();
  }

  of(accountId: string, pool?: string): FundsHoldApi {
    const key = fundsHoldActorId(accountId, pool);
    return this.sources.get(key, () => this.source(key, accountId, pool));
  }

  private source(key: string, accountId: string, pool?: string): FundsHoldApi {
    const actor = this.client.of(accountId, pool);
    // Looked up at each call: an account forgotten by the tick (nothing left) is made again.
    const account = () => {
      let leases = this.accounts.get(key);
      if (!leases) {
        leases = new AccountLeases(actor, this.settings);
        this.accounts.set(key, leases);
      }
      return leases;
    };
    return {
      reserve: (request) => account().reserve(request),
      settle: (request) => account().settle(request),
      release: (request) => account().release(request),
      progress: (request) => account().progress(request),
      credit: (request) => actor.credit(request),
      debit: (request) => actor.debit(request),
      getBalance: () => actor.getBalance(),
      ledgerFigures: () => actor.ledgerFigures(),
      getSpend: (request) => actor.getSpend(request),
      openLease: (request) => actor.openLease(request),
      leaseBatch: (request) => actor.leaseBatch(request),
    };
  }

  /** Leases this instance holds, over all accounts (tests, metrics). */
  get openLeases(): number {
    let n = 0;
    for (const account of this.accounts.values()) n += account.openLeases;
    return n;
  }

  /** A shutdown, after the pending settles: every lease without carved holds is returned (the others expire). */
  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.accounts.values()].map((a) => a.closeAll())), late]);
    clearTimeout(timer);
  }

  private tick(): void {
    for (const [key, account] of this.accounts) if (!account.tick()) this.accounts.delete(key);
  }
}
