import { nextRunPhase, RUN_TRANSITIONS, type From, type RunMove } from './transitions';

const MOVES: RunMove[] = ['start', 'output', 'complete', 'fail', 'expire'];
const FROM = Object.keys(RUN_TRANSITIONS) as From[];

// Every allowed move, spelled out once more: the table may only change together with this list.
const ALLOWED: Array<[From, RunMove, string]> = [
  ['new', 'start', 'running'],
  ['running', 'output', 'running'],
  ['running', 'complete', 'completed'],
  ['running', 'fail', 'failed'],
  ['running', 'expire', 'failed'],
];

describe('run transitions', () => {
  it.each(ALLOWED)('when the run is %s and the move is %s, then it becomes %s', (from, move, to) => {
    expect(nextRunPhase(from, move)).toBe(to);
  });

  const forbidden = FROM.flatMap((from) => MOVES.filter((move) => !ALLOWED.some(([f, m]) => f === from && m === move)).map((move) => [from, move] as const));
  it.each(forbidden)('when the run is %s, then the move %s is refused', (from, move) => {
    expect(nextRunPhase(from, move)).toBeUndefined();
  });

  it('when a run has ended, then no move is left: it ends exactly once', () => {
    expect(MOVES.filter((m) => nextRunPhase('completed', m))).toEqual([]);
    expect(MOVES.filter((m) => nextRunPhase('failed', m))).toEqual([]);
  });
});
