import { appInstances, appPorts, controlPlanePorts, planPorts, type PortPlan } from './ports';

function allPorts(plan: PortPlan): number[] {
  const ports = Object.values(controlPlanePorts(plan));
  for (const i of appInstances(plan)) ports.push(...Object.values(appPorts(i.name, i.ports)));
  return ports;
}

describe('planPorts', () => {
  test('when basePort is 0, then the documented default ports are used', () => {
    const plan = planPorts({ basePort: 0, gatewayInstances: 1, env: {} });
    expect(plan.gateways[0]).toMatchObject({ app: 8080, http: 3500, grpc: 50001 });
    expect(plan.actors).toMatchObject({ app: 3101, http: 3501, grpc: 50002 });
    expect(plan.ledger).toMatchObject({ app: 3102, http: 3502, grpc: 50003 });
    expect([plan.placement, plan.scheduler, plan.redis]).toEqual([50005, 50006, 6379]);
  });

  test('when PORT is set and basePort is 0, then the gateway listens on PORT', () => {
    expect(planPorts({ basePort: 0, gatewayInstances: 1, env: { PORT: '9191' } }).gateways[0]!.app).toBe(9191);
  });

  test('when a basePort is given, then every port is distinct and above it, the gateway on the base itself', () => {
    const plan = planPorts({ basePort: 30000, gatewayInstances: 3, env: { PORT: '9191' } });
    const ports = allPorts(plan);
    expect(new Set(ports).size).toBe(ports.length);
    expect(Math.min(...ports)).toBe(30000);
    expect(Math.max(...ports)).toBeLessThan(30100);
    expect(plan.gateways[0]!.app).toBe(30000);
  });

  test('when two gateway instances run on the default ports, then none of their ports collide', () => {
    const ports = allPorts(planPorts({ basePort: 0, gatewayInstances: 2, env: {} }));
    expect(new Set(ports).size).toBe(ports.length);
  });

  test('when gatewayPort and redisPort are given, then they override the plan', () => {
    const plan = planPorts({ basePort: 30000, gatewayInstances: 1, gatewayPort: 18080, redisPort: 16379, env: {} });
    expect([plan.gateways[0]!.app, plan.redis]).toEqual([18080, 16379]);
  });

  test('when gatewayInstances is out of range, then planning is refused', () => {
    expect(() => planPorts({ basePort: 0, gatewayInstances: 0, env: {} })).toThrow(/gatewayInstances/);
  });
});
