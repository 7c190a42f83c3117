import { actorsPlaceable } from './compose';

describe('actorsPlaceable (the gateway readiness check of actor calls on Dapr)', () => {
  it('when the actor runtime runs and placement is connected, then actor calls can be placed', () => {
    expect(actorsPlaceable({ actorRuntime: { runtimeStatus: 'RUNNING', hostReady: true, placement: 'placement: connected' } })).toBe(true);
  });
  it('when placement is gone or the runtime is not running (what daprd 1.18 reports), then they cannot', () => {
    expect(actorsPlaceable({ actorRuntime: { runtimeStatus: 'RUNNING', hostReady: false, placement: 'placement: disconnected' } })).toBe(false);
    expect(actorsPlaceable({ actorRuntime: { runtimeStatus: 'INITIALIZING' } })).toBe(false);
    expect(actorsPlaceable({ actorRuntime: { runtimeStatus: 'DISABLED', placement: 'placement: disconnected' } })).toBe(false);
    expect(actorsPlaceable({})).toBe(false);
    expect(actorsPlaceable('not json')).toBe(false);
    expect(actorsPlaceable(undefined)).toBe(false);
  });
});
