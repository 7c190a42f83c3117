import { Kept } from './kept';

describe('Kept', () => {
  it('when a key is asked for again, then the value made the first time comes back and nothing is made', () => {
    const kept = new Kept<{ id: string }>(4);
    const make = jest.fn((id: string) => ({ id }));
    const first = kept.get('a', () => make('a'));
    expect(kept.get('a', () => make('a'))).toBe(first);
    expect(make).toHaveBeenCalledTimes(1);
    expect(kept.get('b', () => make('b'))).toEqual({ id: 'b' });
    expect(make).toHaveBeenCalledTimes(2);
  });

  it('when the limit is reached, then the kept values are dropped and made again when next asked for', () => {
    const kept = new Kept<object>(2);
    const a = kept.get('a', () => ({}));
    kept.get('b', () => ({}));
    expect(kept.size).toBe(2);
    kept.get('c', () => ({}));
    expect(kept.size).toBe(1);
    const again = kept.get('a', () => ({}));
    expect(again).not.toBe(a);
    expect(kept.size).toBe(2);
  });

  it('when the limit is not a positive integer, then it is refused', () => {
    expect(() => new Kept(0)).toThrow(RangeError);
    expect(() => new Kept(1.5)).toThrow(RangeError);
  });
});
