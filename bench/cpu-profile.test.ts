import { summarizeProfile } from './cpu-profile';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });

// root ─┬─ run_main_module ── load (start-up: left out)
//       ├─ (idle)
//       ├─ finishTxn (lmdb)
//       └─ handle (express) ── writeUtf8String (a socket write)
const profile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4, 5, 6] },
    { id: 2, callFrame: frame('', 'node:internal/main/run_main_module'), children: [3] },
    { id: 3, callFrame: frame('load', 'file:///app/dist/services/gateway/main.js', 9) },
    { id: 4, callFrame: frame('(idle)') },
    { id: 5, callFrame: frame('finishTxn', 'file:///app/node_modules/lmdb/dist/index.cjs', 1160) },
    { id: 6, callFrame: frame('handle', 'file:///app/node_modules/express/lib/application.js', 151), children: [7] },
    { id: 7, callFrame: frame('writeUtf8String') },
  ],
  samples: [3, 3, 4, 5, 5, 5, 6, 7],
  timeDeltas: [1000, 1000, 5000, 3000, 3000, 2000, 2000, 4000],
};

describe('summarizeProfile', () => {
  const summary = summarizeProfile(profile, 10);

  it('leaves start-up and idle time out of the busy time', () => {
    expect(summary.busyMs).toBe(14);
    expect(summary.idleMs).toBe(5);
  });

  it('puts self time in categories, in µs per request', () => {
    expect(summary.categories).toEqual([
      { name: 'LMDB + msgpack (actor state, ledger)', ms: 8, pct: 57.1, usPerRequest: 800 },
      { name: 'socket writes (system calls)', ms: 4, pct: 28.6, usPerRequest: 400 },
      { name: 'Express + router', ms: 2, pct: 14.3, usPerRequest: 200 },
    ]);
  });

  it('names functions by package or built file and line', () => {
    expect(summary.functions.map((f) => f.name)).toEqual([
      'finishTxn node_modules/lmdb/dist/index.cjs:1161',
      'writeUtf8String',
      'handle node_modules/express/lib/application.js:152',
    ]);
  });
});
