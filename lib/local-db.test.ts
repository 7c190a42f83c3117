// What the local database reports as a write it failed itself. A real refused write (a file size
// limit, a full disk) leaves lmdb-js's memory unsound, so it is shown on a gateway process of its
// own: test/embedded/disk-refused.test.ts. Here: what must not be reported, and that writes still work.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDatabaseFailure, openLocalDb, type LocalDb } from './local-db';

/** Cannot be stored: encoding it throws. */
class Unstorable {
  toJSON(): never {
    throw new Error('cannot be encoded');
  }
}

describe('the local database', () => {
  it('tells a failure of its own (lmdb-js: a numeric errno or LMDB code) from other errors', () => {
    expect(isDatabaseFailure(Object.assign(new Error('File too large'), { code: 27 }))).toBe(true);
    expect(isDatabaseFailure(Object.assign(new Error('MDB_MAP_FULL'), { code: -30792 }))).toBe(true);
    expect(isDatabaseFailure(Object.assign(new Error('no space'), { code: 'ENOSPC' }))).toBe(false);
    expect(isDatabaseFailure(new Error('a turn refused'))).toBe(false);
    expect(isDatabaseFailure({ code: 28 })).toBe(false);
  });

  describe('with onWriteFailure', () => {
    let db: LocalDb;
    const reported: Error[] = [];
    beforeEach(() => {
      reported.length = 0;
      db = openLocalDb(join(mkdtempSync(join(tmpdir(), 'local-db-')), 'data'), { onWriteFailure: (error) => reported.push(error) });
    });
    afterEach(() => db.close());

    it('when a transaction’s own callback throws, then the error goes through as it is and nothing is reported', () => {
      const own = new Error('the turn refused');
      expect(() => db.root.transactionSync(() => {
        db.ledger.putSync('a', 1);
        throw own;
      })).toThrow(own);
      expect(db.ledger.get('a')).toBeUndefined();
      expect(reported).toEqual([]);
    });

    it('when a value cannot be encoded, then the write fails and nothing is reported', () => {
      expect(() => db.actorState.putSync('x', new Unstorable())).toThrow('cannot be encoded');
      expect(() => db.root.transactionSync(() => db.outbox.putSync('x', new Unstorable()))).toThrow('cannot be encoded');
      expect(reported).toEqual([]);
    });

    it('then a putSync or removeSync outside a transaction runs in its database’s transactionSync (what is watched), once, and one inside runs in none of its own', () => {
      const opened: string[] = [];
      for (const [name, each] of [['root', db.root], ['accounts', db.accounts]] as const) {
        const watched = each.transactionSync.bind(each) as (...args: unknown[]) => unknown;
        (each as unknown as { transactionSync: (...args: unknown[]) => unknown }).transactionSync = (...args) => {
          opened.push(name);
          return watched(...args);
        };
      }
      db.accounts.putSync('a', 1);
      db.accounts.removeSync('a');
      db.root.putSync('b', 2);
      expect(opened).toEqual(['accounts', 'accounts', 'root']);
      opened.length = 0;
      db.root.transactionSync(() => db.accounts.putSync('c', 3));
      expect(opened).toEqual(['root']);
    });

    it('then every way of writing still writes, and answers as it did', () => {
      db.root.transactionSync(() => {
        expect(db.actorState.putSync('a', { n: 1 })).toBe(true);
        expect(db.reminders.putSync('b', 2)).toBe(true);
        expect(db.ledger.removeSync('absent')).toBe(false);
      });
      expect(db.outbox.putSync('c', 'three')).toBe(true);
      expect(db.accounts.putSync('d', 4)).toBe(true);
      expect(db.root.transactionSync(() => db.outbox.removeSync('c'))).toBe(true);
      expect([db.actorState.get('a'), db.reminders.get('b'), db.outbox.get('c'), db.accounts.get('d')]).toEqual([{ n: 1 }, 2, undefined, 4]);
      expect(reported).toEqual([]);
    });
  });
});
