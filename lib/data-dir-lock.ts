// One gateway per data directory. The embedded host keeps each actor's state in memory between
// its turns and writes it whole, so a second process serving the same directory would overwrite
// the first one's acknowledged changes (a credit, a charge). A lock file says which process
// serves the directory: its id and, on Linux, its start time, so that a file left by a killed
// process (kill -9, a crash) is recognised as stale and taken over. Readers (the CLI,
// tests, an export) open the database without it.
//
// A process id means nothing outside its PID namespace: every container's gateway is process 1,
// so a gateway in a second container (or on a second machine) sharing the volume would find
// "process 1" alive (itself) with another start time and take the directory from a live owner.
// The file therefore also names the machine (host name) and PID namespace of its owner, and the
// owner rewrites it every HEARTBEAT_MS. An owner that cannot be seen is judged by that heartbeat:
// running while it is fresher than STALE_MS (the newcomer waits that long for it to go stale,
// then refuses), gone once it is older (a container restarted after a crash, whose new process
// lives in a new namespace, takes the directory over after a few seconds).

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

export const LOCK_FILE = 'gateway.lock';

/** How often the owner rewrites the lock file. */
export const HEARTBEAT_MS = 2000;
/** A lock file whose owner cannot be seen is taken for abandoned once its heartbeat is this old. */
export const STALE_MS = 10_000;
/** How long a newcomer that took a lock file over waits before it checks the file is still its own. */
const TAKEOVER_CHECK_MS = 200;

export class DataDirInUse extends Error {}

interface Owner {
  pid: number;
  /** The process's start time in clock ticks since boot (Linux); null where it cannot be read. */
  startTime: number | null;
  /** Where the pid means something: host name and PID namespace; null in files of older versions. */
  space: string | null;
  /** When the owner last wrote the file (ms since the epoch, its clock); null in files of older versions. */
  beat: number | null;
}

/** This process's machine and PID namespace (the namespace where /proc tells it). */
function ownSpace(): string {
  let namespace = '';
  try {
    namespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    // Not Linux: the host name alone.
  }
  return `${hostname()}/${namespace}`;
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
    return {
      pid: parsed.pid as number,
      startTime: typeof parsed.startTime === 'number' ? parsed.startTime : null,
      space: typeof parsed.space === 'string' ? parsed.space : null,
      beat: typeof parsed.beat === 'number' ? parsed.beat : null,
    };
  } catch {
    return undefined;
  }
}

/** Whether the owner of a lock file still serves the directory, and how it was judged. */
function judge(owner: Owner, space: string): { running: boolean; seen: boolean } {
  // Another machine or PID namespace: its process cannot be looked up here, only its heartbeat.
  if (owner.space !== null && owner.space !== space) return { running: owner.beat !== null && Date.now() - owner.beat < STALE_MS, seen: false };
  return { running: alive(owner), seen: true };
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * A lock whose last beat is younger than this is this process's for sure (held() answers at
 * once): a newcomer takes a file over only once its beat is STALE_MS old.
 */
export const CONFIRMED_MS = 2 * HEARTBEAT_MS;

/** The release of a data directory; `held()` says whether this process still has it. */
export interface DataDirLock {
  (): void;
  /**
   * Whether the directory is still this process's, for a write to ask first. Answers at once
   * while the heartbeat is recent (CONFIRMED_MS); after a stall (the process paused, its
   * heartbeat late) it looks at the file, as a heartbeat would, before the stalled write runs:
   * a newcomer may have taken the directory meanwhile, and the heartbeat would only see it after
   * the writes that were due. False once lost (onLost is called then, once).
   */
  held(): boolean;
}

export interface LockOptions {
  /**
   * Called once if a heartbeat finds the lock file no longer this process's (another process
   * took the directory, e.g. after this one stalled for longer than STALE_MS): this process must
   * stop serving the directory. The heartbeat stops.
   */
  onLost?: (holder: string) => void;
}

/**
 * Takes the data directory for this process, or throws DataDirInUse naming the process that
 * serves it. Returns the release, which removes the lock file if it is still this process's.
 * While taken, the file is rewritten every HEARTBEAT_MS (the owner's heartbeat).
 */
export function lockDataDir(dataDir: string, options: LockOptions = {}): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const started = startTimeOf(process.pid);
  const space = ownSpace();
  const me = { pid: process.pid, startTime: typeof started === 'number' ? started : null, space };
  const record = (beat = Date.now()) => JSON.stringify({ ...me, beat });
  const mine = (owner: Owner | undefined) => owner?.pid === me.pid && owner.startTime === me.startTime && owner.space === me.space;
  let tookOver = false;
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644);
      try {
        writeSync(fd, record());
      } catch (error) {
        // A full disk (or a file size limit): said with the file, which the bare error does not
        // name; the empty file is not left for the next start to wait on.
        try {
          unlinkSync(path);
        } catch {
          // Gone already, or not ours to remove: the next start judges it.
        }
        throw new Error(`the data directory ${dataDir} cannot be written (${path}): ${(error as Error).message}`);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let owner = readOwner(path);
      if (owner) {
        let verdict = judge(owner, space);
        // An owner known only by its heartbeat: wait for the heartbeat to go stale (a container
        // that was restarted) or to go on (a gateway running elsewhere on this volume).
        for (const waitUntil = Date.now() + STALE_MS + HEARTBEAT_MS; verdict.running && !verdict.seen && Date.now() < waitUntil;) {
          sleep(HEARTBEAT_MS / 4);
          owner = readOwner(path);
          if (!owner) break;
          verdict = judge(owner, space);
        }
        if (owner && verdict.running) {
          const where = verdict.seen ? '' : ` in another container or on another machine (${owner.space}), which wrote the file ${Math.round((Date.now() - owner.beat!) / 1000)} s ago`;
          throw new DataDirInUse(`the data directory ${dataDir} is in use by process ${owner.pid}${owner.pid === process.pid && verdict.seen ? ' (this one)' : ''}${where}: one gateway per data directory (${path})`);
        }
      }
      if (!owner && attempt === 0) {
        // Unreadable or empty: give a starting owner a moment to write it, then judge again.
        sleep(100);
        if (readOwner(path)) continue;
      }
      if (attempt >= 2) throw new DataDirInUse(`the data directory ${dataDir} could not be taken: ${path} keeps coming back`);
      tookOver = true;
      try {
        unlinkSync(path);
      } catch (unlinkError) {
        if ((unlinkError as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkError;
      }
    }
  }
  // Taking over is remove-then-create, not one step: two newcomers that judged the same stale
  // file at once could each remove it, the second removing the first's new file, and both get
  // through. So a newcomer that took a file over looks again a moment later, before it opens
  // anything, and stands back if the file is no longer its own.
  if (tookOver) {
    sleep(TAKEOVER_CHECK_MS);
    const owner = readOwner(path);
    if (!mine(owner)) throw new DataDirInUse(`the data directory ${dataDir} was taken at the same moment by process ${owner?.pid ?? 'unknown'}${owner?.space ? ` (${owner.space})` : ''}: one gateway per data directory (${path})`);
  }
  // The heartbeat: the file is replaced whole (written beside it, then renamed over it), so a
  // reader never sees half a record.
  let isLost = false;
  /** When this process last wrote its beat (its file then was its own). */
  let confirmedAt = Date.now();
  const lost = (holder: string) => {
    clearInterval(heartbeat);
    if (isLost) return;
    isLost = true;
    options.onLost?.(holder);
  };
  const beat = (): void => {
    if (isLost) return;
    if (!existsSync(path)) {
      // Removed by hand: taken again, unless another process has just taken it.
      try {
        closeSync(openSync(path, 'wx', 0o644));
      } catch {
        const owner = readOwner(path);
        if (owner && !mine(owner)) lost(`process ${owner.pid} (${owner.space ?? 'unknown'})`);
        return;
      }
    } else {
      const owner = readOwner(path);
      // Unreadable (a newcomer's file being written, a passing read error): judged at the next beat.
      if (!owner) return;
      if (!mine(owner)) return lost(`process ${owner.pid} (${owner.space ?? 'unknown'})`);
    }
    const next = `${path}.${randomUUID()}`;
    const at = Date.now();
    try {
      writeFileSync(next, record(at), { mode: 0o644 });
      renameSync(next, path);
      confirmedAt = at;
    } catch {
      // A full or read-only disk: the next beat tries again (the database fails louder meanwhile).
      try {
        unlinkSync(next);
      } catch {
        // Not written.
      }
    }
  };
  const heartbeat = setInterval(beat, HEARTBEAT_MS);
  heartbeat.unref();
  const release = () => {
    clearInterval(heartbeat);
    if (mine(readOwner(path))) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone: nothing to release.
      }
    }
  };
  const held = (): boolean => {
    if (!isLost && Date.now() - confirmedAt >= CONFIRMED_MS) beat();
    return !isLost;
  };
  return Object.assign(release, { held });
}
