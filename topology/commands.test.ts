// The Go runtime settings the local runner gives the Dapr processes (topology/commands.ts).

import { SIDECAR_GOGC, SIDECAR_GOMAXPROCS, sidecarGoEnv } from './commands';

describe('sidecarGoEnv', () => {
  test('when nothing is set, then the sidecars get the default collector target and one scheduler thread', () => {
    expect(sidecarGoEnv({})).toEqual({ GOGC: SIDECAR_GOGC, GOMAXPROCS: SIDECAR_GOMAXPROCS });
    expect(SIDECAR_GOMAXPROCS).toBe('1');
  });

  test('when both are set to values Go reads, then those are given', () => {
    expect(sidecarGoEnv({ DAPR_SIDECAR_GOGC: 'off', DAPR_SIDECAR_GOMAXPROCS: '4' })).toEqual({ GOGC: 'off', GOMAXPROCS: '4' });
    expect(sidecarGoEnv({ DAPR_SIDECAR_GOGC: '100' })).toEqual({ GOGC: '100', GOMAXPROCS: SIDECAR_GOMAXPROCS });
  });

  test("when DAPR_SIDECAR_GOMAXPROCS is empty, then GOMAXPROCS is left out (Go's default: a thread per core)", () => {
    expect(sidecarGoEnv({ DAPR_SIDECAR_GOMAXPROCS: '' })).toEqual({ GOGC: SIDECAR_GOGC });
  });

  test.each([
    ['DAPR_SIDECAR_GOMAXPROCS', '0'],
    ['DAPR_SIDECAR_GOMAXPROCS', 'two'],
    ['DAPR_SIDECAR_GOMAXPROCS', '1.5'],
    ['DAPR_SIDECAR_GOGC', ''],
    ['DAPR_SIDECAR_GOGC', '-1'],
    ['DAPR_SIDECAR_GOGC', 'fast'],
  ])('when %s is %j, then it is refused with the variable named', (name, value) => {
    expect(() => sidecarGoEnv({ [name]: value })).toThrow(new RegExp(`^${name}=`));
  });
});
