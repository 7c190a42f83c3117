// The chat bench's load: per-request latencies and time to first token from a careful sequential
// client (one keep-alive connection, sub-millisecond timing), and throughput at concurrency C from
// autocannon, whose latencies are whole milliseconds (too coarse for the c=1 figures) but whose
// request loop is light enough to drive a bare Node proxy well past what the gateway does.

import { Client } from 'undici';

export interface Target {
  name: string;
  origin: string;
  path: string;
  headers: Record<string, string>;
}

export interface Figures {
  /** Sequential (c=1) latency of a whole JSON answer, ms. */
  p50: number;
  p99: number;
  /** Sequential time to the first byte of a streamed answer's body, ms. */
  ttft50: number;
  ttft99: number;
  /** Answers per second at concurrency C. */
  rps: number;
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
}

type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
// autocannon ships no types; this is the part of its programmatic API the bench uses.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as Autocannon;

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function one(client: Client, target: Target, payload: string, firstByte: boolean): Promise<number> {
  const started = performance.now();
  const response = await client.request({ method: 'POST', path: target.path, headers: { 'content-type': 'application/json', ...target.headers }, body: payload });
  if (response.statusCode !== 200) throw new Error(`${target.name}: ${response.statusCode} ${await response.body.text()}`);
  if (firstByte) {
    let elapsed = 0;
    for await (const chunk of response.body) {
      if (elapsed === 0 && (chunk as Buffer).length > 0) elapsed = performance.now() - started;
    }
    return elapsed;
  }
  await response.body.text();
  return performance.now() - started;
}

/** `count` requests one after another on one connection, sorted latencies (ms). */
export async function sequential(target: Target, payload: string, count: number, firstByte = false): Promise<number[]> {
  const client = new Client(target.origin, { keepAliveTimeout: 30_000, pipelining: 1 });
  try {
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) latencies.push(await one(client, target, payload, firstByte));
    return latencies.sort((a, b) => a - b);
  } finally {
    await client.close();
  }
}

/** Answers per second over `seconds` with `connections` connections, each one request at a time. */
export async function throughput(target: Target, payload: string, connections: number, seconds: number): Promise<number> {
  const result = await autocannon({
    url: `${target.origin}${target.path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: payload,
    connections,
    pipelining: 1,
    duration: seconds,
  });
  const failed = result.errors + result.timeouts + result.non2xx;
  if (failed > 0) throw new Error(`${target.name}: ${failed} of ${failed + result['2xx']} requests failed under load (errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx})`);
  return result['2xx'] / result.duration;
}

export interface MeasureOptions {
  /** Sequential JSON calls for p50/p99. */
  requests: number;
  /** Sequential streamed calls for the time to first token. */
  streams: number;
  concurrency: number;
  /** Seconds of each throughput round. */
  seconds: number;
}

export type Latencies = Omit<Figures, 'rps'>;

/** A target's sequential calls so far: each JSON call's latency and each stream's time to first token, ms. */
export interface Samples {
  json: number[];
  ttft: number[];
}

/**
 * Warm-up: sequential calls, then `seconds` under load, then sequential calls and streams again.
 * It must outlast V8's tiering up of the request path: on the embedded gateway, optimizations go
 * on for about 11,000 chats, most of the path reaching its top tier together near the 10,000th,
 * after which a call costs 10–15 % less (docs/benchmarks.md). A one-second warm-up left the c=1
 * calls measured before that. And one at a time, calls take paths that load does not (a commit
 * of one turn, a socket idle between calls): after the load alone, V8 still compiled some 120
 * functions during the next 2,000 sequential calls, on its background threads, which on two cores
 * compete with the upstream and the client (the calls they overlapped made the p99). After 3,000
 * sequential calls more, it compiled about 30 (docs/benchmarks.md, 2026-11-29, evening).
 */
export async function warmUp(target: Target, body: string, concurrency: number, seconds: number, streamBody?: string): Promise<void> {
  await sequential(target, body, 200);
  await throughput(target, body, concurrency, seconds);
  await sequential(target, body, SEQUENTIAL_WARM_UP_CALLS);
  if (streamBody !== undefined) await sequential(target, streamBody, SEQUENTIAL_WARM_UP_CALLS / 10, true);
}

/** Sequential calls at the end of each target's warm-up (and a tenth as many streams). */
export const SEQUENTIAL_WARM_UP_CALLS = 3000;

/** Seconds of load in each target's warm-up, unless `--warm-up S` says otherwise. */
export const WARM_UP_SECONDS = 5;

/** One round's share of a target's sequential calls, added to its samples. */
export async function sample(target: Target, body: string, streamBody: string, calls: number, streams: number, into: Samples): Promise<void> {
  into.json.push(...(await sequential(target, body, calls)));
  into.ttft.push(...(await sequential(target, streamBody, streams, true)));
}

/** The percentiles of a target's samples (of all its rounds together). */
export function latenciesOf(samples: Samples): Latencies {
  const json = [...samples.json].sort((a, b) => a - b);
  const ttft = [...samples.ttft].sort((a, b) => a - b);
  return { p50: percentile(json, 0.5), p99: percentile(json, 0.99), ttft50: percentile(ttft, 0.5), ttft99: percentile(ttft, 0.99) };
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
