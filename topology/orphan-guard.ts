// Children die with their supervisor, even when it is killed with SIGKILL and never gets to stop
// them. Linux can do it (prctl PR_SET_PDEATHSIG: "signal me when my parent dies"), but Node has no
// binding for it without a native addon; util-linux's `setpriv --pdeathsig` sets it and then execs
// the real program, so the child keeps its pid, its process group, its exit status and its command
// line, and no wrapper process is left in between. Without setpriv (not Linux, or an old
// util-linux) the program is started as is and the run record (run-record.ts) stops what a dead run
// left on the next start.
//
// The kernel sends the signal when the *thread* that forked the child ends. Node forks children
// from the event-loop thread (libuv's uv_spawn), which is the main thread of the supervisor: its
// end is the supervisor's end.

import { spawnSync } from 'node:child_process';
import type { Command } from './commands';

/** SIGKILL, as a crash of the whole topology: what the money guarantees are designed for (docs/money.md). */
const DEATH_SIGNAL = 'SIGKILL';

let setpriv: string | null | undefined;

/** `setpriv` when it is installed and knows --pdeathsig (util-linux 2.33+); null otherwise. */
export function pdeathsigLauncher(): string | null {
  if (setpriv === undefined) {
    if (process.platform !== 'linux') setpriv = null;
    else {
      const help = spawnSync('setpriv', ['--help'], { encoding: 'utf8' });
      setpriv = help.status === 0 && help.stdout.includes('--pdeathsig') ? 'setpriv' : null;
    }
  }
  return setpriv;
}

/** The command that runs `cmd` so that it gets SIGKILL when the process that spawns it dies. */
export function dieWithParent(cmd: Command): Command {
  const launcher = pdeathsigLauncher();
  if (!launcher) return cmd;
  return { command: launcher, args: ['--pdeathsig', DEATH_SIGNAL.replace(/^SIG/, ''), '--', cmd.command, ...cmd.args] };
}
