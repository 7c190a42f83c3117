// The hold lifecycle as one explicit table: for each state, what each move does. A hold ends
// exactly once; a move repeated on the hold it already ended answers that ending again (the
// methods are idempotent by hold id); any other move on an ended hold is refused.
//
//   open ──settle──> settled        settled  + settle  → repeat
//        ──release─> released       released + release → repeat
//        ──expire──> expired        expired  + release → repeat (a release after expiry answers expired)
//                                   expired  + settle  → after_expiry (the usage beyond what expiry
//                                                        charged is recorded as platform-borne)

export type HoldState = 'open' | 'settled' | 'released' | 'expired';
export type HoldMove = 'settle' | 'release' | 'expire';

/** What a move does from a state: the state it leads to, or how a repeat on an ended hold is answered. */
export type HoldVerdict = { to: Exclude<HoldState, 'open'> } | { repeat: true } | { afterExpiry: true };

export const HOLD_TRANSITIONS: Readonly<Record<HoldState, Readonly<Partial<Record<HoldMove, HoldVerdict>>>>> = {
  open: { settle: { to: 'settled' }, release: { to: 'released' }, expire: { to: 'expired' } },
  settled: { settle: { repeat: true } },
  released: { release: { repeat: true } },
  expired: { release: { repeat: true }, settle: { afterExpiry: true } },
};

/** What `move` does from `from`; undefined when the table refuses it. */
export function holdVerdict(from: HoldState, move: HoldMove): HoldVerdict | undefined {
  return HOLD_TRANSITIONS[from][move];
}

/** The state `move` ends an open hold in (a move the table does not list from open is a programming error). */
export function endingOf(move: HoldMove): Exclude<HoldState, 'open'> {
  const verdict = HOLD_TRANSITIONS.open[move];
  if (!verdict || !('to' in verdict)) throw new Error(`an open hold has no move ${move}`);
  return verdict.to;
}
