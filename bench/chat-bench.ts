// Benchmark of the chat route with full billing (hold, settle, usage event, ledger entry) on both
// actor hosts, in one run, beside a direct call to the upstream and a bare pass-through Node proxy
// (bench/bare-proxy.ts): throughput at concurrency C (autocannon), latency p50/p99 at c=1 and time
// to first token (a sequential client) added to the direct call's, ratios embedded / bare proxy
// and Dapr / embedded, and each process's resident set; on Dapr also each process's CPU time per
// chat (from /proc: where a chat's CPU goes across the topology's processes), for the c=1 calls
// and the c=C runs apart (a c=1 chat is an actor call and a state transaction of its own; under
// load one carries many chats).
// Every server is its own process (upstream, bare proxy, gateway; on Dapr each app and sidecar);
// this process is the load generator and takes no part in serving.
//   npm run bench                     # both hosts (Dapr when its runtime resolves, else embedded only)
//   npm run bench -- --embedded-only  # skip the Dapr topology
// Every target is started first and warmed up; then latencies and throughput are measured in
// rounds of every target in turn, the order rotating (latencies: each target's calls of all rounds
// together; throughput: medians, and ratios are the median of each round's own ratio).
// Options: --requests N (sequential calls for p50/p99, default 2000, shared among the rounds),
// --streams S (for TTFT, default 500, shared likewise), --concurrency C (default 32), --seconds T
// (each throughput round per target, default 4), --warm-up W (seconds of load in each target's
// warm-up, default 5), --rounds R (default 3), --json (the figures as JSON instead of the
// tables), --cpu-prof (profile the embedded gateway with node --cpu-prof and add where its CPU
// time went, by category, in µs per chat request).

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fundedAccount } from '../test/support/api';
import { writeTestCatalog } from '../test/support/catalog';
import { ADMIN_TOKEN, freePort, ROOT, startGateway } from '../test/support/processes';
import { resolveDaprBinaries, startTopology } from '../topology/topology';
import { printSummary, summarizeProfile, type ProfileSummary } from './cpu-profile';
import { latenciesOf, median, sample, SEQUENTIAL_WARM_UP_CALLS, throughput, warmUp, WARM_UP_SECONDS, type Figures, type MeasureOptions, type Samples, type Target } from './load';
import { CHAT_BODY, CHAT_PATH, flag, option, STREAM_BODY } from './cli';

const OPTIONS: MeasureOptions = {
  requests: option('requests', 2000),
  streams: option('streams', 500),
  concurrency: option('concurrency', 32),
  seconds: option('seconds', 4),
};
const WARM_UP = option('warm-up', WARM_UP_SECONDS);
/**
 * Throughput is measured in rounds, each running every target in turn (the order rotating), so
 * that this machine's drift (its speed moves by a third within minutes) hits them all alike:
 * each figure is the median of its rounds, each ratio the median of the rounds' own ratios.
 */
const ROUNDS = option('rounds', 3);
const body = CHAT_BODY;
const streamBody = STREAM_BODY;

interface Memory {
  rss_mb: number;
  peak_rss_mb: number;
  /** Of rss_mb: heap and buffers (the rest is file-backed: the node binary's pages, LMDB's map). */
  anon_mb: number;
}

/** The kernel's resident set of a process now, its peak so far and its anonymous part, MB. */
function rss(pid: number | undefined): Memory | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const mb = (field: string) => Math.round(Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? 0) / 1024);
    return { rss_mb: mb('VmRSS'), peak_rss_mb: mb('VmHWM'), anon_mb: mb('RssAnon') };
  } catch {
    return undefined;
  }
}

/** A server of the bench as its own process; it prints a line matching `ready` with its port. */
async function startServer(script: string, argv: string[], env: Record<string, string>, ready: RegExp): Promise<{ origin: string; child: ChildProcess }> {
  // A pipe as stdin: when the bench goes, even killed, the pipe closes (the bare proxy exits on it).
  const child = spawn(process.execPath, [join(ROOT, script), ...argv], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = ready.exec(String(chunk));
      if (match) resolve(Number(match[1]));
    });
  });
  return { origin: `http://127.0.0.1:${port}`, child };
}

/** A process's CPU time so far (user + system), µs; undefined when it cannot be read. */
function cpuUs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime (fields 14 and 15 of stat, counted here from field 3), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

interface Row {
  name: string;
  figures: Figures;
  memory: Record<string, Memory | undefined>;
  /** CPU time per chat request of each process, µs: over the sequential (c=1) calls and over the runs at c=C. */
  cpu?: { sequential: Record<string, number>; concurrent: Record<string, number> };
  /** Answers per second at c=C in each round, in round order. */
  rounds: number[];
}

/** Ratios of throughput, each the median of the rounds' own ratios. */
interface Ratios {
  embeddedOfBare?: number;
  daprOfEmbedded?: number;
}

const ms = (n: number) => +n.toFixed(3);
const pct = (n: number) => +(n * 100).toFixed(1);

/** Chat requests the gateway has answered (its own counter, so warm-up calls count too). */
async function chatRequests(origin: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  return [...text.matchAll(/^payg_http_requests_total\{[^}]*family="open"[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

interface Profiled {
  requests: number;
  summary: ProfileSummary;
}

function summary(rows: Row[], ratios: Ratios, note: string | undefined, profiled?: Profiled) {
  const direct = rows.find((r) => r.name === 'direct')!.figures;
  const added = (f: Figures) => ({ p50_ms: ms(f.p50 - direct.p50), p99_ms: ms(f.p99 - direct.p99), ttft_p50_ms: ms(f.ttft50 - direct.ttft50) });
  return {
    node: process.version,
    date: new Date().toISOString(),
    options: { ...OPTIONS, rounds: ROUNDS, warm_up_seconds: WARM_UP },
    ...(note ? { note } : {}),
    ratios: {
      embedded_pct_of_bare_proxy: ratios.embeddedOfBare === undefined ? undefined : pct(ratios.embeddedOfBare),
      dapr_pct_of_embedded: ratios.daprOfEmbedded === undefined ? undefined : pct(ratios.daprOfEmbedded),
    },
    targets: rows.map((r) => ({
      name: r.name,
      rps: Math.round(r.figures.rps),
      rps_rounds: r.rounds,
      p50_ms: ms(r.figures.p50),
      p99_ms: ms(r.figures.p99),
      ttft_p50_ms: ms(r.figures.ttft50),
      ttft_p99_ms: ms(r.figures.ttft99),
      added_vs_direct: r.name === 'direct' ? undefined : added(r.figures),
      memory: r.memory,
      ...(r.cpu ? { cpu_us_per_chat_c1: r.cpu.sequential, cpu_us_per_chat_concurrent: r.cpu.concurrent } : {}),
    })),
    ...(profiled ? { embedded_cpu_profile: profiled } : {}),
  };
}

type Summary = ReturnType<typeof summary>;

/** The figures as a markdown table, ready for README's Benchmarks section. */
function printTable(out: Summary): void {
  const { concurrency, requests, streams, seconds, rounds, warm_up_seconds: warm } = out.options;
  console.log(`chat bench, Node ${out.node}, ${out.date}: each target warmed up (${warm} s at c=${concurrency}, then ${SEQUENTIAL_WARM_UP_CALLS} calls and ${SEQUENTIAL_WARM_UP_CALLS / 10} streams at c=1); throughput at c=${concurrency}, median of ${rounds} interleaved rounds of ${seconds} s per target (autocannon), latencies at c=1 (${requests} calls; TTFT ${streams} streams; in the same ${rounds} rounds)`);
  if (out.note) console.log(out.note);
  console.log('');
  console.log(`| | req/s (c=${concurrency}) | p50 ms | p99 ms | TTFT p50 ms | added p50 | added p99 | added TTFT | RSS MB (anon) |`);
  console.log('|---|---|---|---|---|---|---|---|---|');
  const r = out.ratios;
  for (const t of out.targets) {
    const share = t.name === 'embedded' && r.embedded_pct_of_bare_proxy !== undefined ? ` (${r.embedded_pct_of_bare_proxy} % of bare)`
      : t.name === 'dapr' && r.dapr_pct_of_embedded !== undefined ? ` (${r.dapr_pct_of_embedded} % of embedded)` : '';
    const a = t.added_vs_direct;
    const memory = Object.entries(t.memory).filter(([, m]) => m).map(([name, m]) => `${Object.keys(t.memory).length > 1 ? `${name} ` : ''}${m!.rss_mb} (${m!.anon_mb})`).join(', ');
    console.log(`| ${t.name} | ${t.rps.toLocaleString('en')}${share} | ${t.p50_ms} | ${t.p99_ms} | ${t.ttft_p50_ms} | ${a ? `${a.p50_ms} ms` : '—'} | ${a ? `${a.p99_ms} ms` : '—'} | ${a ? `${a.ttft_p50_ms} ms` : '—'} | ${memory || '—'} |`);
  }
  console.log('');
  console.log(`embedded / bare proxy: ${r.embedded_pct_of_bare_proxy ?? '—'} %; Dapr / embedded: ${r.dapr_pct_of_embedded ?? '—'} % (medians of the rounds' own ratios)`);
  console.log(`req/s by round: ${out.targets.map((t) => `${t.name} ${t.rps_rounds.map((n) => n.toLocaleString('en')).join(' / ')}`).join('; ')}`);
  for (const t of out.targets) {
    for (const [at, cpu] of [['c=1', t.cpu_us_per_chat_c1], [`c=${out.options.concurrency}`, t.cpu_us_per_chat_concurrent]] as const) {
      if (!cpu) continue;
      const parts = Object.entries(cpu).map(([name, us]) => `${name} ${us}`);
      const total = Object.values(cpu).reduce((sum, us) => sum + us, 0);
      console.log(`${t.name}: CPU per chat by process at ${at} (µs): ${parts.join(', ')}; total ${total}`);
    }
  }
  if (out.embedded_cpu_profile) {
    console.log('\nembedded gateway, --cpu-prof (the profiler itself slows it down):');
    printSummary(out.embedded_cpu_profile.summary, out.embedded_cpu_profile.requests);
  }
}

/** A target of the bench, running: its figures are taken by main(), its processes read here. */
interface Running {
  target: Target;
  memory: () => Record<string, Memory | undefined>;
  /** Dapr only: each process's CPU time so far (µs) and the chats its gateway has answered. */
  cpu?: () => Record<string, number | undefined>;
  chats?: () => Promise<number>;
  stop: () => Promise<void>;
}

/** The Dapr topology (gateway, actors and ledger apps, each with its sidecar), funded, ready to measure. */
async function startDapr(binDir: string, dataDir: string, catalog: string): Promise<Running> {
  const topology = await startTopology({ basePort: 23000, daprBinDir: binDir, dataDir, env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_CATALOG_FILE: catalog, GATEWAY_LOG_LEVEL: 'error' } });
  try {
    const { apiKey } = await fundedAccount(topology.gatewayUrls[0], 9_000_000_000_000_000);
    // Where a chat's CPU goes across the topology: each process's CPU time over its measurements.
    const processes = ['gateway', 'daprd-gateway', 'actors', 'daprd-actors', 'ledger', 'daprd-ledger', 'placement', 'scheduler', 'redis'] as const;
    // Redis is the topology's own only when none was running (else it is not counted here).
    const pids = Object.fromEntries(processes.map((name) => [name, topology.processes.includes(name) ? topology.pid(name) : undefined]));
    return {
      target: { name: 'dapr', origin: topology.gatewayUrls[0], path: CHAT_PATH, headers: { authorization: `Bearer ${apiKey}` } },
      memory: () => ({ gateway: rss(topology.pid('gateway')), gateway_sidecar: rss(topology.pid('daprd-gateway')), actors: rss(topology.pid('actors')) }),
      cpu: () => Object.fromEntries(processes.map((name) => [name, cpuUs(pids[name])])),
      chats: () => chatRequests(topology.gatewayUrls[0]),
      stop: () => topology.stop(),
    };
  } catch (error) {
    await topology.stop();
    throw error;
  }
}

/** CPU time by process and the chats it served, summed over measurements. */
interface Spent {
  cpu: Record<string, number>;
  chats: number;
}

/** Each process's CPU time per chat, µs; undefined before any chat. */
function perChat(spent: Spent): Record<string, number> | undefined {
  if (spent.chats === 0) return undefined;
  return Object.fromEntries(Object.entries(spent.cpu).map(([process, us]) => [process, Math.round(us / spent.chats)]));
}

/** Runs `measure` on a target, adding its Dapr processes' CPU time and its chats to `spent`. */
async function accounted<T>(running: Running, spent: Spent, measure: () => Promise<T>): Promise<T> {
  if (!running.cpu || !running.chats) return measure();
  const [before, chatsBefore] = [running.cpu(), await running.chats()];
  const result = await measure();
  const [after, chatsAfter] = [running.cpu(), await running.chats()];
  spent.chats += chatsAfter - chatsBefore;
  for (const [name, us] of Object.entries(after)) {
    if (us !== undefined && before[name] !== undefined) spent.cpu[name] = (spent.cpu[name] ?? 0) + us - before[name]!;
  }
  return result;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const upstream = await startServer('dist/test/support/upstream.js', [], { PORT: String(await freePort()), HOST: '127.0.0.1' }, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
  const upstreamOrigin = upstream.origin;
  const catalog = writeTestCatalog(join(dir, 'catalog.json'), `${upstreamOrigin}/v1`);
  const proxy = await startServer('dist/bench/bare-proxy.js', [upstreamOrigin], {}, /listening (\d+)/);
  const running: Running[] = [
    { target: { name: 'direct', origin: upstreamOrigin, path: '/v1/chat/completions', headers: {} }, memory: () => ({}), stop: async () => undefined },
    { target: { name: 'bare proxy', origin: proxy.origin, path: '/v1/chat/completions', headers: {} }, memory: () => ({ bare_proxy: rss(proxy.child.pid) }), stop: async () => undefined },
  ];
  let note: string | undefined;
  let profiled: Profiled | undefined;
  const profileDir = join(dir, 'cpu-profile');
  const rows: Row[] = [];
  let ratios: Ratios = {};
  let embeddedRequests = 0;
  try {
    // Every target is up before the first measurement: their throughput rounds interleave.
    const profiling: Record<string, string> = flag('cpu-prof') ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${profileDir}` } : {};
    const gateway = await startGateway({ GATEWAY_DATA_DIR: join(dir, 'embedded'), GATEWAY_CATALOG_FILE: catalog, GATEWAY_LOG_LEVEL: 'error', ...profiling });
    const { apiKey } = await fundedAccount(gateway.url, 9_000_000_000_000_000);
    running.push({
      target: { name: 'embedded', origin: gateway.url, path: CHAT_PATH, headers: { authorization: `Bearer ${apiKey}` } },
      memory: () => ({ gateway: rss(gateway.child.pid) }),
      stop: async () => {
        embeddedRequests = await chatRequests(gateway.url);
        await gateway.stop();
      },
    });
    const binDir = flag('embedded-only') ? undefined : await resolveDaprBinaries({ log }).catch((error: Error) => {
      note = `Dapr topology skipped: its runtime did not resolve (${error.message.split('\n')[0]})`;
      return undefined;
    });
    if (flag('embedded-only')) note = 'Dapr topology skipped (--embedded-only)';
    if (binDir) {
      // A Dapr topology that fails to start still leaves the other figures, with why, and a non-zero exit.
      await startDapr(binDir, join(dir, 'dapr'), catalog).then((dapr) => running.push(dapr), (error: Error) => {
        note = `Dapr run failed: ${error.message.split('\n')[0]}`;
        process.exitCode = 1;
      });
    }

    // The warm-up is not in the CPU time per chat (it includes V8's compiling the request path).
    for (const r of running) {
      log(`${r.target.name}: warm-up`);
      await warmUp(r.target, body, OPTIONS.concurrency, WARM_UP, streamBody);
    }
    const spent: { sequential: Spent; concurrent: Spent } = { sequential: { cpu: {}, chats: 0 }, concurrent: { cpu: {}, chats: 0 } };
    // The sequential calls in rounds too: the machine's drift is shared by every target's figures.
    const samples = new Map<string, Samples>(running.map((r) => [r.target.name, { json: [], ttft: [] }]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = running.map((_, i) => running[(i + round) % running.length]);
      log(`latency round ${round + 1} of ${ROUNDS} at c=1: ${order.map((r) => r.target.name).join(', ')}`);
      const share = (total: number) => Math.ceil(total / ROUNDS);
      for (const r of order) await accounted(r, spent.sequential, () => sample(r.target, body, streamBody, share(OPTIONS.requests), share(OPTIONS.streams), samples.get(r.target.name)!));
    }
    const rounds: Record<string, number>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = running.map((_, i) => running[(i + round) % running.length]);
      log(`throughput round ${round + 1} of ${ROUNDS}: ${order.map((r) => r.target.name).join(', ')}`);
      const rps: Record<string, number> = {};
      for (const r of order) rps[r.target.name] = await accounted(r, spent.concurrent, () => throughput(r.target, body, OPTIONS.concurrency, OPTIONS.seconds));
      rounds.push(rps);
    }
    for (const r of running) {
      const name = r.target.name;
      const [sequential, concurrent] = [perChat(spent.sequential), perChat(spent.concurrent)];
      const cpu = r.cpu && sequential && concurrent ? { sequential, concurrent } : undefined;
      rows.push({ name, figures: { ...latenciesOf(samples.get(name)!), rps: median(rounds.map((x) => x[name])) }, rounds: rounds.map((x) => Math.round(x[name])), memory: r.memory(), ...(cpu ? { cpu } : {}) });
    }
    const ratio = (a: string, b: string) => (rounds.every((x) => x[a] !== undefined && x[b] !== undefined) ? median(rounds.map((x) => x[a] / x[b])) : undefined);
    ratios = { embeddedOfBare: ratio('embedded', 'bare proxy'), daprOfEmbedded: ratio('dapr', 'embedded') };
  } finally {
    await Promise.allSettled(running.map((r) => r.stop()));
    proxy.child.kill('SIGTERM');
    upstream.child.kill('SIGTERM');
  }
  if (flag('cpu-prof')) {
    // Written when the gateway exits.
    const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
    if (file) profiled = { requests: embeddedRequests, summary: summarizeProfile(JSON.parse(readFileSync(join(profileDir, file), 'utf8')), embeddedRequests) };
  }
  // Its data (LMDB, Redis, Dapr: a few hundred MB) goes with it.
  rmSync(dir, { recursive: true, force: true });
  const out = summary(rows, ratios, note, profiled);
  if (flag('json')) console.log(JSON.stringify(out, null, 2));
  else printTable(out);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
