// The hold lifecycle as one explicit table. A hold ends exactly once.

export type HoldState = 'open' | 'settled' | 'released' | 'expired';

export const HOLD_TRANSITIONS: Readonly<Record<HoldState, readonly HoldState[]>> = {
  open: ['settled', 'released', 'expired'],
  settled: [],
  released: [],
  expired: [],
};

export function canTransition(from: HoldState, to: HoldState): boolean {
  return HOLD_TRANSITIONS[from].includes(to);
}
