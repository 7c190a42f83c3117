// Measures the live heap (after forced garbage collection) the embedded actor host keeps per
// hold turn (reserve + settle on one account, as a chat does) and per image task (start, record
// of an artifact of the given size, finish), driving the host directly on a real LMDB.
// Run with --expose-gc (and --no-flush-bytecode, or bytecode V8 drops reads as memory freed):
// `node --expose-gc probe.js <turns> <images> <artifactBytes> <dir>` (each
// batch runs twice; the growth over the second is reported); prints one JSON line. Used by actors/runtime/embedded-host.memory.test.ts.

import { getHeapSpaceStatistics } from 'node:v8';
import { FundsHoldClient } from '../../actors/funds-hold/client';
import { ACTOR_CLASSES } from '../../actors/host/registry';
import { ImageTaskClient } from '../../actors/image-task/client';
import { EmbeddedActorHost } from '../../actors/runtime/embedded-host';
import { openLocalDb } from '../../lib/local-db';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';

const [turns, images, artifactBytes] = process.argv.slice(2, 5).map(Number);
const dir = process.argv[5];
const gc = (globalThis as { gc?: () => void }).gc;

/** The live heap after full collections, compiled code aside (the JIT's work is not data kept). */
async function liveHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return getHeapSpaceStatistics().reduce((sum, space) => (space.space_name.startsWith('code') ? sum : sum + space.space_used_size), 0);
}

async function main(): Promise<void> {
  if (!gc) throw new Error('run with --expose-gc');
  const db = openLocalDb(dir);
  const ledger = new LmdbLedgerStore(db);
  const host = new EmbeddedActorHost({ db, publish: async (event) => void ledger.appendSync(event), deliverInCommit: (events) => void ledger.appendInTransaction(events) });
  for (const cls of ACTOR_CLASSES) host.register(cls);
  await host.start();
  const owner = { accountId: 'acct_probe', apiKeyId: 'key_probe' };
  const funds = new FundsHoldClient(host).of(owner.accountId);
  await funds.credit({ amount: 9_000_000_000_000, reference: 'probe' });
  const tasks = new ImageTaskClient(host);
  const base64 = 'A'.repeat(artifactBytes - (artifactBytes % 4));

  const chat = async (i: number) => {
    const holdId = `hold-${i}`;
    await funds.reserve({ holdId, amount: 1000, ttlMs: 3_600_000, requestId: `req-${i}`, model: 'm', profileId: 'p' });
    await funds.settle({ holdId, lines: [{ unit: 'TEXT_OUTPUT', quantity: 10, unitPrice: 7 }] });
  };
  const image = async (i: number) => {
    const task = tasks.of(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    await task.start({
      owner, fingerprint: `f${i}`, requestId: `img-${i}`, startId: `start-${i}`, model: 'sim-image', profileId: 'p', price: 40, deadlineMs: 60_000, holdTtlMs: 120_000,
      call: { provider: 'sim', upstreamModel: 'm', prompt: 'a red square', responseFormat: 'b64_json', passthrough: {} },
    });
    // A copy per image, as each one arrives in its own response body.
    await task.record({ kind: 'succeeded', artifact: { b64Json: (base64 + ' ').slice(0, base64.length), created: i }, via: 'response' });
    const view = await task.finish({});
    if (view.artifact?.b64Json?.length !== base64.length) throw new Error(`image ${i} has no artifact`);
  };

  for (let i = 0; i < 3000; i++) await chat(-1 - i); // warm-up
  for (let i = 0; i < 10; i++) await image(1_000_000 + i);
  // Growth is measured between two like batches, so that what is allocated once (pools, the
  // JIT's feedback, the last image string staying referenced for a while) does not count as kept
  // per call.
  for (let i = 0; i < turns; i++) await chat(i);
  const turnsFrom = await liveHeap();
  for (let i = turns; i < 2 * turns; i++) await chat(i);
  const turnsTo = await liveHeap();
  for (let i = 0; i < images; i++) await image(i);
  const imagesFrom = await liveHeap();
  for (let i = images; i < 2 * images; i++) await image(i);
  const imagesTo = await liveHeap();
  console.log(JSON.stringify({
    bytesPerTurn: (turnsTo - turnsFrom) / Math.max(1, turns),
    bytesPerImage: (imagesTo - imagesFrom) / Math.max(1, images),
  }));
  await host.close();
  await db.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
