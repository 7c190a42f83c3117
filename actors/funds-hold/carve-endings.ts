// How a lease batch knows and records the endings of its carved holds (docs/money.md, "Funds
// leases"). Each carved hold is numbered in its lease (CarvedHold.carve) and the lease counts the
// numbers that have ended (funds-state.ts, EndedCarves), so a hold the lease knows as still open
// needs no read. While the lease counts, an ending is recorded in the lease's chunk of its number
// (`carved:<leaseId>:<n>`, CARVE_CHUNK numbers each): a batch of many settles writes one or two
// records instead of one per hold. A hold without a number, or of a lease that no longer counts,
// has its own `closed:` record, as a hold does; a lookup reads both.

import type { ActorState } from '../runtime/port';
import type { StateRecords } from '../runtime/state-record';
import { mayHaveEnded, withEnded, type ClosedHold, type EndedCarves, type OpenLease, type ParsedCarved } from './funds-state';

export const CARVED_KEY_PREFIX = 'carved:';
export const CARVE_CHUNK = 32;

/** One ended carve in its chunk: who it was, how it ended, what it held and was charged. */
type Entry = [holdId: string, state: 'settled' | 'released', amount: string, charged: string];
type Chunk = Record<string, Entry>;

const chunkKey = (leaseId: string, carve: number) => `${CARVED_KEY_PREFIX}${leaseId}:${Math.floor(carve / CARVE_CHUNK)}`;

/** Whether any number in [from, to) has ended. */
function anyEndedIn(ended: EndedCarves, from: number, to: number): boolean {
  for (let i = 0; i < ended.length; i += 2) if (ended[i] < to && ended[i + 1] > from) return true;
  return false;
}

export class BatchEndings {
  /** Holds known to be still open: their endings are not read. */
  private readonly open = new Set<string>();
  /** Items that may have ended: both their records are read, side by side, up front. */
  private readonly unsure: ParsedCarved[] = [];

  constructor(
    private readonly state: ActorState,
    private readonly closedHolds: StateRecords<ClosedHold>,
    private readonly leaseId: string,
    lease: OpenLease | undefined,
    metas: readonly ParsedCarved[],
  ) {
    for (const meta of metas) {
      if (lease && !mayHaveEnded(lease.ended, meta.carve)) this.open.add(meta.holdId);
      else this.unsure.push(meta);
    }
    // A hold carried twice, once without its number (never sent so by the gateway): read.
    for (const meta of this.unsure) this.open.delete(meta.holdId);
  }

  /** Reads, side by side, the records of the items that may have ended (then cached for the turn). */
  async preload(): Promise<void> {
    await Promise.all(this.unsure.flatMap((meta) => [
      this.closedHolds.get(meta.holdId),
      ...(meta.carve === undefined ? [] : [this.state.get(chunkKey(this.leaseId, meta.carve))]),
    ]));
  }

  /** How the carved hold ended, if it has (no read for a hold known to be open). */
  async of(meta: ParsedCarved): Promise<ClosedHold | undefined> {
    if (this.open.has(meta.holdId)) return undefined;
    const own = await this.closedHolds.get(meta.holdId);
    if (own || meta.carve === undefined) return own;
    const entry = (await this.state.get<Chunk>(chunkKey(this.leaseId, meta.carve)))?.[meta.carve];
    return entry && entry[0] === meta.holdId ? { state: entry[1], amount: entry[2], charged: entry[3] } : undefined;
  }

  /** Records that a carved hold of the open lease ended by settle or release. */
  async record(lease: OpenLease, meta: ParsedCarved, closed: ClosedHold & { state: Entry[1] }): Promise<void> {
    this.open.delete(meta.holdId);
    if (!lease.ended || meta.carve === undefined) {
      this.closedHolds.set(meta.holdId, closed);
      return;
    }
    const key = chunkKey(this.leaseId, meta.carve);
    const from = meta.carve - (meta.carve % CARVE_CHUNK);
    // No number of the chunk has ended yet: it was never written, nothing to read.
    const chunk = anyEndedIn(lease.ended, from, from + CARVE_CHUNK) ? ((await this.state.get<Chunk>(key)) ?? {}) : {};
    this.state.set(key, { ...chunk, [meta.carve]: [meta.holdId, closed.state, closed.amount, closed.charged] satisfies Entry });
    const counted = withEnded(lease.ended, meta.carve);
    if (counted) lease.ended = counted;
    else delete lease.ended;
  }
}
