import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirInUse, LOCK_FILE, lockDataDir } from './data-dir-lock';

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
});
