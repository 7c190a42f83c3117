// Where a process's CPU time went, from a V8 .cpuprofile (node --cpu-prof): self time by
// category (LMDB, actors, sockets, Express, …) and the top functions, each also in µs per
// request when the number of requests is given. Start-up (module loading) is left out.
//   node dist/bench/cpu-profile.js <file.cpuprofile> [--requests N] [--top K]
// The chat bench writes and summarizes the embedded gateway's profile with --cpu-prof.

import '../lib/node-version'; // first: stops on Node older than 24 with the way out
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** First match wins: [category, test on the frame's url or function name]. */
const CATEGORIES: readonly (readonly [string, (frame: CallFrame) => boolean])[] = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['socket writes (system calls)', (f) => f.url === '' && (f.functionName === 'writev' || f.functionName === 'writeUtf8String' || f.functionName === 'writeBuffer')],
  ['LMDB + msgpack (actor state, ledger)', (f) => /node_modules\/(lmdb|msgpackr|ordered-binary)\//.test(f.url)],
  ['actor runtime + actors', (f) => /\/dist\/actors\//.test(f.url)],
  ['ledger', (f) => /\/dist\/services\/ledger\//.test(f.url)],
  ['Express + router', (f) => /node_modules\/(express|router|path-to-regexp|finalhandler|send|content-type|mime-types|mime-db|on-finished|debug|statuses|encodeurl|parseurl|type-is|accepts|negotiator|fresh|http-errors|media-typer|vary|qs|proxy-addr)\//.test(f.url)],
  ['undici (provider HTTP client)', (f) => /node_modules\/undici\//.test(f.url)],
  ['prom-client', (f) => /node_modules\/prom-client\//.test(f.url)],
  ['pino', (f) => /node_modules\/(pino|sonic-boom|fast-redact|thread-stream)\//.test(f.url)],
  ['zod', (f) => /node_modules\/zod\//.test(f.url)],
  ['gateway middleware', (f) => /\/dist\/services\/gateway\/middleware\//.test(f.url)],
  ['request context, tracing, metrics, logger', (f) => /\/dist\/lib\/(request-context|tracing|metrics|logger)\.js/.test(f.url)],
  ['chat use case, routes, wires', (f) => /\/dist\/services\/gateway\/(chat|routes)\//.test(f.url)],
  ['provider adapters', (f) => /\/dist\/providers\//.test(f.url)],
  ['other gateway code, catalog, lib', (f) => /\/dist\//.test(f.url)],
  ['Node HTTP', (f) => /^node:(_http_|http)/.test(f.url) || f.functionName === 'parserOnHeadersComplete'],
  ['Node crypto', (f) => /^node:(internal\/)?crypto/.test(f.url)],
  ['Node streams, net, events, timers, async context', (f) => /^node:(net|events|timers|async_hooks|internal\/(streams|stream_base_commons|timers|process|async_hooks|async_context_frame|async_local_storage|event_target|abort_controller))/.test(f.url)],
  ['V8 / native (unattributed)', (f) => f.functionName === '(program)' || f.functionName === '(root)'],
];

export interface ProfileSummary {
  /** Sampled time the process was running JavaScript or native code (idle excluded), ms. */
  busyMs: number;
  idleMs: number;
  categories: { name: string; ms: number; pct: number; usPerRequest?: number }[];
  functions: { name: string; ms: number; pct: number; usPerRequest?: number }[];
}

export function summarizeProfile(profile: CpuProfile, requests?: number, top = 25): ProfileSummary {
  // Start-up (loading modules, composing the app) runs under the main module's frame: left out.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const startup = new Map<number, boolean>();
  const isStartup = (id: number): boolean => {
    const known = startup.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const up = parent.get(id);
    const result = node.callFrame.url === 'node:internal/main/run_main_module' || (up !== undefined && isStartup(up));
    startup.set(id, result);
    return result;
  };
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    if (isStartup(profile.samples[i])) continue;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    const frame = node.callFrame;
    const category = CATEGORIES.find(([, test]) => test(frame))?.[0] ?? 'other Node internals';
    if (category === 'idle') {
      idle += us;
      continue;
    }
    busy += us;
    byCategory.set(category, (byCategory.get(category) ?? 0) + us);
    const modules = frame.url.lastIndexOf('/node_modules/');
    const where = modules >= 0 ? frame.url.slice(modules + 1) : frame.url.replace(/^.*?\/(dist\/)/, '$1');
    const name = `${frame.functionName || '(anonymous)'}${where ? ` ${where}:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  const rows = (map: Map<string, number>, limit: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([name, us]) => ({
    name,
    ms: Math.round(us / 1000),
    pct: +((100 * us) / busy).toFixed(1),
    ...(requests ? { usPerRequest: Math.round(us / requests) } : {}),
  }));
  return { busyMs: Math.round(busy / 1000), idleMs: Math.round(idle / 1000), categories: rows(byCategory, byCategory.size), functions: rows(byFunction, top) };
}

export function printSummary(summary: ProfileSummary, requests?: number): void {
  const perRequest = requests ? `, ${Math.round((summary.busyMs * 1000) / requests)} µs per request over ${requests} requests` : '';
  console.log(`CPU profile: busy ${summary.busyMs} ms, idle ${summary.idleMs} ms${perRequest}`);
  const table = (title: string, rows: ProfileSummary['categories']) => {
    console.log(`\n| ${title} | % of busy | ms |${requests ? ' µs/request |' : ''}`);
    console.log(`|---|---|---|${requests ? '---|' : ''}`);
    for (const r of rows) console.log(`| ${r.name} | ${r.pct} | ${r.ms} |${requests ? ` ${r.usPerRequest} |` : ''}`);
  };
  table('self time by category', summary.categories);
  table('top functions (self time)', summary.functions);
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : undefined;
  };
  const requests = option('requests');
  const profile = JSON.parse(readFileSync(args[0], 'utf8')) as CpuProfile;
  printSummary(summarizeProfile(profile, requests, option('top') ?? 25), requests);
}
