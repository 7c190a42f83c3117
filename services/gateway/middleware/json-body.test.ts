import { MAX_JSON_DEPTH, nestingDepth } from './json-body';

describe('nestingDepth', () => {
  it('when a value is a scalar, then its depth is 0; each object or array level adds one', () => {
    expect(nestingDepth('x')).toBe(0);
    expect(nestingDepth(null)).toBe(0);
    expect(nestingDepth({})).toBe(1);
    expect(nestingDepth({ a: [1, { b: 2 }] })).toBe(3);
    expect(nestingDepth([[], [[[]]]])).toBe(4);
  });
  it('when a value is nested far beyond the limit, then it is measured without exhausting the stack', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(nestingDepth(deep)).toBeGreaterThan(MAX_JSON_DEPTH);
  });
  it('when a value is exactly at the limit, then it is within it', () => {
    const atLimit = JSON.parse(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`);
    expect(nestingDepth(atLimit)).toBe(MAX_JSON_DEPTH);
  });
});
