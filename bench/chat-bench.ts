// Benchmark of the chat route with full billing (hold, settle, usage event, ledger entry)
// against a local OpenAI-compatible upstream, each figure as a ratio to a direct call to the
// same upstream in the same run.
//   npm run bench                 # embedded host
//   npm run bench -- --dapr       # also the Dapr topology
// Options: --requests N (default 3000), --concurrency C (default 32), --json

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { fundedAccount } from '../test/support/api';
import { writeTestCatalog } from '../test/support/catalog';
import { ADMIN_TOKEN, startGateway } from '../test/support/processes';
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

function report(name: string, direct: Figures, via: Figures) {
  return {
    host: name,
    added_p50_ms: +(via.p50 - direct.p50).toFixed(3),
    added_p99_ms: +(via.p99 - direct.p99).toFixed(3),
    added_ttft_p50_ms: +(via.ttft50 - direct.ttft50).toFixed(3),
    throughput_ratio: +(via.rps / direct.rps).toFixed(3),
    direct: { p50_ms: +direct.p50.toFixed(3), p99_ms: +direct.p99.toFixed(3), rps: Math.round(direct.rps), ttft_p50_ms: +direct.ttft50.toFixed(3) },
    gateway: { p50_ms: +via.p50.toFixed(3), p99_ms: +via.p99.toFixed(3), rps: Math.round(via.rps), ttft_p50_ms: +via.ttft50.toFixed(3) },
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const upstream = await startUpstream();
  const catalog = writeTestCatalog(join(dir, 'catalog.json'), upstream.url);
  const upstreamOrigin = new URL(upstream.url).origin;
  const direct: Target = { name: 'direct', origin: upstreamOrigin, path: '/v1/chat/completions', headers: {} };
  const results = [];

  const gateway = await startGateway({ GATEWAY_DATA_DIR: join(dir, 'embedded'), GATEWAY_CATALOG_FILE: catalog, GATEWAY_LOG_LEVEL: 'error' });
  try {
    const { apiKey } = await fundedAccount(gateway.url, 9_000_000_000_000_000);
    const embedded: Target = { name: 'embedded', origin: gateway.url, path: '/api/open/v1/models/upstream-chat/chat', headers: { authorization: `Bearer ${apiKey}` } };
    const directFigures = await measure(direct);
    results.push(report('embedded', directFigures, await measure(embedded)));
  } finally {
    await gateway.stop();
  }

  if (args.includes('--dapr')) {
    const topology = await startTopology({ basePort: 23000, dataDir: join(dir, 'dapr'), env: { GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_CATALOG_FILE: catalog, GATEWAY_LOG_LEVEL: 'error' } });
    try {
      const { apiKey } = await fundedAccount(topology.gatewayUrls[0], 9_000_000_000_000_000);
      const dapr: Target = { name: 'dapr', origin: topology.gatewayUrls[0], path: '/api/open/v1/models/upstream-chat/chat', headers: { authorization: `Bearer ${apiKey}` } };
      const directFigures = await measure(direct);
      results.push(report('dapr', directFigures, await measure(dapr)));
    } finally {
      await topology.stop();
    }
  }
  await upstream.close();
  console.log(JSON.stringify({ requests: REQUESTS, concurrency: CONCURRENCY, results }, null, 2));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
