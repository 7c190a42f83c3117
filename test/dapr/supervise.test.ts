// `npm run start:dapr` supervises its processes as Kubernetes would: a kill -9 of the actors app
// is followed by a restart of that app alone (after a short backoff) while everything else keeps
// serving; before, the whole topology was torn down and the runner exited 1.

import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chat, fundedAccount, hello } from '../support/api';
import { passes } from '../support/eventually';
import { ADMIN_TOKEN, ROOT, waitFor } from '../support/processes';
import { alive, descendants, type ProcessRow } from '../support/process-tree';

jest.setTimeout(240_000);

const PORT = 16200;
const URL = `http://127.0.0.1:${PORT}`;

/** Every process below `root`, with its command line. */
const only = (procs: ProcessRow[], entrypoint: string): ProcessRow => {
  const matching = procs.filter((p) => p.args.includes(entrypoint));
  if (matching.length !== 1) throw new Error(`expected one process running ${entrypoint}, found ${JSON.stringify(matching)}`);
  return matching[0]!;
};

describe('npm run start:dapr supervises its processes', () => {
  let runner: ChildProcessByStdio<null, Readable, Readable>;
  let output = '';
  /** A test's body; when it fails, what the runner printed (each crash, each restart) is shown beside the failure. */
  const telling = (body: () => Promise<void>) => async () => {
    try {
      await body();
    } catch (err) {
      console.error(`npm run start:dapr printed (its last 8,000 characters):\n${output.slice(-8000)}`);
      throw err;
    }
  };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'start-dapr-supervise-'));
    runner = spawn(process.execPath, [join(ROOT, 'dist/topology/start-dapr.js')], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(PORT), GATEWAY_DAPR_BASE_PORT: String(PORT), GATEWAY_DATA_DIR: dir, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    runner.stdout.on('data', (d) => (output += d));
    runner.stderr.on('data', (d) => (output += d));
    await waitFor(`${URL}/readyz`, 120_000, runner, () => output);
  });

  afterAll(async () => {
    if (runner.exitCode !== null || runner.signalCode !== null) return;
    const exited = new Promise((resolve) => runner.once('exit', resolve));
    runner.kill('SIGTERM');
    await exited;
  });

  it('when the actors app is killed with SIGKILL, then only it is restarted and chats succeed again within seconds, the gateway never restarted', telling(async () => {
    const { apiKey } = await fundedAccount(URL, 10_000_000);
    expect((await chat(URL, apiKey, { ...hello, max_tokens: 5 })).status).toBe(200);

    const before = descendants(runner.pid!);
    const gateway = only(before, 'dist/services/gateway/main.js');
    const actors = only(before, 'dist/actors/host/dapr-main.js');
    const others = before.filter((p) => p.pid !== actors.pid);

    const killedAt = Date.now();
    process.kill(actors.pid, 'SIGKILL');

    // Chats come back by themselves: the first that succeeds, and when.
    let answered: Awaited<ReturnType<typeof chat>> | undefined;
    while (Date.now() - killedAt < 60_000) {
      answered = await chat(URL, apiKey, { ...hello, max_tokens: 5 }).catch(() => undefined);
      if (answered?.status === 200) break;
      if (runner.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const recoveredInMs = Date.now() - killedAt;
    expect({ runnerExit: runner.exitCode, status: answered?.status }).toEqual({ runnerExit: null, status: 200 });
    expect(recoveredInMs).toBeLessThan(15_000);

    // A chat may succeed before the restart (the gateway serves it from the account's funds lease,
    // without an actor call): wait for the new process, then show that it serves a new account,
    // whose creation and first chat both need the actors app.
    await passes(async () => expect(only(descendants(runner.pid!), 'dist/actors/host/dapr-main.js').pid).not.toBe(actors.pid), 30_000);
    await passes(async () => expect((await fetch(`${URL}/readyz`)).status).toBe(200), 30_000);
    // (readiness asks whether actor calls can be placed, not whether the new app listens yet)
    const fresh = await passes(() => fundedAccount(URL, 1_000_000), 30_000);
    expect((await chat(URL, fresh.apiKey, { ...hello, max_tokens: 5 })).status).toBe(200);

    // The actors app runs again under a new pid; the gateway and every other process are the same.
    const after = descendants(runner.pid!);
    expect(only(after, 'dist/services/gateway/main.js').pid).toBe(gateway.pid);
    expect(others.filter((p) => !alive(p.pid))).toEqual([]);
    expect(output).toMatch(/actors exited unexpectedly \(code null, signal SIGKILL\); restarting it in 0\.5 s/);
  }));

  it('when the actors sidecar and then placement are killed with SIGKILL, then each is restarted and chats succeed again, the gateway never restarted', telling(async () => {
    const { apiKey } = await fundedAccount(URL, 10_000_000);
    const gateway = only(descendants(runner.pid!), 'dist/services/gateway/main.js');
    for (const marker of ['--app-id actors', '/bin/placement']) {
      const victim = only(descendants(runner.pid!), marker);
      const killedAt = Date.now();
      process.kill(victim.pid, 'SIGKILL');
      const answer = await passes(async () => {
        expect(runner.exitCode).toBeNull();
        const response = await chat(URL, apiKey, { ...hello, max_tokens: 5 });
        expect(response.status).toBe(200);
        return response;
      }, 60_000);
      expect(answer.status).toBe(200);
      expect(Date.now() - killedAt).toBeLessThan(30_000);
      // A chat may succeed before the restart (sidecars keep the placement table): wait for the new process.
      await passes(async () => expect(only(descendants(runner.pid!), marker).pid).not.toBe(victim.pid), 30_000);
      await passes(async () => expect((await fetch(`${URL}/readyz`)).status).toBe(200), 30_000);
    }
    expect(only(descendants(runner.pid!), 'dist/services/gateway/main.js').pid).toBe(gateway.pid);
  }));

  it('when it is then sent SIGTERM, then it still stops everything in order and exits 0', async () => {
    expect(runner.exitCode).toBeNull();
    const started = descendants(runner.pid!).map((p) => p.pid);
    const exited = new Promise<number | null>((resolve) => runner.once('exit', (code) => resolve(code)));
    runner.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(started.filter(alive)).toEqual([]);
  });
});
