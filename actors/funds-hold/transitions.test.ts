import { endingOf, HOLD_TRANSITIONS, holdVerdict, type HoldMove, type HoldState } from './transitions';

const MOVES: HoldMove[] = ['settle', 'release', 'expire'];
const STATES = Object.keys(HOLD_TRANSITIONS) as HoldState[];

describe('hold transitions', () => {
  it('when a hold is open, then settle, release and expire end it as settled, released and expired', () => {
    expect(MOVES.map(endingOf)).toEqual(['settled', 'released', 'expired']);
  });
  it('when a hold has ended, then only the move that ended it repeats, and a release of an expired hold answers its expiry', () => {
    const repeats = STATES.flatMap((from) => MOVES.filter((move) => JSON.stringify(holdVerdict(from, move)) === '{"repeat":true}').map((move) => `${from}+${move}`));
    expect(repeats.sort()).toEqual(['expired+release', 'released+release', 'settled+settle']);
  });
  it('when an expired hold is settled, then the settle is recorded after expiry; every other move on an ended hold is refused', () => {
    expect(holdVerdict('expired', 'settle')).toEqual({ afterExpiry: true });
    for (const [from, move] of [['settled', 'release'], ['settled', 'expire'], ['released', 'settle'], ['released', 'expire'], ['expired', 'expire']] as [HoldState, HoldMove][]) {
      expect(holdVerdict(from, move)).toBeUndefined();
    }
  });
});
