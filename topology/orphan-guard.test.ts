// A process started through the guard dies when the process that started it is killed with
// SIGKILL; one started without it runs on (what the topology's children did before).

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dieWithParent, pdeathsigLauncher } from './orphan-guard';
import { isRunning, processStartTime, type ProcessIdentity } from './run-record';

const leftovers: number[] = [];
afterAll(() => {
  for (const pid of leftovers) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
});

/** Starts a parent that starts `command` and reports its pid; then kills the parent with SIGKILL. */
async function orphanOf(command: { command: string; args: string[] }): Promise<ProcessIdentity & { cmdline: string }> {
  const script = `const c = require('node:child_process').spawn(${JSON.stringify(command.command)}, ${JSON.stringify(command.args)}, { stdio: 'ignore', detached: true }); console.log(c.pid); setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = await new Promise<number>((resolve) => parent.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  leftovers.push(pid);
  // Let the child reach the program (setpriv sets the signal, then executes it).
  await new Promise((r) => setTimeout(r, 300));
  const child = { pid, startTime: processStartTime(pid)!, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim() };
  const exited = new Promise((resolve) => parent.once('exit', resolve));
  parent.kill('SIGKILL');
  await exited;
  return child;
}

const gone = async (p: ProcessIdentity, withinMs: number) => {
  const deadline = Date.now() + withinMs;
  while (isRunning(p) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !isRunning(p);
};

const linuxWithSetpriv = process.platform === 'linux' && pdeathsigLauncher() !== null;

(linuxWithSetpriv ? describe : describe.skip)('orphan guard (setpriv --pdeathsig)', () => {
  it('when the parent of a guarded process is killed with SIGKILL, then the process dies too', async () => {
    const child = await orphanOf(dieWithParent({ command: 'sleep', args: ['60'] }));
    // setpriv set the signal and then became the program: the pid spawn returned runs `sleep`.
    expect(child.cmdline).toBe('sleep 60');
    expect(await gone(child, 5_000)).toBe(true);
  });

  it('when the parent of an unguarded process is killed with SIGKILL, then the process runs on', async () => {
    const child = await orphanOf({ command: 'sleep', args: ['60'] });
    expect(await gone(child, 1_000)).toBe(false);
  });

  it('when a command is guarded, then it runs through setpriv with SIGKILL as the parent-death signal', () => {
    expect(dieWithParent({ command: 'redis-server', args: ['--port', '1'] })).toEqual({ command: 'setpriv', args: ['--pdeathsig', 'KILL', '--', 'redis-server', '--port', '1'] });
  });
});
