// What each API key has been charged, per period: one small record per key (`keyspend:<id>`),
// not in the FundsHold's hot record, so an account with many keys does not make every turn write
// all their counters. Every charge of a hold made with a key counts, with or without a spend
// limit, so a limit set later counts what the key spent before it; the id is the key's spend key
// (the first key of its rotation chain), so a rotated key's successor goes on with its count.
//
// A turn loads the counters it may change before it charges (a charge is synchronous: expiry
// runs inside other steps), and the changed ones are written with the turn's state.

import type { ActorState } from '../runtime/port';
import { StateRecords } from '../runtime/state-record';
import { spentAt, withSpend, type SpendCounter } from './funds-state';
import type { SpendLimitName } from '../../lib/limits';

export const KEY_SPEND_PREFIX = 'keyspend:';

export class KeySpendBook {
  private readonly records: StateRecords<SpendCounter>;
  private loaded = new Map<string, SpendCounter | undefined>();
  private readonly changed = new Set<string>();

  constructor(state: ActorState) {
    this.records = new StateRecords(state, KEY_SPEND_PREFIX);
  }

  /** A new turn: nothing loaded (what an earlier turn loaded may have been reset with it). */
  reset(): void {
    this.loaded = new Map();
    this.changed.clear();
  }

  /** Reads the counters of these keys (undefined ids skipped), side by side. */
  async load(ids: Iterable<string | undefined>): Promise<void> {
    const wanted = [...new Set([...ids].filter((id): id is string => id !== undefined && !this.loaded.has(id)))];
    const read = await Promise.all(wanted.map((id) => this.records.get(id)));
    wanted.forEach((id, i) => this.loaded.set(id, read[i]));
  }

  /** A counter kept in the hot record by an earlier version: taken over unless the key has its own record already. */
  adopt(id: string, counter: SpendCounter): void {
    if (this.counter(id) !== undefined) return;
    this.loaded.set(id, counter);
    this.changed.add(id);
  }

  spentAt(id: string, now: number): Record<SpendLimitName, bigint> {
    return spentAt(this.counter(id), now);
  }

  add(id: string, charged: bigint, now: number): void {
    this.loaded.set(id, withSpend(this.counter(id), charged, now));
    this.changed.add(id);
  }

  /** Writes the changed counters with the turn (kept in the activation's cache: the next turn reads them again). */
  flush(): void {
    for (const id of this.changed) this.records.set(id, this.loaded.get(id)!, { keep: true });
    this.changed.clear();
  }

  private counter(id: string): SpendCounter | undefined {
    // A charge for a key its turn did not load would count from zero and overwrite the record.
    if (!this.loaded.has(id)) throw new Error(`the spend of key ${id} was not loaded in this turn`);
    return this.loaded.get(id);
  }
}
