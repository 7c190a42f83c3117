// The FundsHold contract on the embedded host, with a real local database and a real restart
// (the host and the database are closed and opened again on the same directory).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fundsHoldContract } from '../../test/contract/funds-hold.contract';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { ACTOR_CLASSES } from '../host/registry';
import { EmbeddedActorHost } from '../runtime/embedded-host';

fundsHoldContract('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'funds-'));
  let db: LocalDb;
  let host: EmbeddedActorHost;
  let ledger: LmdbLedgerStore;
  const open = async () => {
    db = openLocalDb(dir);
    ledger = new LmdbLedgerStore(db);
    host = new EmbeddedActorHost({ db, publish: async (event) => void ledger.appendSync(event) });
    for (const cls of ACTOR_CLASSES) host.register(cls);
    await host.start();
    return host;
  };
  await open();
  return {
    get invoker() {
      return host;
    },
    restart: async () => {
      await host.close();
      await db.close();
      return open();
    },
    ledgerBalance: async (accountId) => (await ledger.account(accountId, 'pool-3')).balance,
    close: async () => {
      await host.close();
      await db.close();
    },
  };
});
