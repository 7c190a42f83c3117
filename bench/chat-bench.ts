// Benchmark of the chat route with full billing (hold, settle, usage event, ledger entry)
// against a local OpenAI-compatible upstream, each figure beside, in the same run, a direct call
// to the upstream and a call through a bare pass-through Node proxy (bench/bare-proxy.ts): added
// latency p50/p99 at c=1 and time to first token against direct, throughput at c=32 as % of the
// bare proxy's (and, on Dapr, of the embedded host's), and the gateway's resident set.
//   npm run bench                 # embedded host
//   npm run bench -- --dapr       # also the Dapr topology
// Options: --requests N (default 3000), --concurrency C (default 32), --json (the figures as JSON)

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { fundedAccount } from '../test/support/api';
import { writeTestCatalog } from '../test/support/catalog';
import { ADMIN_TOKEN, ROOT, startGateway } from '../test/support/processes';
import { startUpstream } from '../test/support/upstream';
import { startTopology } from '../topology/topology';

interface Target {
  name: string;
  origin: string;
  path: string;
  headers: Record<string, string>;
}

interface Figures {
  p50: number;
  p99: number;
  rps: number;
  ttft50: number;
}

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const REQUESTS = option('requests', 3000);
const CONCURRENCY = option('concurrency', 32);
const body = JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 });
const streamBody = JSON.stringify({ model: 'up-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16, stream: true });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function one(pool: Pool, target: Target, payload: string, firstByte = false): Promise<number> {
  const started = performance.now();
  const response = await pool.request({ method: 'POST', path: target.path, headers: { 'content-type': 'application/json', ...target.headers }, body: payload });
  if (response.statusCode !== 200) throw new Error(`${target.name}: ${response.statusCode} ${await response.body.text()}`);
  if (firstByte) {
    for await (const chunk of response.body) {
      if (chunk.length > 0) break;
    }
    const elapsed = performance.now() - started;
    response.body.destroy();
    return elapsed;
  }
  await response.body.text();
  return performance.now() - started;
}

async function measure(target: Target): Promise<Figures> {
  const pool = new Pool(target.origin, { connections: CONCURRENCY, keepAliveTimeout: 30_000 });
  for (let i = 0; i < 200; i++) await one(pool, target, body); // warm-up
  const latencies: number[] = [];
  for (let i = 0; i < REQUESTS / 2; i++) latencies.push(await one(pool, target, body));
  latencies.sort((a, b) => a - b);
  const ttfts: number[] = [];
  for (let i = 0; i < 300; i++) ttfts.push(await one(pool, target, streamBody, true));
  ttfts.sort((a, b) => a - b);
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next++ < REQUESTS) await one(pool, target, body);
  }));
  const rps = REQUESTS / ((performance.now() - started) / 1000);
  await pool.close();
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), rps, ttft50: percentile(ttfts, 0.5) };
}

interface Memory {
  rss_mb: number;
  peak_rss_mb: number;
  /** Of rss_mb: heap and buffers (the rest is file-backed: the node binary's pages, LMDB's map). */
  anon_mb: number;
}

/** The kernel's resident set of a process now, its peak so far and its anonymous part, MB. */
function rss(pid: number | undefined): Memory | undefined {
  if (pid === undefined) return undefined;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string) => Math.round(Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? 0) / 1024);
  return { rss_mb: mb('VmRSS'), peak_rss_mb: mb('VmHWM'), anon_mb: mb('RssAnon') };
}

const ms = (n: number) => +n.toFixed(3);
const pct = (n: number) => +(n * 100).toFixed(1);
const shown = (f: Figures) => ({ p50_ms: ms(f.p50), p99_ms: ms(f.p99), ttft_p50_ms: ms(f.ttft50), rps: Math.round(f.rps) });

/** One host's figures beside the direct call's and the bare proxy's of the same run. */
function report(host: string, direct: Figures, bare: Figures, via: Figures, memory: Record<string, ReturnType<typeof rss>>) {
  const added = (f: Figures) => ({ p50_ms: ms(f.p50 - direct.p50), p99_ms: ms(f.p99 - direct.p99), ttft_p50_ms: ms(f.ttft50 - direct.ttft50) });
  return {
    host,
    added_vs_direct: { gateway: added(via), bare_proxy: added(bare) },
    throughput_c32: { gateway_rps: Math.round(via.rps), bare_proxy_rps: Math.round(bare.rps), direct_rps: Math.round(direct.rps), pct_of_bare_proxy: pct(via.rps / bare.rps), pct_of_direct: pct(via.rps / direct.rps) },
    memory,
    direct: shown(direct),
    bare_proxy: shown(bare),
    gateway: shown(via),
  };
}

/** The bare proxy (bench/bare-proxy.ts) as its own process, like the gateway. */
async function startBareProxy(upstreamOrigin: string): Promise<{ origin: string; pid: number | undefined; stop(): void }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/bench/bare-proxy.js'), upstreamOrigin], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare proxy exited (${code})`)));
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(String(chunk));
      if (match) resolve(Number(match[1]));
    });
  });
  return { origin: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => child.kill('SIGTERM') };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const upstream = await startUpstream();
  const catalog = writeTestCatalog(join(dir, 'catalog.json'), upstream.url);
  const upstreamOrigin = new URL(upstream.url).origin;
  const direct: Target = { name: 'direct', origin: upstreamOrigin, path: '/v1/chat/completions', headers: {} };
  const proxy = await startBareProxy(upstreamOrigin);
  const bareTarget: Target = { name: 'bare proxy', origin: proxy.origin, path: '/v1/chat/completions', headers: {} };
  const results = [];
  let embeddedRps: number | undefined;

  const gateway = await startGateway({ GATEWAY_DATA_DIR: join(dir, 'embedded'), GATEWAY_CATALOG_FILE: catalog, GATEWAY_LOG_LEVEL: 'error' });
  try {
    const { apiKey } = await fundedAccount(gateway.url, 9_000_000_000_000_000);
    const embedded: Target = { name: 'embedded', origin: gateway.url, path: '/api/open/v1/models/upstream-chat/chat', headers: { authorization: `Bearer ${apiKey}` } };
    const directFigures = await measure(direct);
    const bareFigures = await measure(bareTarget);
    const via = await measure(embedded);
    embeddedRps = via.rps;
    results.push(report('embedded', directFigures, bareFigures, via, { gateway: rss(gateway.child.pid), bare_proxy: rss(proxy.pid) }));
  } finally {
    await gateway.stop();
  }

  if (args.includes('--dapr')) {
    const topology = await startTopology({ basePort: 23000, dataDir: join(dir, 'dapr'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_CATALOG_FILE: catalog, GATEWAY_LOG_LEVEL: 'error' } });
    try {
      const { apiKey } = await fundedAccount(topology.gatewayUrls[0], 9_000_000_000_000_000);
      const dapr: Target = { name: 'dapr', origin: topology.gatewayUrls[0], path: '/api/open/v1/models/upstream-chat/chat', headers: { authorization: `Bearer ${apiKey}` } };
      const directFigures = await measure(direct);
      const bareFigures = await measure(bareTarget);
      const via = await measure(dapr);
      const memory = { gateway: rss(topology.pid('gateway')), gateway_sidecar: rss(topology.pid('daprd-gateway')), actors: rss(topology.pid('actors')), bare_proxy: rss(proxy.pid) };
      results.push({ ...report('dapr', directFigures, bareFigures, via, memory), throughput_pct_of_embedded: embeddedRps ? pct(via.rps / embeddedRps) : undefined });
    } finally {
      await topology.stop();
    }
  }
  proxy.stop();
  await upstream.close();
  const out = { node: process.version, date: new Date().toISOString(), requests: REQUESTS, concurrency: CONCURRENCY, results };
  if (args.includes('--json')) console.log(JSON.stringify(out, null, 2));
  else printTable(out);
}

/** The figures as a table (--json prints them whole). */
function printTable(out: { node: string; date: string; requests: number; concurrency: number; results: ReturnType<typeof report>[] }): void {
  console.log(`chat bench, Node ${out.node}, ${out.date}, ${out.requests} requests, throughput at c=${out.concurrency}, latencies at c=1`);
  for (const r of out.results) {
    const dapr = (r as { throughput_pct_of_embedded?: number }).throughput_pct_of_embedded;
    console.log(`\n${r.host}`);
    console.log('                    p50 ms   p99 ms   TTFT p50 ms   req/s (c=32)   RSS MB (peak; anon)');
    const row = (name: string, f: ReturnType<typeof shown>, mem?: Memory) =>
      console.log(`  ${name.padEnd(16)} ${String(f.p50_ms).padStart(7)}  ${String(f.p99_ms).padStart(7)}  ${String(f.ttft_p50_ms).padStart(12)}  ${String(f.rps).padStart(13)}  ${mem ? `${mem.rss_mb} (${mem.peak_rss_mb}; ${mem.anon_mb})` : '-'}`.trimEnd());
    row('direct', r.direct);
    row('bare proxy', r.bare_proxy, r.memory.bare_proxy);
    row('gateway', r.gateway, r.memory.gateway);
    const a = r.added_vs_direct;
    console.log(`  added vs direct: gateway p50 ${a.gateway.p50_ms} ms, p99 ${a.gateway.p99_ms} ms, TTFT ${a.gateway.ttft_p50_ms} ms; bare proxy p50 ${a.bare_proxy.p50_ms} ms, p99 ${a.bare_proxy.p99_ms} ms, TTFT ${a.bare_proxy.ttft_p50_ms} ms`);
    console.log(`  throughput: ${r.throughput_c32.pct_of_bare_proxy} % of the bare proxy's, ${r.throughput_c32.pct_of_direct} % of direct` + (dapr !== undefined ? `; ${dapr} % of the embedded host's` : ''));
    for (const [name, mem] of Object.entries(r.memory)) if (mem && name !== 'gateway' && name !== 'bare_proxy') console.log(`  RSS ${name}: ${mem.rss_mb} MB (peak ${mem.peak_rss_mb}; anon ${mem.anon_mb})`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
