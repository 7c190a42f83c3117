// `npm run start:dapr` killed with SIGKILL leaves nothing running: before, Redis, placement,
// scheduler, the sidecars and the apps ran on as orphans holding their ports, and the next start
// refused ("ports already in use"). Now every child dies with its runner (setpriv --pdeathsig,
// topology/orphan-guard.ts), and a runner whose children could not die with it (shown here with
// the test-only GATEWAY_TEST_LEAVE_ORPHANS) has them stopped by the next start on the same data
// directory, from its run record (topology/run-record.ts).

import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { isRunning, processStartTime, type ProcessIdentity } from '../../topology/run-record';
import { portIsFree } from '../../topology/ports';
import { eventually } from '../support/eventually';
import { ADMIN_TOKEN, ROOT, waitFor } from '../support/processes';
import { descendants } from '../support/process-tree';

jest.setTimeout(300_000);

const PORT = 17400;
const URL = `http://127.0.0.1:${PORT}`;

interface Runner {
  child: ChildProcessByStdio<null, Readable, Readable>;
  output: () => string;
}

/** Every process this file started, to kill in afterAll should a check fail (by pid and start time). */
const started: ProcessIdentity[] = [];
const runners: Runner[] = [];

function startRunner(dataDir: string, env: Record<string, string> = {}): Runner {
  let output = '';
  const child = spawn(process.execPath, [join(ROOT, 'dist/topology/start-dapr.js')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(PORT), GATEWAY_DAPR_BASE_PORT: String(PORT), GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const runner = { child, output: () => output };
  runners.push(runner);
  return runner;
}

/** The runner's processes once it serves (redis, placement, scheduler, 3 apps, 3 sidecars). */
async function serving(runner: Runner): Promise<ProcessIdentity[]> {
  // Its own gateway first: until then /readyz may be answered by a dead run's orphan.
  const own = await eventually(async () => descendants(runner.child.pid!).some((p) => p.args.includes('dist/services/gateway/main.js')), (yes) => yes || runner.child.exitCode !== null, 150_000);
  if (!own) throw new Error(`the runner started no gateway:\n${runner.output()}`);
  await waitFor(`${URL}/readyz`, 150_000, runner.child, runner.output);
  const procs = descendants(runner.child.pid!).flatMap((p) => {
    const startTime = processStartTime(p.pid);
    return startTime === undefined ? [] : [{ pid: p.pid, startTime, args: p.args }];
  });
  started.push(...procs);
  expect(procs.length).toBeGreaterThanOrEqual(9);
  return procs;
}

async function killHard(runner: Runner): Promise<void> {
  const exited = new Promise((resolve) => runner.child.once('exit', resolve));
  runner.child.kill('SIGKILL');
  await exited;
}

const stillRunning = (procs: ProcessIdentity[]) => procs.filter(isRunning);

afterAll(() => {
  // Should a check fail: the runners (their children die with them) and whatever a runner left.
  for (const r of runners) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  for (const p of stillRunning(started)) {
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {
      try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  }
});

describe('npm run start:dapr killed with SIGKILL', () => {
  it('when its runner is killed with SIGKILL, then every process it started is gone within seconds and its ports are free', async () => {
    const runner = startRunner(mkdtempSync(join(tmpdir(), 'orphans-pdeathsig-')));
    const procs = await serving(runner);
    await killHard(runner);

    const left = await eventually(async () => stillRunning(procs), (l) => l.length === 0, 10_000);
    expect(left).toEqual([]);
    const busyPorts = async () => {
      const busy = [];
      for (const port of [PORT, PORT + 1, PORT + 2, PORT + 6, PORT + 11, PORT + 17, PORT + 24]) if (!(await portIsFree(port))) busy.push(port);
      return busy;
    };
    expect(await eventually(busyPorts, (busy) => busy.length === 0, 5_000)).toEqual([]);
  });

  it('when its children outlived it, then the next start on the same data directory stops them and starts on the same ports', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'orphans-record-'));
    const first = startRunner(dataDir, { GATEWAY_TEST_MODE: 'true', GATEWAY_TEST_LEAVE_ORPHANS: 'true' });
    const orphans = await serving(first);
    await killHard(first);
    // What the runner did before: its children run on (the first check above fails without the guard).
    await new Promise((r) => setTimeout(r, 1_000));
    expect(stillRunning(orphans).length).toBeGreaterThan(0);
    expect(await portIsFree(PORT)).toBe(false);

    const second = startRunner(dataDir);
    const procs = await serving(second);
    expect(stillRunning(orphans)).toEqual([]);
    expect(second.output()).toMatch(/\[supervisor\] a previous run \(pid \d+\) died leaving .*: stopping them/);
    expect((await fetch(`${URL}/readyz`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => second.child.once('exit', (code) => resolve(code)));
    second.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stillRunning(procs)).toEqual([]);
  });

  it('when GATEWAY_TEST_LEAVE_ORPHANS is set outside test mode, then the runner refuses to start', async () => {
    const runner = startRunner(mkdtempSync(join(tmpdir(), 'orphans-refused-')), { GATEWAY_TEST_LEAVE_ORPHANS: 'true', GATEWAY_TEST_MODE: 'false' });
    const code = await new Promise<number | null>((resolve) => runner.child.once('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(runner.output()).toMatch(/GATEWAY_TEST_LEAVE_ORPHANS .* accepted only with GATEWAY_TEST_MODE=true/);
  });
});
