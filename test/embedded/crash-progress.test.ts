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
import { follow, newSession, runEnded, startRun } from '../support/sessions';
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
    GATEWAY_SESSION_RUN_LEASE_MS: '1500',
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
    // (Or, with GATEWAY_FUNDS_LEASE=on, every lease it held: leased funds count as locked too.)
    for (const { apiKey } of outcomes) await eventually(() => balance(gateway!.url, apiKey), (b) => b.held + (b.leased ?? 0) === 0, 60_000);

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

  it('when the gateway carrying a session run is killed, then its lease charges the output recorded as appended, never more than readers saw', async () => {
    await gateway?.stop();
    gateway = await startGateway(env, gateway?.port);
    const { accountId, apiKey } = await fundedAccount(gateway.url, FUNDS);
    const sessionId = await newSession(gateway.url, apiKey);
    const accepted = await startRun(gateway.url, apiKey, sessionId, { model: 'sim-chat', messages: [{ role: 'user', content: 'count' }], max_tokens: 4000 }, { 'x-sim-directive': 'tokens=3000; stream-delay=2' });
    expect(accepted.status).toBe(202);
    await follow(gateway.url, apiKey, sessionId, { until: (events) => events.filter((e) => e.event === 'run.delta').length >= 20 });
    await new Promise((r) => setTimeout(r, 1500));
    await gateway.kill();
    gateway = await startGateway(env, gateway.port);
    const { events } = await follow(gateway.url, apiKey, sessionId, { until: runEnded(accepted.body.run_id), timeoutMs: 60_000 });
    const seen = (events.filter((e) => e.event === 'run.delta').map((e) => e.data.delta).join('').match(/tok\d+/g) ?? []).length;
    const failed = events.at(-1)!;
    expect(failed).toMatchObject({ event: 'run.failed', data: { code: 'run_lease_expired' } });
    db ??= openLocalDb(env.GATEWAY_DATA_DIR);
    const ledger = new LmdbLedgerStore(db);
    const rows = (await ledger.rows('usage', accountId, 'pool-3', 1, await ledger.count('usage', accountId, 'pool-3'))) as UsageRow[];
    const chargedTokens = rows.filter((r) => r.unit === 'TEXT_OUTPUT').reduce((sum, r) => sum + r.quantity, 0);
    console.info(`session run killed: ${seen} output tokens appended, ${chargedTokens} charged`);
    expect(chargedTokens).toBeGreaterThan(0);
    expect(chargedTokens).toBeLessThanOrEqual(seen);
    expect(chargedTokens / seen).toBeGreaterThanOrEqual(0.9);
    expect(failed.data.charged).toBe(rows.reduce((sum, r) => sum + r.charged, 0));
    expect(await balance(gateway.url, apiKey)).toMatchObject({ balance: FUNDS - failed.data.charged, held: 0 });
  });
});
