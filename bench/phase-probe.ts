// Where a sequential call's time goes inside a server, without touching the server's code: loaded
// with `node --require dist/bench/phase-probe.js`, it listens to the diagnostics channels that
// Node's HTTP server and undici publish, and times each call that had the server to itself (no
// other request in flight from its arrival to its answer) in four phases:
//   to the upstream   its arrival → undici has written the provider request's headers
//   upstream          → the provider's answer headers arrived (the provider's own time, the two
//                       hops between the processes, and whatever the server still ran after sending)
//   upstream body     → the provider's answer complete
//   to the answer     → the server's answer finished (the settle, its commit and the write to the client)
// `bench/ab.ts --phases` loads it into every server it starts: on SIGUSR2 the probe writes its
// totals since the last signal to the file named by BENCH_PHASES_FILE and starts again from zero.
// It also writes them when the process exits, so that any server started with
// `NODE_OPTIONS="--require …/phase-probe.js"` (the Dapr topology's apps, in `npm run bench`) tells
// its c=1 calls at the end; a `{pid}` in the file's name is replaced by the process's id.
// Only calls one at a time are timed, so its figures are of the c=1 runs, which is what they are
// for: at c=1 nearly all the latency a server adds is in these phases.

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isMainThread } from 'node:worker_threads';

export const PHASES = ['to the upstream', 'upstream', 'upstream body', 'to the answer'] as const;

export interface PhaseTotals {
  /** Calls timed (each alone in the server from arrival to answer). */
  calls: number;
  /** Per phase (in PHASES' order), the sum over those calls, µs. */
  sumsUs: number[];
}

interface Call {
  request: object;
  /** Times of the call's marks, ms: arrival, provider request sent, its headers, its end. */
  marks: number[];
  alone: boolean;
}

/** The timing itself, fed with the channels' events (kept apart from them to be testable). */
export class PhaseClock {
  private inFlight = 0;
  private current: Call | undefined;
  private totals: PhaseTotals = { calls: 0, sumsUs: PHASES.map(() => 0) };

  /** A request arrived. */
  arrived(request: object, at: number): void {
    this.inFlight++;
    if (this.inFlight === 1) this.current = { request, marks: [at], alone: true };
    else if (this.current) this.current.alone = false;
  }

  /** The call's next upstream mark: request sent, answer headers, answer complete (in that order; a retry's are ignored). */
  upstream(mark: 1 | 2 | 3, at: number): void {
    const call = this.current;
    if (call && call.marks.length === mark) call.marks.push(at);
  }

  /** A request's answer finished (a whole call: its phases are added if it was timed alone). */
  answered(request: object, at: number): void {
    const call = this.current;
    if (!call || call.request !== request) return;
    this.current = undefined;
    if (!call.alone || call.marks.length !== 4) return;
    const marks = [...call.marks, at];
    this.totals.calls++;
    PHASES.forEach((_, i) => (this.totals.sumsUs[i] += (marks[i + 1] - marks[i]) * 1000));
  }

  /** A request is over, answered or not. */
  closed(request: object): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (this.current?.request === request) this.current = undefined;
  }

  /** The totals so far, and a fresh start. */
  take(): PhaseTotals {
    const totals = this.totals;
    this.totals = { calls: 0, sumsUs: PHASES.map(() => 0) };
    return totals;
  }
}

/** Mean µs per phase of some totals (zeros when no call was timed). */
export function phaseMeans(totals: PhaseTotals): number[] {
  return totals.sumsUs.map((sum) => (totals.calls > 0 ? sum / totals.calls : 0));
}

/** Starts timing in this process: `write` puts the totals since the last write in `file`; `stop` ends it. */
export function startPhaseProbe(file: string): { write(): void; stop(): void } {
  const clock = new PhaseClock();
  const now = () => performance.now();
  let taken = 0;
  const write = () => {
    taken++;
    writeFileSync(file, JSON.stringify({ taken, ...clock.take() }));
  };
  const listeners: [string, (message: unknown) => void][] = [
    ['http.server.request.start', (message) => {
      const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
      clock.arrived(request, now());
      response.once('close', () => clock.closed(request));
    }],
    ['undici:client:sendHeaders', () => clock.upstream(1, now())],
    ['undici:request:headers', () => clock.upstream(2, now())],
    ['undici:request:trailers', () => clock.upstream(3, now())],
    ['http.server.response.finish', (message) => clock.answered((message as { request: IncomingMessage }).request, now())],
  ];
  for (const [channel, listener] of listeners) subscribe(channel, listener);
  return {
    write,
    stop: () => {
      for (const [channel, listener] of listeners) unsubscribe(channel, listener);
    },
  };
}

// Loaded with --require: only the process's main thread serves HTTP (workers load the same --require).
const target = process.env.BENCH_PHASES_FILE;
if (target && isMainThread) {
  const probe = startPhaseProbe(target.replace('{pid}', String(process.pid)));
  process.on('SIGUSR2', probe.write);
  process.on('exit', probe.write);
}
