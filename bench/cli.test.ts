import { parseVariant } from './cli';

describe("bench/ab.ts's --variant", () => {
  it('when it names a label and a build, then the gateway runs with no extra environment', () => {
    expect(parseVariant('base=/tmp/base/dist')).toEqual({ label: 'base', dist: '/tmp/base/dist', env: {} });
    expect(parseVariant('base=/tmp/a=b/dist')).toEqual({ label: 'base', dist: '/tmp/a=b/dist', env: {} });
  });

  it("when a value holds '=', then only the first '=' ends the name", () => {
    expect(parseVariant('semi=dist,NODE_OPTIONS=--max-semi-space-size=32,GATEWAY_FUNDS_LEASE=off')).toEqual({
      label: 'semi',
      dist: 'dist',
      env: { NODE_OPTIONS: '--max-semi-space-size=32', GATEWAY_FUNDS_LEASE: 'off' },
    });
  });

  it('when the build or a NAME=value is missing, then it is refused naming the spec', () => {
    expect(() => parseVariant('base')).toThrow(/--variant base: expected label=<dist directory>/);
    expect(() => parseVariant('base=dist,NODE_OPTIONS')).toThrow(/NODE_OPTIONS is not NAME=value/);
    expect(() => parseVariant('base=dist,=x')).toThrow(/=x is not NAME=value/);
  });
});
