import { EventEmitter } from 'node:events';
import { contextFromHeaders, currentContext, detached, parseTraceparent, parseTracestate, propagationHeaders, runRequest, runWithContext, traceparentOf, tracestateOf } from './request-context';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it('when the header is a valid version-00 traceparent, then its parts are read', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01`)).toEqual({ traceId: TRACE, parentId: PARENT, flags: '01' });
    expect(parseTraceparent(` 00-${TRACE}-${PARENT}-00 `)).toEqual({ traceId: TRACE, parentId: PARENT, flags: '00' });
  });

  it('when a later version carries more fields, then the known ones are read', () => {
    expect(parseTraceparent(`cc-${TRACE}-${PARENT}-01-what-comes-next`)).toEqual({ traceId: TRACE, parentId: PARENT, flags: '01' });
  });

  it('when flags other than sampled are set, then only sampled is kept (the one flag of version 00)', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-03`)?.flags).toBe('01');
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-fe`)?.flags).toBe('00');
  });

  it.each([
    ['absent', undefined],
    ['not a string', ['a', 'b']],
    ['empty', ''],
    ['version ff', `ff-${TRACE}-${PARENT}-01`],
    ['version 00 with a fifth field', `00-${TRACE}-${PARENT}-01-extra`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['uppercase hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${PARENT}-01`],
    ['two headers joined', `00-${TRACE}-${PARENT}-01, 00-${TRACE}-${PARENT}-01`],
  ])('when the header is %s, then it is ignored', (_what, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
});

describe('parseTracestate', () => {
  const kept = (header: unknown) => parseTracestate(header)?.serialize();
  const members = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `k${from + i}=v${from + i}`);

  it('when the header is a valid list, then it is kept as it came, in its order (members trimmed, empty ones left out)', () => {
    expect(kept('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7')).toBe('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    expect(kept(' rojo=1 ,\t, congo=2,')).toBe('rojo=1,congo=2');
    expect(kept('tenant@vendor=x y,a/b*c_d-e=!~')).toBe('tenant@vendor=x y,a/b*c_d-e=!~');
  });

  it('when it came as several headers, then they make one list', () => {
    expect(kept(['a=1', 'b=2,c=3'])).toBe('a=1,b=2,c=3');
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['only commas and spaces', ' , ,'],
    ['a member without =', 'a=1,nonsense'],
    ['an uppercase key', 'a=1,Rojo=2'],
    ['an empty key', '=1'],
    ['an empty value', 'a='],
    ['a value with =', 'a=b=c'],
    ['a value with a control character', 'a=b\u0001'],
    ['a key said twice', 'a=1,b=2,a=3'],
    ['33 members', members(33).join(',')],
  ])('when the header is %s, then it is dropped whole, not an error', (_what, header) => {
    expect(parseTracestate(header)).toBeUndefined();
  });

  it('when it has 32 members, then all are kept', () => {
    expect(kept(members(32).join(','))).toBe(members(32).join(','));
  });

  it('when it is over 512 characters, then members over 128 characters go first, then members from the end, until it fits', () => {
    const large = `big=${'x'.repeat(200)}`;
    const small = Array.from({ length: 10 }, (_, i) => `m${i}=${'y'.repeat(40)}`); // 43 characters each
    // 10 small (439 with commas) and the large one: the large one goes, the small ones all stay.
    expect(kept([small.slice(0, 5).join(','), large, small.slice(5).join(',')].join(','))).toBe(small.join(','));
    // 13 small ones (571): cut from the end to 11 (483).
    const more = [...small, ...['a', 'b', 'c'].map((k) => `${k}=${'z'.repeat(41)}`)];
    expect(kept(more.join(','))).toBe(more.slice(0, 11).join(','));
  });
});

describe('contextFromHeaders', () => {
  it('when a valid traceparent comes in, then its trace continues under a new span of ours, sampled even when the caller said unsampled', () => {
    for (const flags of ['00', '01']) {
      const context = contextFromHeaders({ traceparent: `00-${TRACE}-${PARENT}-${flags}` }, 'req-1');
      expect(context).toEqual({ requestId: 'req-1', traceId: TRACE, spanId: expect.stringMatching(/^[0-9a-f]{16}$/), flags: '01' });
      expect(context.spanId).not.toBe(PARENT);
      expect(traceparentOf(context)).toBe(`00-${TRACE}-${context.spanId}-01`);
      expect(runWithContext(context, propagationHeaders).traceparent).toBe(`00-${TRACE}-${context.spanId}-01`);
    }
  });

  it('when none or an invalid one comes in, then a new 16-byte trace and 8-byte span are made, sampled', () => {
    const a = contextFromHeaders({ traceparent: 'garbage' });
    const b = contextFromHeaders({});
    for (const context of [a, b]) {
      expect(context.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(context.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(context.flags).toBe('01');
      expect(parseTraceparent(traceparentOf(context))).toEqual({ traceId: context.traceId, parentId: context.spanId, flags: '01' });
    }
    expect(a.traceId).not.toBe(b.traceId);
  });

  it('when many contexts are made, then every span id is new (across refills of the random pool)', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => contextFromHeaders({}).spanId));
    expect(ids.size).toBe(2000);
  });

  it('when no request id is given, then a sane x-request-id is kept and anything else replaced', () => {
    expect(contextFromHeaders({ 'x-request-id': 'abc-123' }).requestId).toBe('abc-123');
    expect(contextFromHeaders({ 'x-request-id': 'bad id\n' }).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the current context', () => {
  const context = contextFromHeaders({}, 'req-ctx');

  it('when work runs in a request, then the context follows it across awaits and timers', async () => {
    expect(currentContext()).toBeUndefined();
    const seen = await runWithContext(context, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentContext();
    });
    expect(seen).toBe(context);
    expect(currentContext()).toBeUndefined();
  });

  it('when work is detached, then it has no context', () => {
    runWithContext(context, () => {
      expect(detached(() => currentContext())).toBeUndefined();
      expect(currentContext()).toBe(context);
    });
  });

  it('when a request comes with a tracestate, then it goes along unchanged beside the traceparent; without a valid traceparent it is not read', () => {
    const withState = contextFromHeaders({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'rojo=00f067aa0ba902b7, congo=t61rcWkgMzE' }, 'req-state');
    expect(tracestateOf(withState)).toBe('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    runWithContext(withState, () => {
      expect(propagationHeaders()).toEqual({ traceparent: traceparentOf(withState), tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE', 'x-request-id': 'req-state' });
    });
    const orphan = contextFromHeaders({ traceparent: 'garbage', tracestate: 'rojo=1' }, 'req-orphan');
    expect(tracestateOf(orphan)).toBeUndefined();
    expect(runWithContext(orphan, propagationHeaders)).not.toHaveProperty('tracestate');
    const malformed = contextFromHeaders({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'rojo' }, 'req-bad');
    expect(malformed.traceId).toBe(TRACE);
    expect(runWithContext(malformed, propagationHeaders)).not.toHaveProperty('tracestate');
  });

  it('when a call leaves for the sidecar, then the trace and request id go along, and nothing outside a request', () => {
    expect(propagationHeaders()).toEqual({});
    runWithContext(context, () => {
      expect(propagationHeaders()).toEqual({ traceparent: traceparentOf(context), 'x-request-id': 'req-ctx' });
    });
  });

  it('when a request body\'s events come from outside the request, then their listeners still run in it', () => {
    const req = new EventEmitter();
    const seen: unknown[] = [];
    runRequest(req, context, () => req.on('end', () => seen.push(currentContext())));
    expect(currentContext()).toBeUndefined();
    req.emit('end');
    expect(seen).toEqual([context]);
  });
});
