// The processes under a supervisor, for tests that check what a run leaves behind.

import { execFileSync } from 'node:child_process';

export interface ProcessRow {
  pid: number;
  args: string;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process below `root` (children, their children, …), with its command line. */
export function descendants(root: number): ProcessRow[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' });
  const rows = out.trim().split('\n').flatMap((line) => {
    const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    return match ? [{ pid: Number(match[1]), ppid: Number(match[2]), args: match[3] }] : [];
  });
  const found: ProcessRow[] = [];
  const visit = (parent: number) => rows.filter((r) => r.ppid === parent).forEach((r) => (found.push({ pid: r.pid, args: r.args }), visit(r.pid)));
  visit(root);
  return found;
}
