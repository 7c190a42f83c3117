// Memory benchmark of the embedded gateway: the live heap (after forced garbage collection) that
// chats and images leave behind. The gateway runs in this process (the same composition and
// Express app as `npm start`, the embedded actor host on LMDB in a temporary directory) and is
// driven over real HTTP on loopback; the upstream (OpenAI-compatible, chat and images, each image
// a base64 string of the size asked for) runs in this process too, so its only retained memory
// is the one image string it answers with.
//   npm run bench:memory
//   npm run bench:memory -- --chats 1000000 --images 10000 --image-bytes 1048576
// Options: --chats N (default 20000), --images M (default 200), --image-bytes S (base64 length,
// default 1048576), --accounts A (chats spread over A accounts, default 1), --concurrency C
// (default 16), --idle-ms I (sets GATEWAY_ACTOR_IDLE_MS and measures again once idle activations
// are dropped), --json, --heap-snapshots DIR (writes heap snapshots there at each measurement, to
// find what is retained). Needs --expose-gc; the npm script also passes --no-flush-bytecode (V8
// otherwise drops the bytecode of start-up code it has not run lately, which reads as memory freed).
// The live heap is V8's used heap after full collections, compiled code aside (the JIT's work is
// not data kept); what is kept once, not per call (the last image string stays referenced for a
// while after a run), is counted too.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { Pool } from 'undici';
import { loadConfig } from '../lib/config';
import { createLogger } from '../lib/logger';
import { createGateway, listenGateway } from '../services/gateway/app';
import { compose } from '../services/gateway/compose';
import { writeTestCatalog } from '../test/support/catalog';
import { ADMIN_TOKEN } from '../test/support/processes';
import { args, flag, option } from './cli';

const CHATS = option('chats', 20_000);
const IMAGES = option('images', 200);
const IMAGE_BYTES = option('image-bytes', 1024 * 1024);
const ACCOUNTS = option('accounts', 1);
const CONCURRENCY = option('concurrency', 16);
const IDLE_MS = option('idle-ms', 0);
const WARM_UP_CHATS = 5000;
const WARM_UP_IMAGES = 10;

const gc = (globalThis as { gc?: () => void }).gc;
const snapshotsAt = flag('heap-snapshots') ? args[args.indexOf('--heap-snapshots') + 1] : undefined;
const snapshot = (name: string) => {
  if (snapshotsAt) writeHeapSnapshot(join(snapshotsAt, `${name}.heapsnapshot`));
};

/** The live heap after full collections (repeated: weak references and finalizers need a second pass). */
async function liveHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return getHeapSpaceStatistics().reduce((sum, space) => (space.space_name.startsWith('code') ? sum : sum + space.space_used_size), 0);
}

/** An OpenAI-compatible upstream: a fixed chat completion, and images of IMAGE_BYTES base64 characters. */
async function startUpstream(): Promise<{ server: Server; url: string }> {
  const b64 = 'A'.repeat(IMAGE_BYTES - (IMAGE_BYTES % 4));
  const chat = JSON.stringify({
    id: 'chatcmpl-mem', object: 'chat.completion', created: 1, model: 'up-model',
    choices: [{ index: 0, message: { role: 'assistant', content: 'tok0 tok1 tok2 tok3' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 },
  });
  const server = createServer({ keepAlive: true }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const text = req.url === '/v1/images/generations'
        ? `{"created":${Math.floor(Date.now() / 1000)},"data":[{"b64_json":"${b64}"}]}`
        : chat;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

async function post(pool: Pool, path: string, headers: Record<string, string>, body: unknown): Promise<unknown> {
  const response = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${path}: ${response.statusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Runs `count` calls of `one` with CONCURRENCY at a time. */
async function drive(count: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
    for (let i = next++; i < count; i = next++) await one(i);
  }));
}

async function main(): Promise<void> {
  if (!gc) throw new Error('run with node --expose-gc (npm run bench:memory does)');
  const dir = mkdtempSync(join(tmpdir(), 'memory-bench-'));
  const upstream = await startUpstream();
  const config = loadConfig({
    ...process.env,
    GATEWAY_DATA_DIR: join(dir, 'data'),
    GATEWAY_CATALOG_FILE: writeTestCatalog(join(dir, 'catalog.json'), upstream.url),
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEWAY_LOG_LEVEL: 'error',
    ...(IDLE_MS > 0 ? { GATEWAY_ACTOR_IDLE_MS: String(IDLE_MS) } : {}),
  });
  const composition = await compose(config, createLogger('gateway', 'error'));
  const server = listenGateway(createGateway(composition.deps), 0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pool = new Pool(origin, { connections: CONCURRENCY, keepAliveTimeout: 60_000 });
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const keys: string[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const { accountId } = await post(pool, '/admin/v1/accounts', admin, { name: `bench-${a}` }) as { accountId: string };
    const { apiKey } = await post(pool, `/admin/v1/accounts/${accountId}/api-keys`, admin, {}) as { apiKey: string };
    await post(pool, `/admin/v1/accounts/${accountId}/credits`, admin, { amount: 9_000_000_000_000_000, reference: 'bench' });
    keys.push(apiKey);
  }
  const chatBody = { model: 'up-model', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 };
  const chat = (i: number) => post(pool, '/api/open/v1/models/upstream-chat/chat', { authorization: `Bearer ${keys[i % keys.length]}` }, chatBody).then(() => undefined);
  const image = async (i: number) => {
    const answer = await post(pool, '/api/open/v1/models/upstream-image/images/generations',
      { authorization: `Bearer ${keys[i % keys.length]}`, 'idempotency-key': crypto.randomUUID() },
      { prompt: 'a red square', response_format: 'b64_json' }) as { status: string; data?: { b64_json?: string }[] };
    if (answer.status !== 'succeeded' || answer.data?.[0]?.b64_json?.length !== IMAGE_BYTES - (IMAGE_BYTES % 4)) {
      throw new Error(`image ${i}: ${answer.status}`);
    }
  };
  const host = composition.embedded!.host;

  // Images first: the last image string stays referenced for a while, and should not be counted
  // as a chat's (freed) memory.
  await drive(WARM_UP_IMAGES, image);
  await drive(WARM_UP_CHATS, chat);
  const before = await liveHeap();
  snapshot('before');
  let started = performance.now();
  await drive(CHATS, chat);
  const chatSeconds = (performance.now() - started) / 1000;
  const afterChats = await liveHeap();
  snapshot('after-chats');
  started = performance.now();
  await drive(IMAGES, image);
  const imageSeconds = (performance.now() - started) / 1000;
  const afterImages = await liveHeap();
  snapshot('after-images');
  const actors = host.stats();
  let idle: { liveHeapMiB: number; actorHost: ReturnType<typeof host.stats> } | undefined;
  if (IDLE_MS > 0) {
    // Past the idle time and one scan (every 30 s at most).
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS + Math.min(30_000, IDLE_MS) + 500));
    idle = { liveHeapMiB: mib(await liveHeap()), actorHost: host.stats() };
    snapshot('after-idle');
  }

  await pool.close();
  await new Promise((resolve) => server.close(resolve));
  await composition.close();
  await new Promise((resolve) => upstream.server.close(resolve));
  rmSync(dir, { recursive: true, force: true });

  const perChat = (afterChats - before) / CHATS;
  const perImage = (afterImages - afterChats) / Math.max(1, IMAGES);
  const result = {
    gateway: 'in-process (compose + Express app over loopback HTTP), embedded actor host, LMDB',
    chats: CHATS, images: IMAGES, imageBase64Bytes: IMAGE_BYTES, accounts: ACCOUNTS, concurrency: CONCURRENCY,
    liveHeapMiB: { before: mib(before), afterChats: mib(afterChats), afterImages: mib(afterImages) },
    bytesPerChat: +perChat.toFixed(1),
    bytesPerImage: Math.round(perImage),
    chatsPerSecond: Math.round(CHATS / chatSeconds),
    imagesPerSecond: +(IMAGES / imageSeconds).toFixed(1),
    actorHost: actors,
    ...(idle ? { afterIdle: idle } : {}),
  };
  if (flag('json')) console.log(JSON.stringify(result));
  else console.log(JSON.stringify(result, null, 2));
}

const mib = (bytes: number) => +(bytes / 2 ** 20).toFixed(2);

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
