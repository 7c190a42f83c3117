// Benchmark of the chat route with full billing (hold, settle, usage event, ledger entry) on both
// actor hosts, in one run, beside a direct call to the upstream and a bare pass-through Node proxy
// (bench/bare-proxy.ts): throughput at concurrency C (autocannon), latency p50/p99 at c=1 and time
// to first token (a sequential client) added to the direct call's, ratios embedded / bare proxy
// and Dapr / embedded, and each process's resident set; on Dapr also each process's CPU time per
// chat (from /proc: where a chat's CPU goes across the topology's processes).
// Every server is its own process (upstream, bare proxy, gateway; on Dapr each app and sidecar);
// this process is the load generator and takes no part in serving.
//   npm run bench                     # both hosts (Dapr when its runtime resolves, else embedded only)
//   npm run bench -- --embedded-only  # skip the Dapr topology
// Options: --requests N (sequential calls for p50/p99, default 2000), --streams S (for TTFT,
// default 500), --concurrency C (default 32), --seconds T (throughput run per target, default 8),
// --json (the figures as JSON instead of the tables), --cpu-prof (profile the embedded gateway
// with node --cpu-prof and add where its CPU time went, by category, in µs per chat request).

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fundedAccount } from '../test/support/api';
import { writeTestCatalog } from '../test/support/catalog';
import { ADMIN_TOKEN, freePort, ROOT, startGateway } from '../test/support/processes';
import { resolveDaprBinaries, startTopology } from '../topology/topology';
import { printSummary, summarizeProfile, type ProfileSummary } from './cpu-profile';
import { measure, type Figures, type MeasureOptions, type Target } from './load';
import { CHAT_BODY, CHAT_PATH, flag, option, STREAM_BODY } from './cli';

const OPTIONS: MeasureOptions = {
  requests: option('requests', 2000),
  streams: option('streams', 500),
  concurrency: option('concurrency', 32),
  seconds: option('seconds', 8),
};
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
  /** CPU time per chat request of each process (the whole measurement: c=1 and c=C), µs. */
  cpu?: Record<string, number>;
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

function summary(rows: Row[], note: string | undefined, profiled?: Profiled) {
  const by = (name: string) => rows.find((r) => r.name === name)?.figures;
  const direct = by('direct')!;
  const bare = by('bare proxy');
  const embedded = by('embedded');
  const dapr = by('dapr');
  const added = (f: Figures) => ({ p50_ms: ms(f.p50 - direct.p50), p99_ms: ms(f.p99 - direct.p99), ttft_p50_ms: ms(f.ttft50 - direct.ttft50) });
  return {
    node: process.version,
    date: new Date().toISOString(),
    options: OPTIONS,
    ...(note ? { note } : {}),
    ratios: {
      embedded_pct_of_bare_proxy: embedded && bare ? pct(embedded.rps / bare.rps) : undefined,
      dapr_pct_of_embedded: dapr && embedded ? pct(dapr.rps / embedded.rps) : undefined,
    },
    targets: rows.map((r) => ({
      name: r.name,
      rps: Math.round(r.figures.rps),
      p50_ms: ms(r.figures.p50),
      p99_ms: ms(r.figures.p99),
      ttft_p50_ms: ms(r.figures.ttft50),
      ttft_p99_ms: ms(r.figures.ttft99),
      added_vs_direct: r.name === 'direct' ? undefined : added(r.figures),
      memory: r.memory,
      ...(r.cpu ? { cpu_us_per_chat: r.cpu } : {}),
    })),
    ...(profiled ? { embedded_cpu_profile: profiled } : {}),
  };
}

type Summary = ReturnType<typeof summary>;

/** The figures as a markdown table, ready for README's Benchmarks section. */
function printTable(out: Summary): void {
  const { concurrency, requests, streams, seconds } = out.options;
  console.log(`chat bench, Node ${out.node}, ${out.date}: throughput at c=${concurrency} for ${seconds} s (autocannon), latencies at c=1 (${requests} calls; TTFT ${streams} streams)`);
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
  console.log(`embedded / bare proxy: ${r.embedded_pct_of_bare_proxy ?? '—'} %; Dapr / embedded: ${r.dapr_pct_of_embedded ?? '—'} %`);
  for (const t of out.targets) {
    if (!t.cpu_us_per_chat) continue;
    const parts = Object.entries(t.cpu_us_per_chat).map(([name, us]) => `${name} ${us}`);
    const total = Object.values(t.cpu_us_per_chat).reduce((sum, us) => sum + us, 0);
    console.log(`${t.name}: CPU per chat by process (µs, c=1 and c=${out.options.concurrency} runs together): ${parts.join(', ')}; total ${total}`);
  }
  if (out.embedded_cpu_profile) {
    console.log('\nembedded gateway, --cpu-prof (the profiler itself slows it down):');
    printSummary(out.embedded_cpu_profile.summary, out.embedded_cpu_profile.requests);
  }
}

/** The Dapr topology (gateway, actors and ledger apps, each with its sidecar) measured like the others. */
async function measureDapr(binDir: string, dataDir: string, catalog: string): Promise<Row> {
  const topology = await startTopology({ basePort: 23000, daprBinDir: binDir, dataDir, env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_CATALOG_FILE: catalog, GATEWAY_LOG_LEVEL: 'error' } });
  try {
    const { apiKey } = await fundedAccount(topology.gatewayUrls[0], 9_000_000_000_000_000);
    const target: Target = { name: 'dapr', origin: topology.gatewayUrls[0], path: CHAT_PATH, headers: { authorization: `Bearer ${apiKey}` } };
    // Where a chat's CPU goes across the topology: each process's CPU time over the measurement.
    const processes = ['gateway', 'daprd-gateway', 'actors', 'daprd-actors', 'ledger', 'daprd-ledger', 'placement', 'scheduler', 'redis'] as const;
    // Redis is the topology's own only when none was running (else it is not counted here).
    const pids = Object.fromEntries(processes.map((name) => [name, topology.processes.includes(name) ? topology.pid(name) : undefined]));
    const requestsBefore = await chatRequests(topology.gatewayUrls[0]);
    const cpuBefore = Object.fromEntries(processes.map((name) => [name, cpuUs(pids[name])]));
    const figures = await measure(target, body, streamBody, OPTIONS);
    const chats = (await chatRequests(topology.gatewayUrls[0])) - requestsBefore;
    const cpu: Record<string, number> = {};
    for (const name of processes) {
      const [before, after] = [cpuBefore[name], cpuUs(pids[name])];
      if (before !== undefined && after !== undefined && chats > 0) cpu[name] = Math.round((after - before) / chats);
    }
    const memory = { gateway: rss(topology.pid('gateway')), gateway_sidecar: rss(topology.pid('daprd-gateway')), actors: rss(topology.pid('actors')) };
    return { name: 'dapr', figures, memory, cpu };
  } finally {
    await topology.stop();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const upstream = await startServer('dist/test/support/upstream.js', [], { PORT: String(await freePort()), HOST: '127.0.0.1' }, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
  const upstreamOrigin = upstream.origin;
  const catalog = writeTestCatalog(join(dir, 'catalog.json'), `${upstreamOrigin}/v1`);
  const proxy = await startServer('dist/bench/bare-proxy.js', [upstreamOrigin], {}, /listening (\d+)/);
  const rows: Row[] = [];
  let note: string | undefined;
  let profiled: Profiled | undefined;
  const profileDir = join(dir, 'cpu-profile');
  try {
    log('direct');
    rows.push({ name: 'direct', figures: await measure({ name: 'direct', origin: upstreamOrigin, path: '/v1/chat/completions', headers: {} }, body, streamBody, OPTIONS), memory: {} });
    log('bare proxy');
    rows.push({ name: 'bare proxy', figures: await measure({ name: 'bare proxy', origin: proxy.origin, path: '/v1/chat/completions', headers: {} }, body, streamBody, OPTIONS), memory: { bare_proxy: rss(proxy.child.pid) } });

    log('embedded');
    const profiling: Record<string, string> = flag('cpu-prof') ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${profileDir}` } : {};
    const gateway = await startGateway({ GATEWAY_DATA_DIR: join(dir, 'embedded'), GATEWAY_CATALOG_FILE: catalog, GATEWAY_LOG_LEVEL: 'error', ...profiling });
    let requests = 0;
    try {
      const { apiKey } = await fundedAccount(gateway.url, 9_000_000_000_000_000);
      const target: Target = { name: 'embedded', origin: gateway.url, path: CHAT_PATH, headers: { authorization: `Bearer ${apiKey}` } };
      rows.push({ name: 'embedded', figures: await measure(target, body, streamBody, OPTIONS), memory: { gateway: rss(gateway.child.pid) } });
      requests = await chatRequests(gateway.url);
    } finally {
      await gateway.stop();
    }
    if (flag('cpu-prof')) {
      // Written when the gateway exits.
      const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
      if (file) profiled = { requests, summary: summarizeProfile(JSON.parse(readFileSync(join(profileDir, file), 'utf8')), requests) };
    }

    const binDir = flag('embedded-only') ? undefined : await resolveDaprBinaries({ log }).catch((error: Error) => {
      note = `Dapr topology skipped: its runtime did not resolve (${error.message.split('\n')[0]})`;
      return undefined;
    });
    if (flag('embedded-only')) note = 'Dapr topology skipped (--embedded-only)';
    if (binDir) {
      log('dapr');
      // A failed Dapr run still prints the other figures, with why, and exits non-zero.
      await measureDapr(binDir, join(dir, 'dapr'), catalog).then((row) => rows.push(row), (error: Error) => {
        note = `Dapr run failed: ${error.message.split('\n')[0]}`;
        process.exitCode = 1;
      });
    }
  } finally {
    proxy.child.kill('SIGTERM');
    upstream.child.kill('SIGTERM');
  }
  const out = summary(rows, note, profiled);
  if (flag('json')) console.log(JSON.stringify(out, null, 2));
  else printTable(out);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
