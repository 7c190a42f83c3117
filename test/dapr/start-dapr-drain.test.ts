// SIGTERM to `npm run start:dapr` while streams are in flight: the supervisor waits for the
// gateway's drain (GATEWAY_DRAIN_TIMEOUT_MS, here beyond the 10 s it gives other processes), so
// every stream that relayed output is cut by the drain, told the gateway is shutting down and
// charged (balance and ledger, read after the topology is started again on the same data).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisLedgerStore } from '../../services/ledger/redis-store';
import { planPorts } from '../../topology/ports';
import { balance, fundedAccount, hello } from '../support/api';
import { passes } from '../support/eventually';
import { ADMIN_TOKEN, ROOT, waitFor } from '../support/processes';
import { alive, descendants } from '../support/process-tree';

jest.setTimeout(300_000);

const BASE = 14000;
const URL = `http://127.0.0.1:${BASE}`;
const DRAIN_MS = 12_000;
const FUNDS = 100_000_000;

interface Supervisor {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

async function startDapr(dataDir: string): Promise<Supervisor> {
  let output = '';
  const child = spawn(process.execPath, [join(ROOT, 'dist/topology/start-dapr.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(BASE),
      GATEWAY_DAPR_BASE_PORT: String(BASE),
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      GATEWAY_LOG_LEVEL: 'warn',
      GATEWAY_DRAIN_TIMEOUT_MS: String(DRAIN_MS),
      GATEWAY_HOLD_TTL_MS: '600000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitFor(`${URL}/readyz`, 150_000, child, () => output);
  return { child, output: () => output, exited };
}

/** A stream that has relayed a few tokens; `done` is all it relayed once it ends (or breaks). */
async function startStream(apiKey: string): Promise<{ done: Promise<string> }> {
  const response = await fetch(`${URL}/api/open/v1/models/sim-chat/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-sim-directive': 'tokens=400;stream-delay=100' },
    body: JSON.stringify({ ...hello, max_tokens: 500, stream: true, stream_options: { include_usage: true } }),
  });
  const reader = response.body!.getReader();
  let text = '';
  const done = (async () => {
    try {
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) return text;
        text += new TextDecoder().decode(value);
      }
    } catch {
      return text; // the connection broke
    }
  })();
  while (!text.includes('tok1')) await new Promise((r) => setTimeout(r, 10));
  return { done };
}

describe('npm run start:dapr stopping with streams in flight', () => {
  const dir = mkdtempSync(join(tmpdir(), 'start-dapr-drain-'));
  let supervisor: Supervisor | undefined;

  afterAll(async () => {
    if (supervisor && supervisor.child.exitCode === null) {
      supervisor.child.kill('SIGTERM');
      await supervisor.exited;
    }
  });

  it('when SIGTERM arrives, then the gateway drains for its full drain timeout, every stream that relayed output is charged, and the supervisor exits 0 leaving nothing behind', async () => {
    supervisor = await startDapr(dir);
    const accounts = await Promise.all(Array.from({ length: 4 }, () => fundedAccount(URL, FUNDS)));
    const streams = await Promise.all(accounts.map(({ apiKey }) => startStream(apiKey)));
    const started = descendants(supervisor.child.pid!).map((p) => p.pid);
    const sigterm = Date.now();
    supervisor.child.kill('SIGTERM');
    const relayed = await Promise.all(streams.map((s) => s.done));
    expect(await supervisor.exited).toBe(0);
    const elapsed = Date.now() - sigterm;
    expect(started.filter(alive)).toEqual([]);
    const tokens = relayed.map((text) => (text.match(/"content":"/g) ?? []).length);
    for (const n of tokens) expect(n).toBeGreaterThan(1);

    // Started again on the same data: each stream's hold was settled for what it relayed.
    supervisor = await startDapr(dir);
    const ledger = await RedisLedgerStore.connect(`redis://127.0.0.1:${planPorts({ basePort: BASE, gatewayInstances: 1, env: {} }).redis}`);
    try {
      for (const [i, { accountId, apiKey }] of accounts.entries()) {
        const after = await balance(URL, apiKey);
        expect(after.held).toBe(0);
        // Output at 400 per relayed token, input at 100 per token (a few tokens).
        expect(after.balance).toBeLessThanOrEqual(FUNDS - tokens[i] * 400);
        expect(after.balance).toBeGreaterThan(FUNDS - tokens[i] * 400 - 10_000);
        await passes(async () => expect((await ledger.account(accountId, 'pool-3')).balance).toBe(after.balance), 30_000);
      }
    } finally {
      await ledger.close();
    }
    // The gateway was given its drain: the streams were cut by it (and told so), not by a SIGKILL at 10 s.
    expect(elapsed).toBeGreaterThanOrEqual(DRAIN_MS - 500);
    for (const text of relayed) {
      expect(text).not.toContain('[DONE]');
      expect(text.trim().split('\n\n').at(-1)).toContain('"code":"gateway_shutting_down"');
    }
  });
});
