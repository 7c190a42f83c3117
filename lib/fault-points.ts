// Test-only fault points: named places where a test can make the process die at once (SIGKILL to
// itself), to show what a crash there leaves behind. Off unless GATEWAY_TEST_MODE=true and
// GATEWAY_FAULT_POINTS names the point; lib/config.ts refuses GATEWAY_FAULT_POINTS otherwise.
// The list and what each point means: docs/testing.md.

export const FAULT_POINTS = {
  /** Embedded host: a reminder's handler has run, its turn's commit has not happened yet. */
  'reminder-before-commit': 'a reminder turn ran its handler; its state is not committed',
  /** ImageTask.start: the image's hold is taken on FundsHold, the task itself is not committed. */
  'image-after-hold': "FundsHold holds the image's price; the ImageTask is not committed",
} as const;

export type FaultPoint = keyof typeof FAULT_POINTS;

/** The names in a GATEWAY_FAULT_POINTS value (comma separated), or the unknown ones as an error. */
export function parseFaultPoints(value: string): FaultPoint[] {
  const names = value.split(',').map((n) => n.trim()).filter((n) => n.length > 0);
  const unknown = names.filter((n) => !(n in FAULT_POINTS));
  if (unknown.length > 0) throw new Error(`unknown fault point(s) ${unknown.join(', ')} (known: ${Object.keys(FAULT_POINTS).join(', ')})`);
  return names as FaultPoint[];
}

let armed: Set<FaultPoint> | undefined;

function armedPoints(): Set<FaultPoint> {
  if (!armed) {
    const testMode = process.env.GATEWAY_TEST_MODE === 'true' || process.env.GATEWAY_TEST_MODE === '1';
    armed = new Set(testMode && process.env.GATEWAY_FAULT_POINTS ? parseFaultPoints(process.env.GATEWAY_FAULT_POINTS) : []);
  }
  return armed;
}

/** Kills this process on the spot when `name` is armed; nothing otherwise. */
export function faultPoint(name: FaultPoint): void {
  if (!armedPoints().has(name)) return;
  process.stderr.write(`fault point ${name} reached: killing the process (GATEWAY_FAULT_POINTS)\n`);
  process.kill(process.pid, 'SIGKILL');
}
