import { canTransition, HOLD_TRANSITIONS, type HoldState } from './transitions';

describe('hold transitions', () => {
  const states = Object.keys(HOLD_TRANSITIONS) as HoldState[];
  it('when a hold is open, then it may become settled, released or expired, and nothing else', () => {
    expect(states.filter((to) => canTransition('open', to)).sort()).toEqual(['expired', 'released', 'settled']);
  });
  it.each(['settled', 'released', 'expired'] as HoldState[])('when a hold is %s, then no transition is allowed', (from) => {
    for (const to of states) expect(canTransition(from, to)).toBe(false);
  });
});
