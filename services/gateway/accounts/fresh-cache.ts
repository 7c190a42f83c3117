// A cache of store lookups whose every answer is at most `ttlMs` old, counted from when its read
// began: concurrent lookups of one key share one read, an unknown key is cached too (until the
// cache is large: a flood of made-up keys), and expired entries are swept out as the cache grows.
// It bounds how long a revoked key or a suspended account can still be served (docs/auth.md).

const MIN_SWEEP_AT = 1024;
/** Past this many entries, lookups that found nothing are no longer cached. */
const MAX_CACHED = 100_000;

interface Entry<V> {
  value: V | undefined;
  /** When its read began, and when it stops being reused. */
  from: number;
  until: number;
}

export class FreshCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly reading = new Map<string, { started: number; read: Promise<V | undefined> }>();
  /** The size at which expired entries are next swept out (so it holds only recent keys). */
  private sweepAt = MIN_SWEEP_AT;

  /** `ttlMs` 0 reads the store every time. */
  constructor(private readonly ttlMs: number, private readonly now: () => number) {}

  async get(key: string, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const now = this.now();
    const cached = this.entries.get(key);
    // Reused only between its read and its end: a clock stepped back (NTP) would otherwise keep a
    // revoked key's lookup for as long as the step, not for one second.
    if (cached && cached.from <= now && cached.until > now) return cached.value;
    if (cached) this.entries.delete(key);
    const under = this.reading.get(key);
    // Joining a read is as fresh as caching its outcome: it began less than ttlMs ago.
    if (under && under.started <= now && under.started + this.ttlMs > now) return under.read;
    const lookup = { started: now, read: read() };
    this.reading.set(key, lookup);
    try {
      const value = await lookup.read;
      if (this.ttlMs > 0 && (value !== undefined || this.entries.size < MAX_CACHED)) {
        this.entries.set(key, { value, from: now, until: now + this.ttlMs });
        if (this.entries.size >= this.sweepAt) this.sweep(this.now());
      }
      return value;
    } finally {
      if (this.reading.get(key) === lookup) this.reading.delete(key);
    }
  }

  /** Forgets a key this instance has just written, so its own next lookup reads the store. */
  forget(key: string): void {
    this.entries.delete(key);
    this.reading.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops expired entries; amortized: the next sweep waits until the cache has doubled. */
  private sweep(now: number): void {
    for (const [key, entry] of this.entries) if (entry.until <= now || entry.from > now) this.entries.delete(key);
    this.sweepAt = Math.max(MIN_SWEEP_AT, 2 * this.entries.size);
  }
}
