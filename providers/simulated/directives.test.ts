import { parseSimDirectives, SimDirectiveError } from './directives';

describe('parseSimDirectives', () => {
  it('when the header is absent or blank, then there are no directives', () => {
    expect(parseSimDirectives(undefined)).toEqual({});
    expect(parseSimDirectives('  ; , ')).toEqual({});
  });

  it('when every directive is given, then each maps to its field', () => {
    const header = 'fail-before-output; reject; hang; late-artifact=500; stream-delay=20; tokens=40; fail-after-chunks=3';
    expect(parseSimDirectives(header)).toEqual({
      failBeforeOutput: true,
      reject: true,
      hang: true,
      lateArtifactMs: 500,
      streamDelayMs: 20,
      outputTokens: 40,
      failAfterChunks: 3,
    });
  });

  it('when separators mix and whitespace is loose, then it still parses', () => {
    expect(parseSimDirectives(' Tokens = 7 ,stream-delay=0;  HANG ')).toEqual({ outputTokens: 7, streamDelayMs: 0, hang: true });
  });

  it.each([
    ['explode', 'unknown sim directive "explode"'],
    ['tokens', 'sim directive "tokens" needs a value'],
    ['tokens=', 'sim directive "tokens" needs a value'],
    ['tokens=-1', 'sim directive "tokens" needs a non-negative integer, got "-1"'],
    ['stream-delay=1.5', 'sim directive "stream-delay" needs a non-negative integer'],
    ['late-artifact=soon', 'sim directive "late-artifact" needs a non-negative integer'],
    ['tokens=99999999999999999999', 'sim directive "tokens" needs a non-negative integer'],
    ['hang=1', 'sim directive "hang" takes no value'],
    ['tokens=1; tokens=2', 'sim directive "tokens" is given more than once'],
  ])('when the header is %p, then it is refused naming the directive', (header, message) => {
    let error: unknown;
    try {
      parseSimDirectives(header);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SimDirectiveError);
    expect((error as Error).message).toContain(message);
  });
});
