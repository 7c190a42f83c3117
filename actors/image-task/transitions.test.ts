import { IMAGE_TASK_TRANSITIONS, nextPhase, type From, type ImageTaskMove } from './transitions';

const MOVES: ImageTaskMove[] = ['start', 'outcome', 'settle', 'release', 'deadline', 'late_artifact', 'late_released'];
const FROM = Object.keys(IMAGE_TASK_TRANSITIONS) as From[];

// Every allowed move, spelled out once more: the table may only change together with this list.
const ALLOWED: Array<[From, ImageTaskMove, string]> = [
  ['new', 'start', 'running'],
  ['running', 'outcome', 'settling'],
  ['running', 'deadline', 'unknown'],
  ['settling', 'settle', 'succeeded'],
  ['settling', 'release', 'failed'],
  ['unknown', 'late_artifact', 'unknown'],
  ['unknown', 'late_released', 'unknown'],
];

describe('image task transitions (UNKNOWN_IMAGE_V1)', () => {
  it.each(ALLOWED)('when the task is %s and the move is %s, then it becomes %s', (from, move, to) => {
    expect(nextPhase(from, move)).toBe(to);
  });

  const forbidden = FROM.flatMap((from) => MOVES.filter((move) => !ALLOWED.some(([f, m]) => f === from && m === move)).map((move) => [from, move] as const));
  it.each(forbidden)('when the task is %s, then the move %s is refused', (from, move) => {
    expect(nextPhase(from, move)).toBeUndefined();
  });

  it('when a task has succeeded or failed, then no move is left', () => {
    expect(MOVES.filter((m) => nextPhase('succeeded', m))).toEqual([]);
    expect(MOVES.filter((m) => nextPhase('failed', m))).toEqual([]);
  });

  it('when a task is unknown, then no move leads anywhere but unknown (UNKNOWN stays the original record)', () => {
    expect(MOVES.map((m) => nextPhase('unknown', m)).filter((to) => to && to !== 'unknown')).toEqual([]);
  });
});
