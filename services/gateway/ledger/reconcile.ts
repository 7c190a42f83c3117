// Reconciliation: every account the ledger knows (every account the operator API created is
// registered with it, money rows or not), its balance recomputed from the ledger's bill rows,
// compared with the balance its FundsHold actor holds, and the number of bills FundsHold's events
// made in the ledger compared with the number the actor emitted (where both keep one: a lost bill
// that moves no balance, a release or a platform-borne record, shows only there). A difference is
// any disagreement between the two, or between the rows and the ledger's own running total; it
// names the events the actor emitted that the ledger has not stored (the actor's unconfirmed
// outbox), and `repair` delivers those straight to the ledger.
//
// In the Dapr topology events travel from the actor's outbox over pub/sub to the ledger, so an
// account that changed a moment ago can differ for that moment (the ledger lags, the outbox
// re-sends until the ledger confirms): a difference that persists once traffic is quiet is a
// real one (docs/console.md).

import type { FundsHoldClient } from '../../../actors/funds-hold/client';
import { FUNDS_HOLD_ACTOR_TYPE, fundsHoldActorId, type LedgerFigures } from '../../../actors/funds-hold/FundsHoldInterface';
import type { ActorOutboxClient } from '../../../actors/runtime/outbox-client';
import type { BillingData, EventEnvelope, UsageData } from '../../../lib/events';
import { fundsBillsOf, MAX_BALANCES_SPAN, type LedgerBalance } from '../../ledger/balances';
import type { LedgerReader } from './reader';

/** An event the actor emitted that the ledger has not stored. */
export interface MissingEvent {
  id: string;
  topic: string;
  type: string;
  occurredAt: string;
  /** Billing events, and usage events that carry their bill (a settle's): what the event moves the ledger's balance by. */
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
  /**
   * Bill rows FundsHold's events made in the ledger, and bills the actor emitted (present when both
   * count them: accounts whose records were made from 2026-11-29 on). Apart, with equal balances:
   * a bill that moves no balance (a release, a platform-borne record) is missing or extra.
   */
  bills?: { ledger: number; actor: number };
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
    const seen = await sameMoment(ledger, funds, entry);
    if (!agree(seen.ledger, seen.actor)) {
      const { events } = await outbox.pending(FUNDS_HOLD_ACTOR_TYPE, fundsHoldActorId(entry.accountId, entry.pool));
      const bills = seen.actor.bills !== null && seen.ledger.fundsBills !== undefined ? { bills: { ledger: seen.ledger.fundsBills, actor: seen.actor.bills } } : {};
      differences.push({ accountId: entry.accountId, pool: entry.pool, ledger: seen.ledger.balance, actor: seen.actor.balance, ledgerRunningTotal: seen.ledger.runningTotal, ...bills, missing: events.map(missingEvent) });
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

/** How many times a difference is looked at again before it is reported (each look is four reads). */
export const RECONCILE_RECHECKS = 5;

/**
 * The ledger and the actor agree: the same balance, the ledger's rows and running total alike, and
 * the same count of FundsHold bills where both keep one (an unknown count is not compared).
 */
function agree(ledger: LedgerBalance, actor: LedgerFigures): boolean {
  const bills = actor.bills === null || ledger.fundsBills === undefined || actor.bills === ledger.fundsBills;
  return actor.balance === ledger.balance && ledger.runningTotal === ledger.balance && bills;
}

/**
 * The ledger's balance and the actor's, as of one moment. The ledger is read first and the actor
 * after, so a change that lands between the two reads (a chat settled while reconciliation runs)
 * shows as a difference that is none. A difference is therefore looked at again: the actor read
 * between two reads of the ledger's bill count. Whatever the actor answered, it held at some moment
 * between those two reads (on the embedded host a change and its ledger rows commit together, and
 * an actor call is answered only after what it read has committed), so the two agree when the
 * actor's balance is the ledger's at one of the bill counts seen in between (rows never move: the
 * balance at k bills is the sum of rows 1 to k), and its count of bills emitted is between the
 * ledger's counts of FundsHold bills of the two reads (counts only grow; with no bill appended in
 * between, it must be that count exactly). One look that finds no bill appended around the actor's
 * read and still a difference is the answer (on Dapr that may also be an event still on its way to
 * the ledger: docs/console.md); a difference that keeps moving is reported as last seen after
 * RECONCILE_RECHECKS looks.
 */
async function sameMoment(ledger: LedgerReader, funds: FundsHoldClient, entry: LedgerBalance): Promise<{ ledger: LedgerBalance; actor: LedgerFigures }> {
  const actorFigures = () => funds.of(entry.accountId, entry.pool).ledgerFigures();
  let seen = { ledger: entry, actor: await actorFigures() };
  // A ledger whose rows disagree with its own running total is a difference whatever the actor says.
  for (let look = 0; look < RECONCILE_RECHECKS && !agree(seen.ledger, seen.actor) && entry.runningTotal === entry.balance; look++) {
    const before = await ledger.totals(entry.accountId, entry.pool);
    const actor = await actorFigures();
    const after = await ledger.totals(entry.accountId, entry.pool);
    if (after.bills - before.bills > MAX_BALANCES_SPAN) continue;
    const balances = await ledger.balancesAt(entry.accountId, entry.pool, before.bills, after.bills);
    const counted = actor.bills === null || before.fundsBills === undefined || after.fundsBills === undefined || (before.fundsBills <= actor.bills && actor.bills <= after.fundsBills);
    if (balances[0] === before.balance && balances.includes(actor.balance) && counted) {
      return { ledger: { ...entry, balance: actor.balance, runningTotal: actor.balance, ...(actor.bills !== null ? { fundsBills: actor.bills } : {}) }, actor };
    }
    seen = { ledger: { ...entry, balance: balances[0], runningTotal: before.balance, bills: before.bills, ...fundsBillsOf(before) }, actor };
    if (after.bills === before.bills) break;
  }
  return seen;
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
  // A settle's usage event carries its bill (lib/events.ts): it moves the balance as that bill does.
  const bill = event.topic === 'billing' ? (event.data as BillingData) : (event.data as UsageData).bill;
  if (bill === undefined) return base;
  const { balanceDelta, amount } = bill;
  return { ...base, balanceDelta, amount };
}
