// The run record stops what a dead run left, and only that: a pid whose start time differs from the
// recorded one (the system gave the pid to another process) is left alone, and a live runner's
// data directory is refused.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRunning, processStartTime, RunRecord } from './run-record';

const children: ChildProcess[] = [];
function sleeper(): { pid: number; startTime: string } {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  children.push(child);
  return { pid: child.pid!, startTime: processStartTime(child.pid!)! };
}
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

const runDir = () => mkdtempSync(join(tmpdir(), 'run-record-'));
const write = (dir: string, body: unknown) => writeFileSync(join(dir, 'processes.json'), JSON.stringify(body));
/** An identity no live process has: this process's pid with another start time. */
const deadSupervisor = () => ({ pid: process.pid, startTime: 'not-a-start-time' });

describe('run record', () => {
  it('when a dead run left a process, then claiming its data directory kills it and records this run', async () => {
    const dir = runDir();
    const left = sleeper();
    write(dir, { supervisor: deadSupervisor(), children: { redis: left } });
    const lines: string[] = [];
    await RunRecord.claim(dir, (l) => lines.push(l));
    expect(isRunning(left)).toBe(false);
    expect(lines.join('\n')).toMatch(/died leaving redis \(pid \d+\): stopping them/);
    expect(JSON.parse(readFileSync(join(dir, 'processes.json'), 'utf8'))).toEqual({ supervisor: { pid: process.pid, startTime: processStartTime(process.pid) }, children: {} });
  });

  it('when a recorded pid now belongs to a process started at another time, then it is left running', async () => {
    const dir = runDir();
    const other = sleeper();
    write(dir, { supervisor: deadSupervisor(), children: { daprd: { pid: other.pid, startTime: String(Number(other.startTime) - 1) } } });
    await RunRecord.claim(dir);
    expect(isRunning(other)).toBe(true);
  });

  it('when the recorded runner still runs, then the claim is refused and nothing is killed', async () => {
    const dir = runDir();
    const child = sleeper();
    write(dir, { supervisor: { pid: process.pid, startTime: processStartTime(process.pid) }, children: { ledger: child } });
    await expect(RunRecord.claim(dir)).rejects.toThrow(/already run by process \d+ \(this one\)/);
    expect(isRunning(child)).toBe(true);
  });

  it('when this process claimed the directory before and nothing it recorded runs (a start that failed early), then it may claim it again', async () => {
    const dir = runDir();
    await RunRecord.claim(dir);
    await expect(RunRecord.claim(dir)).resolves.toBeInstanceOf(RunRecord);
  });

  it('when processes start and exit, then the file lists the running ones; a clean stop removes it', async () => {
    const dir = runDir();
    const record = await RunRecord.claim(dir);
    const a = sleeper();
    record.started('placement', a.pid);
    expect(JSON.parse(readFileSync(join(dir, 'processes.json'), 'utf8')).children).toEqual({ placement: a });
    record.exited('placement', a.pid);
    expect(JSON.parse(readFileSync(join(dir, 'processes.json'), 'utf8')).children).toEqual({});
    record.release();
    // Nothing recorded: a new claim has nothing to stop and succeeds.
    await expect(RunRecord.claim(dir)).resolves.toBeInstanceOf(RunRecord);
  });

  it('when the file is garbled, then it is ignored', async () => {
    const dir = runDir();
    writeFileSync(join(dir, 'processes.json'), '{"supervisor": 12');
    await expect(RunRecord.claim(dir)).resolves.toBeInstanceOf(RunRecord);
  });
});
