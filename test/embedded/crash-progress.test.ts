// kill -9 of the embedded gateway in the middle of streams, several rounds: every stream records
// what it delivered on its hold as it goes, so the holds its crash leaves behind expire charging
// what was delivered up to the last record. Across the rounds at least 95% of the output tokens
// clients received are charged, and no stream is charged more than its client received.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalDb, type LocalDb } from '../../lib/local-db';
import type { UsageRow } from '../../services/ledger/entries';
import { LmdbLedgerStore } from '../../services/ledger/lmdb-store';
import { balance, fundedAccount } from '../support/api';
import { eventually } from '../support/eventually';
import { startGateway, type GatewayProcess } from '../support/processes';
import { startClientStream, type ClientStream } from '../support/streams';

jest.setTimeout(300_000);

const ROUNDS = 3;
const STREAMS = 8;
const FUNDS = 100_000_000;
const OUTPUT_PRICE = 400;

describe('kill -9 of the embedded gateway mid-stream', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-crash-progress-'));
  const env = {
    GATEWAY_DATA_DIR: join(dir, 'data'),
    GATEWAY_TEST_MODE: 'true',
    // Holds that expire seconds after their gateway died.
    GATEWAY_PROVIDER_TIMEOUT_MS: '8000',
    GATEWAY_HOLD_TTL_MS: '9000',
    GATEWAY_HOLD_PROGRESS_TOKENS: '32',
    GATEWAY_HOLD_PROGRESS_MS: '250',
  };
  let gateway: GatewayProcess | undefined;
  let db: LocalDb | undefined;

  afterAll(async () => {
    await gateway?.stop();
    await db?.close();
  });

  it('when the gateway is killed at a random moment, then at least 95% of the tokens delivered are charged and never more', async () => {
    const outcomes: { accountId: string; apiKey: string; stream: ClientStream }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      gateway = await startGateway(env, gateway?.port);
      const accounts = await Promise.all(Array.from({ length: STREAMS }, () => fundedAccount(gateway!.url, FUNDS)));
      const streams = accounts.map(({ apiKey }, i) => startClientStream(gateway!.url, apiKey, `tokens=${3000 + i * 100};stream-delay=2`, 4000));
      // Under load: the streams are running when the kill comes, at a random moment.
      await eventually(async () => streams.every((s) => s.received() > 0), Boolean, 30_000);
      await new Promise((r) => setTimeout(r, 1500 + Math.random() * 2000));
      await gateway.kill();
      await Promise.all(streams.map((s) => s.ended));
      streams.forEach((stream, i) => outcomes.push({ ...accounts[i], stream }));
    }
    gateway = await startGateway(env, gateway?.port);
    // Every hold the crashes left open expires (9 s after its last record).
    for (const { apiKey } of outcomes) await eventually(() => balance(gateway!.url, apiKey), (b) => b.held === 0, 60_000);

    db = openLocalDb(env.GATEWAY_DATA_DIR);
    const ledger = new LmdbLedgerStore(db);
    let received = 0;
    let charged = 0;
    for (const { accountId, apiKey, stream } of outcomes) {
      expect(stream.done()).toBe(false);
      const rows = (await ledger.rows('usage', accountId, 'pool-3', 1, await ledger.count('usage', accountId, 'pool-3'))) as UsageRow[];
      const output = rows.filter((r) => r.unit === 'TEXT_OUTPUT' && r.charged > 0);
      const chargedTokens = output.reduce((sum, r) => sum + r.quantity, 0);
      // Never more than the client received; what was charged is what the balance lost.
      expect(chargedTokens).toBeLessThanOrEqual(stream.received());
      const money = rows.reduce((sum, r) => sum + r.charged, 0);
      expect(await balance(gateway.url, apiKey)).toMatchObject({ balance: FUNDS - money, held: 0 });
      expect((await ledger.account(accountId, 'pool-3')).balance).toBe(FUNDS - money);
      expect(output.every((r) => r.unitPrice === OUTPUT_PRICE)).toBe(true);
      received += stream.received();
      charged += chargedTokens;
    }
    console.info(`kill -9 rounds: ${received} output tokens received, ${charged} charged (${((100 * charged) / received).toFixed(1)}%)`);
    expect(received).toBeGreaterThan(0);
    expect(charged / received).toBeGreaterThanOrEqual(0.95);
  });
});
