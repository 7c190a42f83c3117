import { decodeJsonText, MAX_JSON_DEPTH, nestingDepth } from './json-body';

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

describe('decodeJsonText', () => {
  it('when the bytes are valid UTF-8, then they are the text, non-ASCII included', () => {
    expect(decodeJsonText(Buffer.from('{"prompt":"café ☕ 🎨"}'))).toBe('{"prompt":"café ☕ 🎨"}');
  });
  it('when the bytes are not valid UTF-8 (a stray byte, an overlong form, an encoded surrogate, a cut sequence), then 400 invalid_utf8, never a repaired text', () => {
    for (const bytes of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const raw = Buffer.concat([Buffer.from('{"prompt":"'), Buffer.from(bytes), Buffer.from('"}')]);
      expect(() => decodeJsonText(raw)).toThrow(expect.objectContaining({ code: 'invalid_utf8', status: 400 }));
    }
  });
});
