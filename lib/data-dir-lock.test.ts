import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirInUse, HEARTBEAT_MS, LOCK_FILE, lockDataDir, STALE_MS } from './data-dir-lock';

const dir = () => mkdtempSync(join(tmpdir(), 'payg-lock-'));
/** The id of a process that has ended. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid as number;

describe('one gateway per data directory', () => {
  it('when the directory is free, then it is taken with this process named in the lock file, and the release frees it', () => {
    const dataDir = join(dir(), 'nested');
    const release = lockDataDir(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    release();
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
    lockDataDir(dataDir)();
  });

  it('when a running process holds it, then taking it again is refused naming that process, and the holder keeps it', () => {
    const dataDir = dir();
    const release = lockDataDir(dataDir);
    expect(() => lockDataDir(dataDir)).toThrow(DataDirInUse);
    expect(() => lockDataDir(dataDir)).toThrow(`in use by process ${process.pid}`);
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(true);
    release();
  });

  it('when the lock file names a process that has ended (kill -9), then the directory is taken over', () => {
    const dataDir = dir();
    writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: deadPid(), startTime: 1 }));
    const release = lockDataDir(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    release();
  });

  it('when the lock file names a running process with another start time (its id reused), then the directory is taken over', () => {
    const dataDir = dir();
    // This process is running, but it is not the one that wrote the file.
    writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: process.pid, startTime: 1 }));
    const release = lockDataDir(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).startTime).not.toBe(1);
    release();
  });

  it('when another newcomer replaces the file just after this one took a stale lock over (both judged it stale), then this one stands back, naming the other, before it opens anything', async () => {
    const dataDir = dir();
    const path = join(dataDir, LOCK_FILE);
    writeFileSync(path, JSON.stringify({ pid: deadPid(), startTime: 1 }));
    // The other newcomer: once this process's record is in the file, it writes its own over it.
    const other = spawn(process.execPath, ['-e', `
      const fs = require('fs');
      console.log('ready');
      const poll = setInterval(() => {
        let text = '';
        try { text = fs.readFileSync(${JSON.stringify(path)}, 'utf8'); } catch {}
        if (text.includes('"pid":${process.pid},')) {
          fs.writeFileSync(${JSON.stringify(path)}, JSON.stringify({ pid: process.pid, startTime: null, space: 'elsewhere/ns', beat: Date.now() }));
          clearInterval(poll);
        }
      }, 2);
      setTimeout(() => process.exit(0), 10000);
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => other.stdout!.once('data', resolve));
    try {
      expect(() => lockDataDir(dataDir)).toThrow(/taken at the same moment by process \d+ \(elsewhere\/ns\)/);
      // The other's record stands.
      expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ space: 'elsewhere/ns' });
    } finally {
      other.kill();
    }
  });

  it('when the lock file is unreadable, then it is judged again after a moment and taken over', () => {
    const dataDir = dir();
    writeFileSync(join(dataDir, LOCK_FILE), 'not json');
    const release = lockDataDir(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    release();
  });

  it('when another process holds the directory, then the release of this one leaves its lock file alone', () => {
    const dataDir = dir();
    const release = lockDataDir(dataDir);
    const other = JSON.stringify({ pid: process.ppid, startTime: null });
    writeFileSync(join(dataDir, LOCK_FILE), other);
    release();
    expect(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).toBe(other);
  });

  // Every container's gateway is process 1: a lock file written in another container names a
  // process id that means nothing here (this file's writer could even be "process 1" with another
  // start time). Such an owner is judged by its heartbeat.
  const foreign = (beat: number) => JSON.stringify({ pid: 1, startTime: 1, space: 'another-container/pid:[1]', beat });

  it('when the lock file was written in another container and its heartbeat is fresh, then the directory is refused, naming that container, and the file is left alone', () => {
    const dataDir = dir();
    const path = join(dataDir, LOCK_FILE);
    writeFileSync(path, foreign(Date.now()));
    // Its owner (another process: the newcomer waits synchronously) keeps beating while the
    // newcomer waits for the heartbeat to go stale.
    const beater = spawn(process.execPath, ['-e', `setInterval(() => require('node:fs').writeFileSync(${JSON.stringify(path)}, JSON.stringify({ pid: 1, startTime: 1, space: 'another-container/pid:[1]', beat: Date.now() })), ${HEARTBEAT_MS / 2})`], { stdio: 'ignore' });
    try {
      expect(() => lockDataDir(dataDir)).toThrow(/in use by process 1 in another container or on another machine \(another-container\/pid:\[1\]\)/);
    } finally {
      beater.kill('SIGKILL');
    }
    expect(JSON.parse(readFileSync(path, 'utf8')).space).toBe('another-container/pid:[1]');
  }, 30_000);

  it('when the lock file was written in another container whose heartbeat has stopped (a container restarted after a crash), then the directory is taken over', () => {
    const dataDir = dir();
    writeFileSync(join(dataDir, LOCK_FILE), foreign(Date.now() - STALE_MS - 1));
    const release = lockDataDir(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    release();
  });

  it('when the directory is held, then the holder rewrites its lock file every heartbeat', async () => {
    const dataDir = dir();
    const release = lockDataDir(dataDir);
    const first = JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')) as { beat: number; space: string };
    expect(first.space).toContain('/');
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS + 500));
    expect((JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')) as { beat: number }).beat).toBeGreaterThan(first.beat);
    release();
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
  });

  it('when another process takes the directory from the holder, then the heartbeat of the holder says so once', async () => {
    const dataDir = dir();
    const lost: string[] = [];
    const release = lockDataDir(dataDir, { onLost: (holder) => lost.push(holder) });
    writeFileSync(join(dataDir, LOCK_FILE), foreign(Date.now()));
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS * 2 + 500));
    expect(lost).toEqual(['process 1 (another-container/pid:[1])']);
    release();
  });

  it('when the holder stalled past its heartbeat and another process took the directory meanwhile, then held() says so before any write, and onLost is called once', () => {
    const dataDir = dir();
    const lost: string[] = [];
    const release = lockDataDir(dataDir, { onLost: (holder) => lost.push(holder) });
    expect(release.held()).toBe(true);
    // A stall: no heartbeat ran for longer than the newcomer waits, and the newcomer took the file.
    const stalledUntil = Date.now() + STALE_MS + HEARTBEAT_MS;
    const now = jest.spyOn(Date, 'now').mockReturnValue(stalledUntil);
    try {
      writeFileSync(join(dataDir, LOCK_FILE), foreign(stalledUntil));
      expect(release.held()).toBe(false);
      expect(release.held()).toBe(false);
      expect(lost).toEqual(['process 1 (another-container/pid:[1])']);
    } finally {
      now.mockRestore();
      release();
    }
  });

  it('when the holder stalled past its heartbeat and nobody took the directory, then held() writes its beat again and the holder keeps it', () => {
    const dataDir = dir();
    const lost: string[] = [];
    const release = lockDataDir(dataDir, { onLost: (holder) => lost.push(holder) });
    const stalledUntil = Date.now() + STALE_MS;
    const now = jest.spyOn(Date, 'now').mockReturnValue(stalledUntil);
    try {
      expect(release.held()).toBe(true);
      expect((JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')) as { beat: number }).beat).toBe(stalledUntil);
      expect(lost).toEqual([]);
    } finally {
      now.mockRestore();
      release();
    }
  });

  it('when the lock file is removed by hand under a running holder, then the next heartbeat writes it again and the holder keeps the directory', async () => {
    const dataDir = dir();
    const lost: string[] = [];
    const release = lockDataDir(dataDir, { onLost: (holder) => lost.push(holder) });
    unlinkSync(join(dataDir, LOCK_FILE));
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS + 500));
    expect(lost).toEqual([]);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    expect(() => lockDataDir(dataDir)).toThrow(`in use by process ${process.pid}`);
    release();
  });
});
