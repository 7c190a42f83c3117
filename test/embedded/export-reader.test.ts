// The embedded host's export reader (services/ledger/row-reader.ts): an export's rows are read in
// a child process, ended past its memory bound and started again for what is left, so that the
// ledger pages an export reads are not mapped into the gateway. What it must show: the export is
// the same bytes however its rows are read (by readers ended after every read, by one, or by the
// gateway itself), a reader that dies mid-read costs no row, and no reader outlives its gateway.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usageEvent, type EventEnvelope } from '../../lib/events';
import { EXPORT_CHUNK_ROWS } from '../../services/ledger/console';
import { embeddedLedgerSeed } from '../support/ledger-seed';
import { fundedAccount } from '../support/api';
import { alive, descendants } from '../support/process-tree';
import { startGateway, type GatewayProcess } from '../support/processes';

jest.setTimeout(120_000);

const EVENTS = 2_600; // two usage rows each: 5,200 rows, six reads of at most 1,000
const READS = Math.ceil((2 * EVENTS) / EXPORT_CHUNK_ROWS);

function events(accountId: string, pool: string): EventEnvelope[] {
  const startMs = Date.now() - EVENTS * 1000;
  return Array.from({ length: EVENTS }, (_, n) => {
    const holdId = `reader-${n.toString().padStart(6, '0')}`;
    return usageEvent(`${holdId}:usage`, startMs + n * 1000, {
      accountId, pool, holdId, requestId: `request-${n}`, model: 'sim-chat', profileId: 'profile-1',
      charged: 700 + n,
      lines: [{ unit: 'TEXT_INPUT', quantity: n, unitPrice: 1, cost: n }, { unit: 'TEXT_OUTPUT', quantity: 7, unitPrice: 100, cost: 700 }],
    });
  });
}

async function exported(gateway: GatewayProcess, apiKey: string, format: 'csv' | 'jsonl'): Promise<string> {
  const response = await fetch(`${gateway.url}/api/distribution/api-credit/usage/export?format=${format}`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(response.status).toBe(200);
  return response.text();
}

async function counter(gateway: GatewayProcess, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${label} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

const readers = (gateway: GatewayProcess) => descendants(gateway.child.pid as number).filter((row) => row.args.includes('row-reader-process'));

describe('the export reader of the embedded host', () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gw-export-reader-')), 'data');
  let apiKey = '';
  let expected: { csv: string; jsonl: string };

  beforeAll(async () => {
    // The reference: every read in the gateway itself (bound 0).
    const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_EXPORT_READER_RSS_MB: '0' });
    try {
      const account = await fundedAccount(gateway.url, 0);
      apiKey = account.apiKey;
      await embeddedLedgerSeed(dataDir)(events(account.accountId, 'pool-3'));
      expected = { csv: await exported(gateway, apiKey, 'csv'), jsonl: await exported(gateway, apiKey, 'jsonl') };
      expect(await counter(gateway, 'payg_export_reads_total', '{where="gateway"}')).toBe(2 * READS);
      expect(await counter(gateway, 'payg_export_readers_started_total')).toBe(0);
    } finally {
      await gateway.stop();
    }
    expect(expected.jsonl.trim().split('\n')).toHaveLength(2 * EVENTS);
    expect(expected.csv.trim().split('\n')).toHaveLength(2 * EVENTS + 1);
  });

  it('when its bound is passed at every read, then each read has a reader of its own, and the exports are the same bytes as read by the gateway', async () => {
    const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_EXPORT_READER_RSS_MB: '1' });
    try {
      expect(await exported(gateway, apiKey, 'csv')).toBe(expected.csv);
      expect(await exported(gateway, apiKey, 'jsonl')).toBe(expected.jsonl);
      expect(await counter(gateway, 'payg_export_reads_total', '{where="reader"}')).toBe(2 * READS);
      expect(await counter(gateway, 'payg_export_reads_total', '{where="gateway"}')).toBe(0);
      expect(await counter(gateway, 'payg_export_readers_started_total')).toBe(2 * READS);
    } finally {
      await gateway.stop();
    }
  });

  it('when the bound is the default, then one reader serves every read, and it is gone once the gateway stops', async () => {
    const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir });
    let pids: number[] = [];
    try {
      expect(await exported(gateway, apiKey, 'csv')).toBe(expected.csv);
      expect(await exported(gateway, apiKey, 'jsonl')).toBe(expected.jsonl);
      expect(await counter(gateway, 'payg_export_readers_started_total')).toBe(1);
      expect(await counter(gateway, 'payg_export_reads_total', '{where="reader"}')).toBe(2 * READS);
      pids = readers(gateway).map((row) => row.pid);
      expect(pids).toHaveLength(1); // idle, kept for the next export
    } finally {
      await gateway.stop();
    }
    expect(pids.filter(alive)).toEqual([]);
  });

  it('when exports run at once, then they share the readers and each is whole', async () => {
    const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_EXPORT_READER_RSS_MB: '60' });
    try {
      const both = await Promise.all([exported(gateway, apiKey, 'csv'), exported(gateway, apiKey, 'jsonl'), exported(gateway, apiKey, 'csv')]);
      expect(both).toEqual([expected.csv, expected.jsonl, expected.csv]);
      // Readers ended past their bound while other exports' reads were under way on them.
      expect(await counter(gateway, 'payg_export_readers_started_total')).toBeGreaterThan(1);
      expect(await counter(gateway, 'payg_export_reads_total', '{where="reader"}')).toBe(3 * READS);
      expect(await counter(gateway, 'payg_export_reads_total', '{where="gateway"}')).toBe(0);
    } finally {
      await gateway.stop();
    }
  });

  it('when the gateway is killed, then its reader ends too', async () => {
    const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir });
    await exported(gateway, apiKey, 'csv');
    const pids = readers(gateway).map((row) => row.pid);
    expect(pids).toHaveLength(1);
    await gateway.kill();
    const until = Date.now() + 10_000;
    while (pids.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(pids.filter(alive)).toEqual([]);
  });

  it('when a reader dies before it answers, then the gateway reads those rows itself and the export is whole', async () => {
    const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_TEST_MODE: 'true', GATEWAY_FAULT_POINTS: 'export-reader-read:once' });
    try {
      expect(await exported(gateway, apiKey, 'csv')).toBe(expected.csv);
      // The first read's reader died; that read and the rest (a minute after a failure) were the gateway's.
      expect(await counter(gateway, 'payg_export_reads_total', '{where="gateway"}')).toBe(READS);
      expect(await counter(gateway, 'payg_export_reads_total', '{where="reader"}')).toBe(0);
      expect(gateway.output()).toContain('an export read its rows in the gateway');
    } finally {
      await gateway.stop();
    }
  });
});
