// Objects made once per key and kept for reuse, at most `max` of them: past that the lot is
// dropped and each is made again when next asked for. For objects that hold nothing but what
// their key names (an actor's proxy, an account's funds source), which the request path would
// otherwise make on every call: under load that making was 3 % of the embedded gateway's CPU
// per chat (docs/benchmarks.md, 2026-11-27, night). Dropping the lot (no LRU order) keeps a
// hit to one Map lookup; a miss costs what every call cost before.

export class Kept<V> {
  private readonly values = new Map<string, V>();

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`Kept: max must be a positive integer, not ${max}`);
  }

  /** The value kept for `key`, made (and kept) now if there is none. */
  get(key: string, make: () => V): V {
    const kept = this.values.get(key);
    if (kept !== undefined) return kept;
    if (this.values.size >= this.max) this.values.clear();
    const made = make();
    this.values.set(key, made);
    return made;
  }

  get size(): number {
    return this.values.size;
  }
}
