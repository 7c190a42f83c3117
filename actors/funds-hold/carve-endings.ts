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

/** Whether every number in [from, to) has ended (the ranges are disjoint and merged: one holds them all). */
function allEndedIn(ended: EndedCarves, from: number, to: number): boolean {
  for (let i = 0; i < ended.length; i += 2) if (ended[i] <= from && ended[i + 1] >= to) return true;
  return false;
}

export class BatchEndings {
  /** Holds known to be still open: their endings are not read. */
  private readonly open = new Set<string>();
  /**
   * The chunks this batch has read or written, by key. Only the chunk a lease is filling stays in
   * the activation's cache (its next ending reads it): one whose numbers have all ended leaves it,
   * and one read to look an item up is not kept, so memory holds no chunk per 32 calls.
   */
  private readonly chunks = new Map<string, Promise<Chunk | undefined>>();
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

  /** Reads, side by side, the records of the items that may have ended (then known for the batch). */
  async preload(): Promise<void> {
    await Promise.all(this.unsure.flatMap((meta) => [
      this.closedHolds.get(meta.holdId),
      ...(meta.carve === undefined ? [] : [this.chunk(chunkKey(this.leaseId, meta.carve))]),
    ]));
  }

  /** How the carved hold ended, if it has (no read for a hold known to be open). */
  async of(meta: ParsedCarved): Promise<ClosedHold | undefined> {
    if (this.open.has(meta.holdId)) return undefined;
    const own = await this.closedHolds.get(meta.holdId);
    if (own || meta.carve === undefined) return own;
    const entry = entryIn(await this.chunk(chunkKey(this.leaseId, meta.carve)), meta.carve, meta.holdId);
    return entry ? { state: entry[1], amount: entry[2], charged: entry[3] } : undefined;
  }

  /** A chunk as this batch knows it: read once (from the cache when it holds it; not kept there). */
  private chunk(key: string): Promise<Chunk | undefined> {
    let chunk = this.chunks.get(key);
    if (!chunk) this.chunks.set(key, (chunk = this.state.getUncached<Chunk>(key)));
    return chunk;
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
    // No number of the chunk has ended yet: it was never written, nothing to read. The chunk being
    // filled is read through the activation's cache (kept there below).
    const chunk = !anyEndedIn(lease.ended, from, from + CARVE_CHUNK) ? undefined : await (this.chunks.get(key) ?? this.state.get<Chunk>(key));
    const text = withLine(chunk, [meta.carve, meta.holdId, closed.state, closed.amount, closed.charged]);
    const counted = withEnded(lease.ended, meta.carve);
    // Kept while numbers of it may still end (its next ending reads it: on Dapr a round trip to the
    // store when not cached); once all have, or the lease stops counting, it leaves the cache.
    this.state.set(key, text, { keep: counted !== undefined && !allEndedIn(counted, from, from + CARVE_CHUNK) });
    this.chunks.set(key, Promise.resolve(text));
    if (counted) lease.ended = counted;
    else delete lease.ended;
  }
}
