// Where the repository and the Dapr runtime binaries are. The binaries come from
// scripts/dapr-runtime.sh (an installed Dapr, or a cached build from the Go module proxy).

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository root: the nearest directory above this file that holds package.json. */
export function repoRoot(from: string = __dirname): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'scripts', 'dapr-runtime.sh'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no repository root (package.json + scripts/dapr-runtime.sh) above ${from}`);
    dir = parent;
  }
}

export interface ResolveBinariesOptions {
  /** Receives the script's progress lines (stderr); default: written to this process's stderr. */
  log?: (line: string) => void;
}

/**
 * Runs scripts/dapr-runtime.sh and resolves with the directory holding daprd, placement and
 * scheduler. The first run on a machine builds them (several minutes); later runs reuse the cache.
 */
export function resolveDaprBinaries(options: ResolveBinariesOptions = {}): Promise<string> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'));
  const script = join(repoRoot(), 'scripts', 'dapr-runtime.sh');
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let pending = '';
    const tail: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        log(line);
        tail.push(line);
        if (tail.length > 20) tail.shift();
      }
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (pending) log(pending);
      const dir = stdout.trim().split('\n').pop() ?? '';
      if (code === 0 && dir && ['daprd', 'placement', 'scheduler'].every((b) => existsSync(join(dir, b)))) resolve(dir);
      else reject(new Error(`scripts/dapr-runtime.sh failed (exit ${code}):\n${tail.join('\n')}`));
    });
  });
}
