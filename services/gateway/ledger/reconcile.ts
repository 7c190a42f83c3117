// Reconciliation: every account the ledger knows (every account the operator API created is
// registered with it, money rows or not), its balance recomputed from the ledger's bill rows,
// compared with the balance its FundsHold actor holds. A difference is any disagreement between
// the two, or between the rows and the ledger's own running total; it names the events the actor
// emitted that the ledger has not stored (the actor's unconfirmed outbox), and `repair` delivers
// those straight to the ledger.
//
// In the Dapr topology events travel from the actor's outbox over pub/sub to the ledger, so an
// account that changed a moment ago can differ for that moment (the ledger lags, the outbox
// re-sends until the ledger confirms): a difference that persists once traffic is quiet is a
// real one (docs/console.md).

import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { FUNDS_HOLD_ACTOR_TYPE, fundsHoldActorId } from '../../../actors/funds-hold/FundsHoldInterface';
import type { ActorOutboxClient } from '../../../actors/runtime/outbox-client';
import type { BillingData, EventEnvelope } from '../../../lib/events';
import type { LedgerBalance } from '../../ledger/balances';
import type { LedgerReader } from './reader';

/** An event the actor emitted that the ledger has not stored. */
export interface MissingEvent {
  id: string;
  topic: string;
  type: string;
  occurredAt: string;
  /** Billing events: what the event moves the ledger's balance by. */
  balanceDelta?: number;
  amount?: number;
}

export interface BalanceDifference {
  accountId: string;
  pool: string;
  /** Σ balanceDelta of the ledger's bill rows. */
  ledger: number;
  /** The FundsHold actor's balance. */
  actor: number;
  /** The ledger's running total (equal to `ledger` unless the ledger itself is inconsistent). */
  ledgerRunningTotal: number;
  /** Events the actor emitted that the ledger lacks (what `repair` delivers). */
  missing: MissingEvent[];
}

export interface Reconciliation {
  accounts: number;
  differences: BalanceDifference[];
}

export interface RepairedAccount {
  accountId: string;
  pool: string;
  /** Event ids the ledger holds now. */
  delivered: string[];
  /** Event ids it still lacks (refused or unreachable). */
  pending: string[];
}

export interface Repair {
  repaired: RepairedAccount[];
  /** Reconciliation after the repair. */
  after: Reconciliation;
}

const CONCURRENT_ACTOR_CALLS = 8;

export async function reconcile(ledger: LedgerReader, funds: FundsHoldClient, outbox: ActorOutboxClient): Promise<Reconciliation> {
  const balances = ledger.balances()[Symbol.asyncIterator]();
  const differences: BalanceDifference[] = [];
  let accounts = 0;
  const compare = async (entry: LedgerBalance) => {
    const actor = (await funds.of(entry.accountId, entry.pool).getBalance()).balance;
    if (actor !== entry.balance || entry.runningTotal !== entry.balance) {
      const { events } = await outbox.pending(FUNDS_HOLD_ACTOR_TYPE, fundsHoldActorId(entry.accountId, entry.pool));
      differences.push({ accountId: entry.accountId, pool: entry.pool, ledger: entry.balance, actor, ledgerRunningTotal: entry.runningTotal, missing: events.map(missingEvent) });
    }
  };
  // A few workers share the one stream of ledger balances: bounded actor calls, bounded memory.
  try {
    await Promise.all(Array.from({ length: CONCURRENT_ACTOR_CALLS }, async () => {
      for (let next = await balances.next(); !next.done; next = await balances.next()) {
        accounts += 1;
        await compare(next.value);
      }
    }));
  } catch (error) {
    await balances.return?.();
    throw error;
  }
  differences.sort((a, b) => a.accountId.localeCompare(b.accountId) || a.pool.localeCompare(b.pool));
  return { accounts, differences };
}

/** The operator's repair: each differing account's actor delivers its missing events to the ledger; then reconciles again. */
export async function repair(ledger: LedgerReader, funds: FundsHoldClient, outbox: ActorOutboxClient): Promise<Repair> {
  const before = await reconcile(ledger, funds, outbox);
  const repaired: RepairedAccount[] = [];
  for (const difference of before.differences.filter((d) => d.missing.length > 0)) {
    const outcome = await outbox.deliver(FUNDS_HOLD_ACTOR_TYPE, fundsHoldActorId(difference.accountId, difference.pool));
    repaired.push({ accountId: difference.accountId, pool: difference.pool, ...outcome });
  }
  return { repaired, after: await reconcile(ledger, funds, outbox) };
}

function missingEvent(event: EventEnvelope): MissingEvent {
  const base = { id: event.id, topic: event.topic, type: event.type, occurredAt: event.occurredAt };
  if (event.topic !== 'billing') return base;
  const { balanceDelta, amount } = event.data as BillingData;
  return { ...base, balanceDelta, amount };
}
