import type { ActorState } from '../runtime/port';
import { StateRecords } from '../runtime/state-record';
import { BatchEndings, CARVE_CHUNK } from './carve-endings';
import { CLOSED_KEY_PREFIX, type ClosedHold, type OpenLease, type ParsedCarved } from './funds-state';

/** An actor state over a map, counting the reads that reach it (`reads`: cached ones) and noting each write's `keep`. */
function mapState() {
  const store = new Map<string, unknown>();
  const reads: string[] = [];
  const uncachedReads: string[] = [];
  const keeps = new Map<string, boolean | undefined>();
  const state: ActorState = {
    get: async <T>(key: string) => {
      reads.push(key);
      return store.get(key) as T | undefined;
    },
    getUncached: async <T>(key: string) => {
      uncachedReads.push(key);
      return store.get(key) as T | undefined;
    },
    set: (key, value, options) => {
      store.set(key, value);
      keeps.set(key, options?.keep);
    },
    remove: (key) => void store.delete(key),
  };
  return { state, store, reads, uncachedReads, keeps, closed: new StateRecords<ClosedHold>(state, CLOSED_KEY_PREFIX) };
}

const lease = (): OpenLease => ({ amount: '100000', charged: '0', expiresAt: 0, progress: {}, ended: [] });
const meta = (carve: number | undefined, holdId = `h${carve}`): ParsedCarved => ({ holdId, amount: 100n, requestId: 'r', model: 'm', profileId: 'p', ...(carve === undefined ? {} : { carve }) });
const settled = { state: 'settled' as const, amount: '100', charged: '40' };

describe('the endings of a lease batch', () => {
  it('when a lease counts its carves, then endings go to one record per chunk of numbers, a hold known open is never read, and each ending is found again by its number', async () => {
    const { state, store, reads, uncachedReads, keeps, closed } = mapState();
    const open = lease();
    const metas = Array.from({ length: CARVE_CHUNK + 8 }, (_, i) => meta(i));
    const batch = new BatchEndings(state, closed, 'L', open, metas);
    await batch.preload();
    for (const m of metas) expect(await batch.of(m)).toBeUndefined();
    expect([...reads, ...uncachedReads]).toEqual([]);
    for (const m of metas) await batch.record(open, m, settled);
    // A chunk is never read for its first ending, and a batch reads it at most once.
    expect([...reads, ...uncachedReads]).toEqual([]);
    expect([...store.keys()].sort()).toEqual(['carved:L:0', 'carved:L:1']);
    expect(open.ended).toEqual([0, CARVE_CHUNK + 8]);
    // The full chunk leaves the activation's cache; the one still filling stays there...
    expect(keeps).toEqual(new Map([['carved:L:0', false], ['carved:L:1', true]]));
    // ...and the next batch reads it through the cache, once, for its two endings.
    const next = [meta(CARVE_CHUNK + 8), meta(CARVE_CHUNK + 9)];
    const following = new BatchEndings(state, closed, 'L', open, next);
    for (const m of next) await following.record(open, m, settled);
    expect(reads).toEqual(['carved:L:1']);
    // A retried batch (a fresh turn): every item may have ended, each is found in its chunk,
    // read once each and not kept in the cache (a lookup of an old chunk is rare).
    const again = new BatchEndings(state, closed, 'L', open, metas);
    await again.preload();
    for (const m of metas) expect(await again.of(m)).toEqual(settled);
    expect(uncachedReads.filter((key) => key.startsWith('carved:')).sort()).toEqual(['carved:L:0', 'carved:L:1']);
    // Another hold claiming an ended number is not taken for it.
    expect(await again.of(meta(3, 'someone-else'))).toBeUndefined();
  });

  it('when an item has no number, or the lease has ended (no counting), then its own closed record is used, as a hold has', async () => {
    const { state, store, closed } = mapState();
    const open = lease();
    const plain = meta(undefined, 'plain');
    const batch = new BatchEndings(state, closed, 'L', open, [plain]);
    await batch.record(open, plain, settled);
    expect([...store.keys()]).toEqual([`${CLOSED_KEY_PREFIX}plain`]);
    expect(await new BatchEndings(state, closed, 'L', undefined, [plain]).of(plain)).toEqual(settled);
    const uncounted = { ...lease(), ended: undefined };
    await new BatchEndings(state, closed, 'L', uncounted, [meta(5)]).record(uncounted, meta(5), settled);
    expect(store.has(`${CLOSED_KEY_PREFIX}h5`)).toBe(true);
  });

  it('when a chunk was stored as an object of entries (the first layout), then its endings are still found, and its next ending turns it into lines that keep them', async () => {
    const { state, store, closed } = mapState();
    const open = { ...lease(), ended: [0, 2] };
    store.set('carved:L:0', { 0: ['h0', 'settled', '100', '40'], 1: ['h1', 'released', '100', '0'] });
    const batch = new BatchEndings(state, closed, 'L', open, [meta(0), meta(1), meta(2)]);
    await batch.preload();
    expect(await batch.of(meta(0))).toEqual(settled);
    expect(await batch.of(meta(1))).toEqual({ state: 'released', amount: '100', charged: '0' });
    expect(await batch.of(meta(1, 'someone-else'))).toBeUndefined();
    await batch.record(open, meta(2), settled);
    expect(store.get('carved:L:0')).toBe('[0,"h0","settled","100","40"]\n[1,"h1","released","100","0"]\n[2,"h2","settled","100","40"]');
    const again = new BatchEndings(state, closed, 'L', open, [meta(0), meta(1), meta(2)]);
    await again.preload();
    for (const m of [meta(0), meta(2)]) expect(await again.of(m)).toEqual(settled);
    expect(await again.of(meta(1))).toEqual({ state: 'released', amount: '100', charged: '0' });
  });

  it('when a hold id holds a line break, a quote or the opening of another line, or two holds claim one number, then each ending is found for its own hold only', async () => {
    const { state, closed } = mapState();
    const open = lease();
    const odd = [meta(1, 'a\n[2,"b"'), meta(2, 'b'), meta(12, '[1,"x"]'), meta(21, '\\"'), meta(2, 'second')];
    const batch = new BatchEndings(state, closed, 'L', open, odd);
    for (const [i, m] of odd.entries()) await batch.record(open, m, { state: 'settled', amount: '100', charged: String(i) });
    const again = new BatchEndings(state, closed, 'L', open, odd);
    await again.preload();
    for (const [i, m] of odd.entries()) expect(await again.of(m)).toEqual({ state: 'settled', amount: '100', charged: String(i) });
    expect(await again.of(meta(1, 'b'))).toBeUndefined();
    expect(await again.of(meta(3, 'b'))).toBeUndefined();
  });
});
