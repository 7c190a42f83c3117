// One gateway per data directory. The embedded host keeps each actor's state in memory between
// its turns and writes it whole, so a second process serving the same directory would overwrite
// the first one's acknowledged changes (a credit, a charge). A lock file says which process
// serves the directory: its id and, on Linux, its start time, so that a file left by a killed
// process (kill -9, a crash, a container restarted with the same process id) is recognised as
// stale and taken over. Readers (the CLI, tests, an export) open the database without it.

import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'gateway.lock';

export class DataDirInUse extends Error {}

interface Owner {
  pid: number;
  /** The process's start time in clock ticks since boot (Linux); null where it cannot be read. */
  startTime: number | null;
}

/**
 * The start time of a process (field 22 of /proc/<pid>/stat), 'dead' for a zombie (killed, not
 * yet reaped by its parent), or null where /proc cannot tell.
 */
function startTimeOf(pid: number): number | 'dead' | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return 'dead';
    const ticks = Number(fields[19]);
    return Number.isSafeInteger(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

function alive(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: a process of another user has the id, so it is running.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = startTimeOf(owner.pid);
  if (now === 'dead') return false;
  return owner.startTime === null || now === null || now === owner.startTime;
}

function readOwner(path: string): Owner | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<Owner>;
    if (!Number.isSafeInteger(parsed.pid) || (parsed.pid as number) <= 0) return undefined;
    return { pid: parsed.pid as number, startTime: typeof parsed.startTime === 'number' ? parsed.startTime : null };
  } catch {
    return undefined;
  }
}

/**
 * Takes the data directory for this process, or throws DataDirInUse naming the process that
 * serves it. Returns the release, which removes the lock file if it is still this process's.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const started = startTimeOf(process.pid);
  const me: Owner = { pid: process.pid, startTime: typeof started === 'number' ? started : null };
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644);
      try {
        writeSync(fd, JSON.stringify(me));
      } finally {
        closeSync(fd);
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readOwner(path);
      // A file being written this instant by a starting process reads as nothing yet: not stale.
      if (owner && alive(owner)) {
        throw new DataDirInUse(`the data directory ${dataDir} is in use by process ${owner.pid}${owner.pid === process.pid ? ' (this one)' : ''}: one gateway per data directory (${path})`);
      }
      if (!owner && attempt === 0) {
        // Unreadable or empty: give a starting owner a moment to write it, then judge again.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
        if (readOwner(path)) continue;
      }
      if (attempt >= 2) throw new DataDirInUse(`the data directory ${dataDir} could not be taken: ${path} keeps coming back`);
      try {
        unlinkSync(path);
      } catch (unlinkError) {
        if ((unlinkError as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkError;
      }
    }
  }
  return () => {
    const owner = readOwner(path);
    if (owner?.pid === me.pid && owner.startTime === me.startTime) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone: nothing to release.
      }
    }
  };
}
