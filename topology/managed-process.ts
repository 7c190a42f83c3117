// One child process of the topology: its own process group (so a terminal Ctrl-C reaches only the
// runner, which then stops children in order), output to a log file, the last lines kept for
// error messages, a stop that escalates from SIGTERM to SIGKILL, and (where the system allows it,
// orphan-guard.ts) death with the supervisor, however the supervisor ends.

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { dieWithParent } from './orphan-guard';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  logDir: string;
  log?: (line: string) => void;
  /** Default true: the process gets SIGKILL when the supervisor dies (orphan-guard.ts). */
  dieWithParent?: boolean;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const TAIL_LINES = 40;
const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

/** Last resort when the runner's own process ends without stop(): no orphan keeps its ports. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) p.killGroupNow('SIGKILL');
  });
}

export class ManagedProcess {
  private child: ChildProcess | undefined;
  private logStream: WriteStream | undefined;
  private readonly lines: string[] = [];
  private exitPromise: Promise<ExitStatus> = Promise.resolve({ code: null, signal: null });
  private exitRequested = false;

  constructor(readonly spec: ProcessSpec) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves when the current run of the process ends. */
  get exited(): Promise<ExitStatus> {
    return this.exitPromise;
  }

  /** True when the current run was ended on purpose (stop or kill), not by a crash. */
  get exitWasRequested(): boolean {
    return this.exitRequested;
  }

  start(): void {
    if (this.running) throw new Error(`${this.spec.name} is already running`);
    installExitHook();
    this.exitRequested = false;
    const { name, command, args, env, cwd, logDir } = this.spec;
    this.logStream = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
    this.record(`--- ${new Date().toISOString()} start: ${command} ${args.join(' ')}`);
    const launch = this.spec.dieWithParent === false ? { command, args } : dieWithParent({ command, args });
    const child = spawn(launch.command, launch.args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    live.add(this);
    this.exitPromise = new Promise<ExitStatus>((resolve) => {
      let settled = false;
      const finish = (status: ExitStatus) => {
        if (settled) return;
        settled = true;
        live.delete(this);
        this.record(`--- exited: code=${status.code} signal=${status.signal}`);
        this.logStream?.end();
        resolve(status);
      };
      child.once('error', (err) => {
        this.record(`--- could not start: ${err.message}`);
        finish({ code: null, signal: null });
      });
      child.once('close', (code, signal) => finish({ code, signal }));
    });
    this.pipeLines(child.stdout);
    this.pipeLines(child.stderr);
  }

  /** The last lines of output, for error messages. */
  tail(): string {
    return this.lines.join('\n');
  }

  /** Sends a signal to the process group; resolves once the process has exited. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    this.exitRequested = true;
    this.killGroupNow(signal);
    await this.exitPromise;
  }

  /** SIGTERM, then SIGKILL if the process has not exited within `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    if (!this.running) return;
    this.exitRequested = true;
    this.killGroupNow('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    const outcome = await Promise.race([this.exitPromise, timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      this.record(`--- did not exit within ${graceMs} ms of SIGTERM; sending SIGKILL`);
      this.killGroupNow('SIGKILL');
      await this.exitPromise;
    }
  }

  killGroupNow(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
    }
  }

  private pipeLines(stream: NodeJS.ReadableStream | null): void {
    if (!stream) return;
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      pending += chunk;
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const line of parts) this.record(line);
    });
    stream.on('end', () => {
      if (pending) this.record(pending);
      pending = '';
    });
  }

  private record(line: string): void {
    this.lines.push(line);
    if (this.lines.length > TAIL_LINES) this.lines.shift();
    this.logStream?.write(line + '\n');
    this.spec.log?.(`[${this.spec.name}] ${line}`);
  }
}
