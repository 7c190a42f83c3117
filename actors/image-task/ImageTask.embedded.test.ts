// The ImageTask contract on the embedded host, with a real local database, the real FundsHold
// and ledger beside it, and a real restart (host and database closed and opened again).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { imageTaskContract } from '../../test/contract/image-task.contract';
import { ACTOR_CLASSES } from '../host/registry';
import { EmbeddedActorHost } from '../runtime/embedded-host';

jest.setTimeout(30_000);

imageTaskContract('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'image-task-'));
  let db: LocalDb;
  let host: EmbeddedActorHost;
  let ledger: LmdbLedgerStore;
  const open = async () => {
    db = openLocalDb(dir);
    ledger = new LmdbLedgerStore(db);
    const deliver = (event: Parameters<LmdbLedgerStore['appendSync']>[0]) => void ledger.appendSync(event);
    host = new EmbeddedActorHost({ db, publish: async (event) => deliver(event), deliverInCommit: deliver });
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
    ledger: (accountId) => ledger.account(accountId, 'pool-3'),
    ledgerHas: (eventId) => ledger.has(eventId),
    close: async () => {
      await host.close();
      await db.close();
    },
  };
}, { deadlineMs: 1000 });
