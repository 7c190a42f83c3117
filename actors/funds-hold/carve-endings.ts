// How a lease batch knows and records the endings of its carved holds (docs/money.md, "Funds
// leases"). Each carved hold is numbered in its lease (CarvedHold.carve) and the lease counts the
// numbers that have ended (funds-state.ts, EndedCarves), so a hold the lease knows as still open
// needs no read. While the lease counts, an ending is recorded in the lease's chunk of its number
// (`carved:<leaseId>:<n>`, CARVE_CHUNK numbers each): a batch of many settles writes one or two
// records instead of one per hold. A hold without a number, or of a lease that no longer counts,
// has its own `closed:` record, as a hold does; a lookup reads both.
//
// A chunk is stored as text, one JSON line per ending (`[n,"holdId","settled","amount","charged"]`):
// recording an ending appends a line, where an object of entries would be copied whole and
// encoded again entry by entry (at one ending per batch, each settle paid for all the chunk's
// earlier ones). Chunks stored as such an object (the first layout) are still read, and become
// text at their next ending.

import type { ActorState } from '../runtime/port';
import type { StateRecords } from '../runtime/state-record';
import { mayHaveEnded, withEnded, type ClosedHold, type EndedCarves, type OpenLease, type ParsedCarved } from './funds-state';

export const CARVED_KEY_PREFIX = 'carved:';
export const CARVE_CHUNK = 32;

/** One ended carve in its chunk: who it was, how it ended, what it held and was charged. */
type Entry = [holdId: string, state: 'settled' | 'released', amount: string, charged: string];
/** A chunk's line: the carve's number, then its entry. */
type Line = [carve: number, ...entry: Entry];
/** A chunk as stored: lines of JSON (Line), or (the first layout) an object of entries by number. */
type Chunk = string | Record<string, Entry>;

/** The entry of a number and hold in a chunk, in either layout. */
function entryIn(chunk: Chunk | undefined, carve: number, holdId: string): Entry | undefined {
  if (chunk === undefined) return undefined;
  if (typeof chunk !== 'string') return chunk[carve]?.[0] === holdId ? chunk[carve] : undefined;
  // JSON escapes line breaks inside strings: each line is one ending, found by its opening (a
  // number claimed by two holds, which the gateway never sends, has a line for each).
  const opening = `[${carve},`;
  for (let at = chunk.startsWith(opening) ? 0 : chunk.indexOf(`\n${opening}`); at !== -1; at = chunk.indexOf(`\n${opening}`, at + 1)) {
    const start = chunk[at] === '\n' ? at + 1 : at;
    const end = chunk.indexOf('\n', start);
    const [, ...entry] = JSON.parse(end === -1 ? chunk.slice(start) : chunk.slice(start, end)) as Line;
    if (entry[0] === holdId) return entry;
  }
  return undefined;
}

/** The chunk with one more ending (a first-layout chunk becomes lines). */
function withLine(chunk: Chunk | undefined, line: Line): string {
  const text = JSON.stringify(line);
  if (chunk === undefined || chunk === '') return text;
  const earlier = typeof chunk === 'string' ? chunk : Object.entries(chunk).map(([carve, entry]) => JSON.stringify([Number(carve), ...entry])).join('\n');
  return earlier === '' ? text : `${earlier}\n${text}`;
}

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
    const entry = entryIn(await this.state.get<Chunk>(chunkKey(this.leaseId, meta.carve)), meta.carve, meta.holdId);
    return entry ? { state: entry[1], amount: entry[2], charged: entry[3] } : undefined;
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
    const chunk = anyEndedIn(lease.ended, from, from + CARVE_CHUNK) ? await this.state.get<Chunk>(key) : undefined;
    this.state.set(key, withLine(chunk, [meta.carve, meta.holdId, closed.state, closed.amount, closed.charged]));
    const counted = withEnded(lease.ended, meta.carve);
    if (counted) lease.ended = counted;
    else delete lease.ended;
  }
}
