import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, request } from 'undici';
import { PHASES, PhaseClock, phaseMeans, startPhaseProbe } from './phase-probe';

/** One call's marks: arrival, provider request sent, its headers, its end, the answer (ms). */
function call(clock: PhaseClock, request: object, [arrived, sent, headers, done, answered]: number[]): void {
  clock.arrived(request, arrived);
  clock.upstream(1, sent);
  clock.upstream(2, headers);
  clock.upstream(3, done);
  clock.answered(request, answered);
  clock.closed(request);
}

describe('PhaseClock', () => {
  it('adds up the four phases of calls made one at a time, in µs', () => {
    const clock = new PhaseClock();
    call(clock, {}, [0, 0.2, 0.5, 0.52, 0.9]);
    call(clock, {}, [1, 1.1, 1.3, 1.32, 1.6]);
    const totals = clock.take();
    expect(PHASES).toHaveLength(4);
    expect(totals.calls).toBe(2);
    expect(phaseMeans(totals).map((us) => Math.round(us))).toEqual([150, 250, 20, 330]);
    expect(clock.take()).toEqual({ calls: 0, sumsUs: [0, 0, 0, 0] });
  });

  it('leaves out a call that shared the server with another', () => {
    const clock = new PhaseClock();
    const first = {};
    const second = {};
    clock.arrived(first, 0);
    clock.upstream(1, 0.1);
    clock.arrived(second, 0.15);
    clock.upstream(2, 0.3);
    clock.upstream(3, 0.31);
    clock.answered(first, 0.5);
    clock.closed(first);
    clock.answered(second, 0.7);
    clock.closed(second);
    // The next call, alone again, counts.
    call(clock, {}, [1, 1.1, 1.2, 1.25, 1.5]);
    const totals = clock.take();
    expect(totals.calls).toBe(1);
    expect(phaseMeans(totals).map((us) => Math.round(us))).toEqual([100, 100, 50, 250]);
  });

  it('counts no call that did not reach its provider, or whose client left', () => {
    const clock = new PhaseClock();
    const refused = {};
    clock.arrived(refused, 0);
    clock.answered(refused, 0.1); // a 402: no upstream marks
    clock.closed(refused);
    const gone = {};
    clock.arrived(gone, 1);
    clock.upstream(1, 1.1);
    clock.closed(gone); // closed before its answer finished
    clock.answered(gone, 1.5);
    expect(clock.take().calls).toBe(0);
    expect(phaseMeans({ calls: 0, sumsUs: [0, 0, 0, 0] })).toEqual([0, 0, 0, 0]);
  });
});

describe('startPhaseProbe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'phase-probe-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('times real calls from the channels of Node\'s HTTP server and undici', async () => {
    // The upstream is a bare socket server: an HTTP server of this process would publish on the
    // same channels (in the bench it is another process).
    const upstream = createNetServer((socket) => socket.on('data', () => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\n{"ok":true}')));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const pool = new Pool(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
    // A server that calls its upstream for each request, like the bare proxy.
    const server = createServer(async (_req, res) => {
      const answer = await pool.request({ method: 'GET', path: '/' });
      res.end(await answer.body.text());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const file = join(dir, 'phases.json');
    const probe = startPhaseProbe(file);
    try {
      for (let i = 0; i < 3; i++) await (await request(origin)).body.text();
      probe.write();
      const first = JSON.parse(readFileSync(file, 'utf8'));
      expect(first.taken).toBe(1);
      expect(first.calls).toBe(3);
      for (const us of phaseMeans(first)) expect(us).toBeGreaterThan(0);
      // Written again: from zero.
      probe.write();
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ taken: 2, calls: 0, sumsUs: [0, 0, 0, 0] });
    } finally {
      probe.stop();
      await pool.close();
      await new Promise((resolve) => server.close(resolve));
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});
