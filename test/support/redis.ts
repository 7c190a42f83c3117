// A throwaway Redis for tests that need a real one: Debian's redis-server on a free loopback
// port, in a temporary directory, stopped (and its process waited for) by stop().

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisCommand } from '../../topology/commands';
import { redisProbe, waitUntil } from '../../topology/readiness';
import { freePort } from './processes';

export interface TestRedis {
  url: string;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'test-redis-'));
  const { command, args } = redisCommand(port, dir);
  const child = spawn(command, args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitUntil(`Redis PING on port ${port}`, redisProbe(port), { timeoutMs: 10_000 });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
