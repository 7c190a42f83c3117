// Interleaved A/B of gateway builds or settings on the embedded host, for changes too small to
// see across separate bench runs on a noisy machine: every variant runs at once (own process,
// own data directory, the same upstream and bare proxy), and each round measures them one after
// another in a rotating order, so drift on the machine hits them all alike. Medians over rounds.
//   node dist/bench/ab.js --variant base=/tmp/base-build/dist --variant new=dist[,GATEWAY_FUNDS_LEASE=on] [--rounds 5]
// A variant: label=<dist directory>[,NAME=value…] (environment for that gateway; a value may hold
// '=', e.g. NODE_OPTIONS=--max-semi-space-size=32).
// Besides req/s, each server's CPU time per answer during the throughput run (from /proc): on a
// shared machine it moves far less than req/s does. And its main thread's CPU time per answer
// during the sequential (c=1) calls, in nanoseconds from /proc/<pid>/schedstat: at c=1 nearly
// all a gateway adds is that thread's work, so it shows changes of a few µs per call that the
// latencies (which move by 0.1 ms from round to round here) cannot.
// Options: --rounds R (default 5), --requests N (sequential JSON calls per round, default 600),
// --streams S (sequential streams per round, default 200), --concurrency C (default 32),
// --seconds T (throughput per round and variant, default 4), --warm-up W (seconds of load in each
// variant's warm-up, default 5), --json, --phases (every server, the bare proxy too, runs with
// ./phase-probe.ts, and the sequential calls' time is told in phases: to the upstream, upstream,
// its body, to the answer).

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fundedAccount } from '../test/support/api';
import { writeTestCatalog } from '../test/support/catalog';
import { ADMIN_TOKEN, freePort, ROOT, waitFor } from '../test/support/processes';
import { percentile, sequential, throughput, warmUp, WARM_UP_SECONDS, type Target } from './load';
import { args, CHAT_BODY, CHAT_PATH, flag, option, parseVariant, STREAM_BODY } from './cli';
import { PHASES, phaseMeans, type PhaseTotals } from './phase-probe';
import { NODE_FLAGS } from '../lib/node-flags';

const ROUNDS = option('rounds', 5);
const REQUESTS = option('requests', 600);
const STREAMS = option('streams', 200);
const CONCURRENCY = option('concurrency', 32);
const SECONDS = option('seconds', 4);
const WARM_UP = option('warm-up', WARM_UP_SECONDS);
const TIMED_PHASES = flag('phases');
/** How a server is started with the phase probe: its node options, and where it writes (under the bench's directory). */
const probe = (dir: string, name: string): { execArgv: string[]; env: { BENCH_PHASES_FILE?: string } } =>
  TIMED_PHASES ? { execArgv: ['--require', join(ROOT, 'dist/bench/phase-probe.js')], env: { BENCH_PHASES_FILE: join(dir, `${name.replace(/\W/g, '-')}.phases.json`) } } : { execArgv: [], env: {} };
const body = CHAT_BODY;
const streamBody = STREAM_BODY;

interface Variant {
  label: string;
  dist: string;
  env: Record<string, string>;
}

function variants(): Variant[] {
  const out: Variant[] = [];
  args.forEach((arg, i) => {
    if (arg !== '--variant') return;
    const { label, dist, env } = parseVariant(args[i + 1]);
    out.push({ label, dist: resolve(dist), env });
  });
  if (out.length < 1) throw new Error('usage: ab --variant label=<dist>[,NAME=value…] [--variant …]');
  return out;
}

async function serve(script: string, argv: string[], env: Record<string, string>, ready: RegExp, execArgv: string[] = []): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [...execArgv, script, ...argv], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((done, fail) => {
    child.once('exit', (code) => fail(new Error(`${script} exited (${code})`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = ready.exec(String(chunk));
      if (match) done(Number(match[1]));
    });
  });
  return { port, child };
}

interface Sample {
  p50: number;
  p99: number;
  ttft50: number;
  rps: number;
  /** The server process's CPU time (user + system) per answer during the throughput run, µs. */
  cpuUs: number;
  /** The server's main thread's CPU time per answer during the sequential JSON calls, µs. */
  c1CpuUs: number;
  /** With --phases: mean µs per phase of the sequential JSON calls (PHASES' order). */
  phasesUs?: number[];
}

/** The phase probe's totals since its last signal (it numbers what it writes: waits for the next). */
async function takePhases(pid: number, file: string): Promise<PhaseTotals> {
  const read = (): { taken: number } & PhaseTotals => {
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return { taken: 0, calls: 0, sumsUs: [] };
    }
  };
  const before = read().taken;
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 200; i++) {
    const now = read();
    if (now.taken > before) return now;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the phase probe of ${pid} wrote nothing to ${file}`);
}

/** A process's CPU time so far (user + system), µs. */
function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of stat; counted here from the state (field 3).
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

/** A process's main thread's time on a CPU so far, µs (schedstat counts nanoseconds; stat, 10 ms ticks). */
function mainThreadCpuUs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
}

async function round(target: Target, pid: number, phasesFile?: string): Promise<Sample> {
  if (phasesFile) await takePhases(pid, phasesFile);
  const c1Before = mainThreadCpuUs(pid);
  const latencies = await sequential(target, body, REQUESTS);
  const c1CpuUs = (mainThreadCpuUs(pid) - c1Before) / REQUESTS;
  const phasesUs = phasesFile ? phaseMeans(await takePhases(pid, phasesFile)) : undefined;
  const ttfts = await sequential(target, streamBody, STREAMS, true);
  const cpuBefore = cpuUs(pid);
  const rps = await throughput(target, body, CONCURRENCY, SECONDS);
  const cpu = cpuUs(pid) - cpuBefore;
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), ttft50: percentile(ttfts, 0.5), rps, cpuUs: cpu / (rps * SECONDS), c1CpuUs, ...(phasesUs ? { phasesUs } : {}) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ab-'));
  const children: ChildProcess[] = [];
  try {
    const upstream = await serve(join(ROOT, 'dist/test/support/upstream.js'), [], { PORT: String(await freePort()), HOST: '127.0.0.1' }, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
    children.push(upstream.child);
    const upstreamOrigin = `http://127.0.0.1:${upstream.port}`;
    const catalog = writeTestCatalog(join(dir, 'catalog.json'), `${upstreamOrigin}/v1`);
    const proxyProbe = probe(dir, 'bare proxy');
    const proxy = await serve(join(ROOT, 'dist/bench/bare-proxy.js'), [upstreamOrigin], proxyProbe.env, /listening (\d+)/, proxyProbe.execArgv);
    children.push(proxy.child);
    const phaseFiles = new Map<string, string | undefined>([['bare proxy', proxyProbe.env.BENCH_PHASES_FILE]]);
    const targets: Target[] = [{ name: 'bare proxy', origin: `http://127.0.0.1:${proxy.port}`, path: '/v1/chat/completions', headers: {} }];
    const pids = new Map<string, number>([['bare proxy', proxy.child.pid!]]);
    for (const variant of variants()) {
      const port = await freePort();
      const variantProbe = probe(dir, variant.label);
      phaseFiles.set(variant.label, variantProbe.env.BENCH_PHASES_FILE);
      const child = spawn(process.execPath, [...variantProbe.execArgv, ...(variant.env.NODE_OPTIONS === undefined ? NODE_FLAGS : []), join(variant.dist, 'services/gateway/main.js')], {
        cwd: resolve(variant.dist, '..'),
        env: { ...process.env, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'fatal', GATEWAY_CATALOG_FILE: catalog, GATEWAY_DATA_DIR: join(dir, variant.label), ...variant.env, ...variantProbe.env, PORT: String(port), HOST: '127.0.0.1' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      const origin = `http://127.0.0.1:${port}`;
      await waitFor(`${origin}/healthz`, 30_000, child);
      const { apiKey } = await fundedAccount(origin, 9_000_000_000_000_000);
      targets.push({ name: variant.label, origin, path: CHAT_PATH, headers: { authorization: `Bearer ${apiKey}` } });
      pids.set(variant.label, child.pid!);
    }
    for (const target of targets) await warmUp(target, body, CONCURRENCY, WARM_UP, streamBody);
    const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      // Rotating order: no variant always runs first (or right after the same neighbour).
      const order = targets.map((_, i) => targets[(i + r) % targets.length]);
      for (const target of order) {
        const sample = await round(target, pids.get(target.name)!, phaseFiles.get(target.name));
        samples.get(target.name)!.push(sample);
        process.stderr.write(`[ab] round ${r + 1} ${target.name}: ${Math.round(sample.rps)} req/s, ${Math.round(sample.cpuUs)} µs CPU/req, c=1 ${Math.round(sample.c1CpuUs)} µs main-thread CPU/req, p50 ${sample.p50.toFixed(3)} ms, ttft ${sample.ttft50.toFixed(3)} ms\n`);
      }
    }
    const bare = samples.get('bare proxy')!;
    const rows = targets.map((t) => {
      const s = samples.get(t.name)!;
      const rps = s.map((x) => x.rps);
      return {
        name: t.name,
        rps: Math.round(median(rps)),
        rps_min: Math.round(Math.min(...rps)),
        rps_max: Math.round(Math.max(...rps)),
        pct_of_bare: +(100 * median(s.map((x, i) => x.rps / bare[i].rps))).toFixed(1),
        p50_ms: +median(s.map((x) => x.p50)).toFixed(3),
        p99_ms: +median(s.map((x) => x.p99)).toFixed(3),
        ttft50_ms: +median(s.map((x) => x.ttft50)).toFixed(3),
        cpu_us_per_request: Math.round(median(s.map((x) => x.cpuUs))),
        c1_main_thread_cpu_us_per_request: Math.round(median(s.map((x) => x.c1CpuUs))),
        ...(TIMED_PHASES ? { phases_us: PHASES.map((_, i) => Math.round(median(s.map((x) => x.phasesUs?.[i] ?? 0)))) } : {}),
      };
    });
    if (flag('json')) console.log(JSON.stringify({ rounds: ROUNDS, rows, samples: Object.fromEntries(samples) }, null, 2));
    else {
      console.log(`A/B, ${ROUNDS} rounds interleaved: medians (throughput at c=${CONCURRENCY}, ${SECONDS} s per round; latencies at c=1)`);
      console.log('| | req/s (min–max) | % of bare (per round, median) | CPU µs/request | c=1 main thread CPU µs/request | p50 ms | p99 ms | TTFT p50 ms |');
      console.log('|---|---|---|---|---|---|---|---|');
      for (const r of rows) console.log(`| ${r.name} | ${r.rps} (${r.rps_min}–${r.rps_max}) | ${r.pct_of_bare} | ${r.cpu_us_per_request} | ${r.c1_main_thread_cpu_us_per_request} | ${r.p50_ms} | ${r.p99_ms} | ${r.ttft50_ms} |`);
      if (TIMED_PHASES) {
        console.log(`\nThe sequential JSON calls in phases (mean µs per call, median of the rounds; each call timed alone in its server):`);
        console.log(`| | ${PHASES.join(' | ')} | sum |`);
        console.log(`|---|${PHASES.map(() => '---|').join('')}---|`);
        for (const r of rows) console.log(`| ${r.name} | ${r.phases_us!.join(' | ')} | ${r.phases_us!.reduce((a, b) => a + b, 0)} |`);
      }
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => (child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)))));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
