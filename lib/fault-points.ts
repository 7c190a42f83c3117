// Test-only fault points: named places where a test can make the process die at once (SIGKILL to
// itself), to show what a crash there leaves behind. Off unless GATEWAY_TEST_MODE=true and
// GATEWAY_FAULT_POINTS names the point; lib/config.ts refuses GATEWAY_FAULT_POINTS otherwise.
// The list and what each point means: docs/testing.md. `<name>:once` fires only once per data
// directory (GATEWAY_DATA_DIR keeps a marker), so a process restarted by its supervisor with the
// same environment goes on.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const FAULT_POINTS = {
  /** Both hosts: a reminder's handler has run, its turn's state commit has not happened yet. */
  'reminder-before-commit': 'a reminder turn ran its handler; its state is not committed',
  /** ImageTask.start: the image's hold is taken on FundsHold, the task itself is not committed. */
  'image-after-hold': "FundsHold holds the image's price; the ImageTask is not committed",
  /** AuditLog.record: an operator's change is committed (a credit, a debit, an order, a revocation, a suspension or its lifting), its audit entry not yet appended. */
  'audit-before-append': "an operator's change is committed; its audit entry is not appended",
  /** The embedded host's export reader (a child process of the gateway) was asked for rows: it dies before answering. */
  'export-reader-read': 'the export reader was asked for rows and has not answered',
} as const;

export type FaultPoint = keyof typeof FAULT_POINTS;

const ONCE = ':once';

/** The entries of a GATEWAY_FAULT_POINTS value (comma separated, each `<name>` or `<name>:once`); unknown names are an error. */
export function parseFaultPoints(value: string): string[] {
  const entries = value.split(',').map((n) => n.trim()).filter((n) => n.length > 0);
  const unknown = entries.filter((n) => !(nameOf(n) in FAULT_POINTS));
  if (unknown.length > 0) throw new Error(`unknown fault point(s) ${unknown.join(', ')} (known: ${Object.keys(FAULT_POINTS).join(', ')}, each optionally with ${ONCE})`);
  return entries;
}

const nameOf = (entry: string) => (entry.endsWith(ONCE) ? entry.slice(0, -ONCE.length) : entry);

let armed: Map<string, { once: boolean }> | undefined;

function armedPoints(): Map<string, { once: boolean }> {
  if (!armed) {
    const testMode = process.env.GATEWAY_TEST_MODE === 'true' || process.env.GATEWAY_TEST_MODE === '1';
    const entries = testMode && process.env.GATEWAY_FAULT_POINTS ? parseFaultPoints(process.env.GATEWAY_FAULT_POINTS) : [];
    armed = new Map(entries.map((entry) => [nameOf(entry), { once: entry.endsWith(ONCE) }]));
  }
  return armed;
}

/** Kills this process on the spot when `name` is armed; nothing otherwise. */
export function faultPoint(name: FaultPoint): void {
  const point = armedPoints().get(name);
  if (!point) return;
  if (point.once) {
    const dir = resolve(process.env.GATEWAY_DATA_DIR ?? './data');
    const marker = join(dir, `fault-point-${name}.fired`);
    if (existsSync(marker)) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(marker, new Date().toISOString());
  }
  process.stderr.write(`fault point ${name} reached: killing the process (GATEWAY_FAULT_POINTS)\n`);
  process.kill(process.pid, 'SIGKILL');
}
