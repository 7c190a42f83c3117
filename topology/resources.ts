// The per-run resources directory handed to every daprd: the committed components/ (and the
// resiliency policy in dapr/) with the Redis address of this run put in place of localhost:6379.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const COMMITTED_REDIS = /localhost:6379/g;

export function writeResources(root: string, outDir: string, redisPort: number): string {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const sources = [
    ...yamlFiles(join(root, 'components')),
    ...yamlFiles(join(root, 'dapr')).filter((f) => f.endsWith('resiliency.yaml')),
  ];
  if (sources.length === 0) throw new Error(`no Dapr components found in ${join(root, 'components')}`);
  for (const file of sources) {
    const text = readFileSync(file, 'utf8').replace(COMMITTED_REDIS, `127.0.0.1:${redisPort}`);
    writeFileSync(join(outDir, file.split('/').pop()!), text);
  }
  return outDir;
}

function yamlFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith('.yaml') || n.endsWith('.yml'))
      .sort()
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}
