// Benchmark of the console export: seeds one account's ledger with many rows, written straight
// into the store the deployment uses (the store's own append, in batches: LMDB transactions of
// many events embedded, pipelined script calls to Redis on Dapr), then streams the export over
// HTTP from the gateway and reports rows/s and the peak memory of the processes that carry it.
//   npm run bench:export                  # embedded host
//   npm run bench:export -- --dapr        # also the Dapr topology
//   npm run bench:export -- --browser     # also the web console's export button, in Chromium
// Options: --rows N (default 1,000,000), --kind usage|bills (default usage), --format csv|jsonl
// (default csv), --json.
//
// --browser (embedded host): the same export saved by the console's button in Debian's chromium
// (headless, through playwright-core), and the peak memory of each of the browser's processes
// while it is saved (sampled every 50 ms; a process started during the export counts from its
// start), beside the largest and the sum of them.
//
// Peak memory: the kernel's high-water mark of each process's resident set (VmHWM), reset just
// before the export (clear_refs), so it is the peak while exporting; with the peaks of its parts
// sampled every 50 ms: anonymous memory (heap, buffers) and file-backed pages (on the embedded
// host, LMDB's memory map of the ledger: page cache the kernel can drop, not process memory).
// Embedded, the rows are read by the gateway's export readers (child processes, each ended past
// its bound: services/ledger/row-reader.ts): how many ran, and the largest peak among them.

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usageEvent, billingEvent, type EventEnvelope } from '../lib/events';
import { openLocalDb } from '../lib/local-db';
import { LmdbLedgerStore } from '../services/ledger/lmdb-store';
import { RedisLedgerStore } from '../services/ledger/redis-store';
import { fundedAccount } from '../test/support/api';
import { ADMIN_TOKEN, startGateway } from '../test/support/processes';
import { startTopology } from '../topology/topology';
import { launchChromium, watchedPage } from '../test/support/browser';
import { descendants } from '../test/support/process-tree';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const ROWS = Number(option('rows', '1000000'));
const KIND = option('kind', 'usage') as 'usage' | 'bills';
const FORMAT = option('format', 'csv') as 'csv' | 'jsonl';
const BATCH_EVENTS = 5000;
if (!Number.isSafeInteger(ROWS) || ROWS < 2 || !['usage', 'bills'].includes(KIND) || !['csv', 'jsonl'].includes(FORMAT)) {
  console.error('usage: export-bench [--rows N] [--kind usage|bills] [--format csv|jsonl] [--dapr] [--json]');
  process.exit(2);
}
/** Usage: two rows (input, output lines) per event. Bills: one row per event. */
const ROWS_PER_EVENT = KIND === 'usage' ? 2 : 1;
const EVENTS = Math.ceil(ROWS / ROWS_PER_EVENT);

/** Event n of the seeded account: a chat's usage, or a released hold (balance-neutral either way). */
function seededEvent(accountId: string, n: number, startMs: number): EventEnvelope {
  const holdId = `bench-${n.toString().padStart(9, '0')}-5f0c3e1a-9b7d-4d2e-8c61-3a4b5c6d7e8f`;
  const common = { accountId, pool: 'pool-3', holdId, requestId: `0f3c2b1a-8d7e-4f6a-9b5c-${n.toString().padStart(12, '0')}`, model: 'sim-chat', profileId: '6f1f8a52-3c1e-4c8e-9a55-1d2a7b0c9e01' };
  const at = startMs + n;
  if (KIND === 'bills') return billingEvent(`${holdId}:release`, at, { ...common, kind: 'release', balanceDelta: 0, amount: 12_500, reference: 'expired' });
  return usageEvent(`${holdId}:usage`, at, {
    ...common,
    charged: 7200,
    lines: [{ unit: 'TEXT_INPUT', quantity: 8, unitPrice: 100, cost: 800 }, { unit: 'TEXT_OUTPUT', quantity: 16, unitPrice: 400, cost: 6400 }],
  });
}

async function seed(accountId: string, appendBatch: (events: EventEnvelope[]) => Promise<void>): Promise<number> {
  const started = performance.now();
  const startMs = Date.now() - EVENTS;
  for (let first = 0; first < EVENTS; first += BATCH_EVENTS) {
    const events: EventEnvelope[] = [];
    for (let n = first; n < Math.min(EVENTS, first + BATCH_EVENTS); n++) events.push(seededEvent(accountId, n, startMs));
    await appendBatch(events);
  }
  return (performance.now() - started) / 1000;
}

interface MemoryFigures {
  /** Resident set when the export began, MB. */
  startRssMb: number;
  /** Anonymous memory (heap, buffers) just before the export. */
  startAnonMb: number;
  /** Peak resident set while exporting (VmHWM after a reset), MB. */
  peakRssMb: number;
  /** Peaks sampled every 50 ms, MB. */
  peakAnonMb: number;
  peakFileMb: number;
  /** Whether the high-water mark could be reset before the export (else it covers the whole life). */
  resetBeforeExport: boolean;
}

function status(pid: number): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const match = /^(\w+):\s+(\d+) kB$/.exec(line);
    if (match) fields[match[1]] = Number(match[2]);
  }
  return fields;
}

/** The gateway's export readers (services/ledger/row-reader.ts): child processes, each short-lived. */
interface ReaderFigures {
  /** How many ran during the export. */
  processes: number;
  /** The largest peak resident set among them (VmHWM, sampled every 50 ms until it ended), MB. */
  peakRssMb: number;
  peakAnonMb: number;
  peakFileMb: number;
}

/** kB (as /proc states them) in MB, to one decimal. */
const mb = (kb: number) => Math.round(kb / 102.4) / 10;

function readable(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Samples the export readers below `parent` every 50 ms. */
function watchReaders(parent: number): { stop(): ReaderFigures } {
  const seen = new Map<number, { hwm: number; anon: number; file: number }>();
  const sample = () => {
    for (const pid of (readable(`/proc/${parent}/task/${parent}/children`) ?? '').trim().split(/\s+/).filter(Boolean).map(Number)) {
      if (!seen.has(pid) && !(readable(`/proc/${pid}/cmdline`) ?? '').includes('row-reader-process')) continue;
      let s: Record<string, number>;
      try {
        s = status(pid);
      } catch {
        continue; // ended since listed
      }
      const peak = seen.get(pid) ?? { hwm: 0, anon: 0, file: 0 };
      seen.set(pid, { hwm: Math.max(peak.hwm, s.VmHWM ?? 0), anon: Math.max(peak.anon, s.RssAnon ?? 0), file: Math.max(peak.file, s.RssFile ?? 0) });
    }
  };
  sample();
  const timer = setInterval(sample, 50);
  const largest = (field: 'hwm' | 'anon' | 'file') => mb(Math.max(0, ...[...seen.values()].map((peak) => peak[field])));
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { processes: seen.size, peakRssMb: largest('hwm'), peakAnonMb: largest('anon'), peakFileMb: largest('file') };
    },
  };
}

/** Watches processes' memory from now on; stop() answers the figures. */
function watchMemory(pids: Record<string, number>): { stop(): Record<string, MemoryFigures> } {
  const reset: Record<string, boolean> = {};
  const peaks: Record<string, { anon: number; file: number }> = {};
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, status(pid)]));
  for (const [name, pid] of Object.entries(pids)) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      reset[name] = true;
    } catch {
      reset[name] = false;
    }
    peaks[name] = { anon: 0, file: 0 };
  }
  const sample = () => {
    for (const [name, pid] of Object.entries(pids)) {
      const s = status(pid);
      peaks[name].anon = Math.max(peaks[name].anon, s.RssAnon ?? 0);
      peaks[name].file = Math.max(peaks[name].file, s.RssFile ?? 0);
    }
  };
  sample();
  const timer = setInterval(sample, 50);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, {
        startRssMb: mb(before[name].VmRSS ?? 0), startAnonMb: mb(before[name].RssAnon ?? 0), peakRssMb: mb(status(pid).VmHWM ?? 0), peakAnonMb: mb(peaks[name].anon), peakFileMb: mb(peaks[name].file), resetBeforeExport: reset[name],
      }]));
    },
  };
}

/** Streams the export, counting bytes and lines as they pass; nothing is kept. */
async function streamExport(url: string, apiKey: string): Promise<{ rows: number; bytes: number; seconds: number }> {
  const started = performance.now();
  const response = await fetch(`${url}/api/distribution/api-credit/${KIND}/export?format=${FORMAT}`, { headers: { authorization: `Bearer ${apiKey}` } });
  if (response.status !== 200 || !response.body) throw new Error(`export answered ${response.status}: ${await response.text()}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of response.body) {
    bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines += 1;
  }
  return { rows: FORMAT === 'csv' ? lines - 1 : lines, bytes, seconds: (performance.now() - started) / 1000 };
}

async function measure(host: string, url: string, apiKey: string, pids: Record<string, number>, seedSeconds: number, readersOf?: number) {
  const memory = watchMemory(pids);
  const readers = readersOf === undefined ? undefined : watchReaders(readersOf);
  const exported = await streamExport(url, apiKey);
  const figures = memory.stop();
  const readerFigures = readers?.stop();
  if (exported.rows !== EVENTS * ROWS_PER_EVENT) throw new Error(`${host}: exported ${exported.rows} rows, seeded ${EVENTS * ROWS_PER_EVENT}`);
  return {
    host,
    rows: exported.rows,
    seed_seconds: +seedSeconds.toFixed(1),
    export_seconds: +exported.seconds.toFixed(2),
    rows_per_second: Math.round(exported.rows / exported.seconds),
    megabytes: +(exported.bytes / 1_048_576).toFixed(1),
    processes: figures,
    ...(readerFigures ? { export_readers: readerFigures } : {}),
  };
}

/** The export saved by the console's button in Chromium, with the browser's processes' memory meanwhile. */
async function browserExport(url: string, apiKey: string) {
  const browser = await launchChromium();
  try {
    const { page, problems } = await watchedPage(browser);
    await page.goto(`${url}/console`);
    await page.getByRole('textbox', { name: 'API key', exact: true }).fill(apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: KIND === 'usage' ? 'Usage' : 'Bills' }).click();
    await page.locator(`#${KIND}-total`).waitFor();
    const chromium = () => descendants(process.pid).filter((row) => /chrom/i.test(row.args));
    const peaks = new Map<number, { role: string; startKb: number; rssKb: number }>();
    const sample = () => {
      for (const row of chromium()) {
        let rss = 0;
        try {
          rss = status(row.pid).VmRSS ?? 0;
        } catch {
          continue; // gone meanwhile
        }
        const role = /--type=([\w-]+)/.exec(row.args)?.[1] ?? 'browser';
        const utility = /--utility-sub-type=([\w.]+)/.exec(row.args)?.[1];
        const known = peaks.get(row.pid);
        peaks.set(row.pid, { role: utility ? `${role} (${utility})` : role, startKb: known?.startKb ?? rss, rssKb: Math.max(known?.rssKb ?? 0, rss) });
      }
    };
    sample();
    const timer = setInterval(sample, 50);
    const started = performance.now();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: FORMAT === 'csv' ? 'Export CSV' : 'Export JSON Lines' }).click()]);
    const saved = await download.path();
    const seconds = (performance.now() - started) / 1000;
    clearInterval(timer);
    sample();
    const text = readFileSync(saved);
    let lines = 0;
    for (let i = 0; i < text.length; i++) if (text[i] === 10) lines += 1;
    const rows = FORMAT === 'csv' ? lines - 1 : lines;
    if (rows !== EVENTS * ROWS_PER_EVENT) throw new Error(`browser: saved ${rows} rows, seeded ${EVENTS * ROWS_PER_EVENT}`);
    if (problems.length > 0) throw new Error(`browser: ${problems.join('; ')}`);
    // Each process's resident set when the button was clicked (or when it started, if later), and its peak while the file was saved.
    const processes = [...peaks.values()].sort((a, b) => b.rssKb - a.rssKb).map((p) => ({ process: p.role, startRssMb: mb(p.startKb), peakRssMb: mb(p.rssKb) }));
    return {
      host: 'embedded, saved by the console in Chromium',
      rows,
      export_seconds: +seconds.toFixed(2),
      rows_per_second: Math.round(rows / seconds),
      megabytes: +(text.length / 1_048_576).toFixed(1),
      largest_process_peak_rss_mb: processes[0]?.peakRssMb ?? 0,
      largest_growth_mb: Math.max(0, ...processes.map((p) => +(p.peakRssMb - p.startRssMb).toFixed(1))),
      sum_of_peaks_mb: mb([...peaks.values()].reduce((sum, p) => sum + p.rssKb, 0)),
      browser_processes: processes,
    };
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-export-'));
  const results = [];

  const dataDir = join(dir, 'embedded');
  const gateway = await startGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_LOG_LEVEL: 'error' });
  try {
    const { accountId, apiKey } = await fundedAccount(gateway.url, 0);
    // LMDB is multi-process: the rows go into the gateway's own ledger while it runs.
    const db = openLocalDb(dataDir);
    const store = new LmdbLedgerStore(db);
    const seedSeconds = await seed(accountId, async (events) => void store.appendBatch(events));
    await db.close();
    results.push(await measure('embedded', gateway.url, apiKey, { gateway: gateway.child.pid as number }, seedSeconds, gateway.child.pid as number));
    if (args.includes('--browser')) results.push(await browserExport(gateway.url, apiKey));
  } finally {
    await gateway.stop();
  }

  if (args.includes('--dapr')) {
    const topology = await startTopology({ basePort: 29500, dataDir: join(dir, 'dapr'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'error' } });
    try {
      const { accountId, apiKey } = await fundedAccount(topology.gatewayUrls[0], 0);
      const store = await RedisLedgerStore.connect(topology.redisUrl);
      const seedSeconds = await seed(accountId, async (events) => void (await Promise.all(events.map((event) => store.append(event)))));
      await store.close();
      const pids: Record<string, number> = {};
      for (const name of ['gateway', 'daprd-gateway', 'daprd-ledger', 'ledger'] as const) pids[name] = topology.pid(name) as number;
      results.push(await measure('dapr', topology.gatewayUrls[0], apiKey, pids, seedSeconds));
    } finally {
      await topology.stop();
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const report = { kind: KIND, format: FORMAT, results };
  console.log(args.includes('--json') ? JSON.stringify(report) : JSON.stringify(report, null, 2));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
