// What a run of the topology has started, kept in <dataDir>/run/processes.json, so that the next
// run on the same data directory stops whatever a dead run left behind (its supervisor killed
// where children cannot die with it: see orphan-guard.ts) before it checks its ports.
// By its own records only, never by process name: a pid counts only together with the start time
// recorded beside it (/proc/<pid>/stat), so a pid the system has since given to another process is
// never signalled. Each child leads its own process group (ManagedProcess), which is what is killed.

import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ProcessIdentity {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
  startTime: string;
}

interface RunFile {
  supervisor: ProcessIdentity;
  children: Record<string, ProcessIdentity>;
}

/**
 * The start time of a process, or undefined when it is gone or cannot be read. A zombie counts as
 * gone only once its last thread has exited (num_threads 1): until then its files, listening
 * sockets included, are still open.
 */
export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  // fields[0] is field 3 (state), fields[17] field 20 (num_threads), fields[19] field 22 (starttime).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state] = fields;
  if ((state === 'Z' || state === 'X') && Number(fields[17]) <= 1) return undefined;
  return fields[19];
}

/** True when the process recorded is still the one running under that pid. */
export function isRunning(p: ProcessIdentity): boolean {
  return processStartTime(p.pid) === p.startTime;
}

function identity(pid: number): ProcessIdentity | undefined {
  const startTime = processStartTime(pid);
  return startTime === undefined ? undefined : { pid, startTime };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class RunRecord {
  private readonly children: Record<string, ProcessIdentity> = {};

  private constructor(
    private readonly file: string,
    private readonly supervisor: ProcessIdentity,
  ) {}

  /**
   * Takes the data directory for this process: refuses when the run recorded there is alive,
   * otherwise kills (SIGKILL) every child a dead run left running and waits until they are gone.
   * Without /proc (not Linux) nothing can be checked safely, and nothing is killed.
   */
  static async claim(runDir: string, log?: (line: string) => void): Promise<RunRecord> {
    const file = join(runDir, 'processes.json');
    const self = identity(process.pid);
    const record = new RunRecord(file, self ?? { pid: process.pid, startTime: '' });
    if (!self) return record;
    const previous = readRunFile(file);
    if (previous) {
      const left = Object.entries(previous.children).filter(([, p]) => isRunning(p));
      // This very process, with nothing of its record running: an earlier start here that failed
      // before it launched anything (a busy port, say) and so never stopped.
      const ownFailedStart = previous.supervisor.pid === process.pid && left.length === 0;
      if (isRunning(previous.supervisor) && !ownFailedStart) {
        throw new Error(
          `the topology in ${join(runDir, '..')} is already run by process ${previous.supervisor.pid}` +
            `${previous.supervisor.pid === process.pid ? ' (this one)' : ''}; stop it first, or use another data directory`,
        );
      }
      if (left.length > 0) {
        log?.(`[supervisor] a previous run (pid ${previous.supervisor.pid}) died leaving ${left.map(([n, p]) => `${n} (pid ${p.pid})`).join(', ')}: stopping them`);
        for (const [, p] of left) killGroup(p.pid);
        const deadline = Date.now() + 10_000;
        while (left.some(([, p]) => isRunning(p))) {
          if (Date.now() > deadline) throw new Error(`processes left by a previous run did not exit after SIGKILL: ${left.filter(([, p]) => isRunning(p)).map(([n, p]) => `${n} (pid ${p.pid})`).join(', ')}`);
          await sleep(50);
        }
      }
    }
    record.write();
    return record;
  }

  /** Records a child just spawned (its pid is known at once; the start time is the fork's). */
  started(name: string, pid: number | undefined): void {
    const id = pid === undefined ? undefined : identity(pid);
    if (!id) return;
    this.children[name] = id;
    this.write();
  }

  exited(name: string, pid: number | undefined): void {
    if (this.children[name]?.pid !== pid) return;
    delete this.children[name];
    this.write();
  }

  /** After a clean stop: nothing is left to find. */
  release(): void {
    rmSync(this.file, { force: true });
  }

  private write(): void {
    if (!this.supervisor.startTime) return;
    const body: RunFile = { supervisor: this.supervisor, children: this.children };
    // Written aside and renamed: a supervisor killed mid-write never leaves half a record.
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(body, null, 2) + '\n');
    renameSync(tmp, this.file);
  }
}

function readRunFile(file: string): RunFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as RunFile;
    const valid = (p: unknown): p is ProcessIdentity =>
      typeof p === 'object' && p !== null && Number.isInteger((p as ProcessIdentity).pid) && (p as ProcessIdentity).pid > 1 && typeof (p as ProcessIdentity).startTime === 'string';
    if (!valid(parsed.supervisor) || typeof parsed.children !== 'object' || parsed.children === null) return undefined;
    return { supervisor: parsed.supervisor, children: Object.fromEntries(Object.entries(parsed.children).filter(([, p]) => valid(p))) };
  } catch {
    return undefined;
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone in between
    }
  }
}
