// Readiness probes: poll a condition until it holds, failing early when the process it waits
// for exits, and with the last observation when time runs out; the probes the topology waits on
// (Redis, the sidecars' actor runtime) and how a failed start is reported.

import { connect } from 'node:net';
import type { ManagedProcess } from './managed-process';

export class NotReadyError extends Error {
  constructor(
    message: string,
    /** The process whose output explains the failure, if one is known. */
    readonly process?: ManagedProcess,
  ) {
    super(message);
  }
}

/** A probe returns undefined when ready, or a short description of what is still missing. */
export type Probe = () => Promise<string | undefined>;

export interface WaitOptions {
  timeoutMs: number;
  /** Processes the condition depends on; the wait fails as soon as one of them exits. */
  processes?: ManagedProcess[];
  intervalMs?: number;
}

export async function waitUntil(what: string, probe: Probe, options: WaitOptions): Promise<void> {
  const { timeoutMs, processes = [], intervalMs = 150 } = options;
  const deadline = Date.now() + timeoutMs;
  let last = 'not probed yet';
  for (;;) {
    const gone = processes.find((p) => !p.running);
    if (gone) throw new NotReadyError(`${gone.spec.name} exited while waiting for ${what}`, gone);
    try {
      const missing = await probe();
      if (missing === undefined) return;
      last = missing;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline) {
      throw new NotReadyError(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last})`, processes[processes.length - 1]);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** GET url; ready when the status is 2xx (and `check` accepts the JSON body, when given). */
export function httpProbe(url: string, check?: (body: unknown) => string | undefined): Probe {
  return async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    const text = await res.text();
    if (res.status < 200 || res.status >= 300) return `GET ${url} → ${res.status} ${text.slice(0, 200)}`;
    if (!check) return undefined;
    return check(text ? JSON.parse(text) : undefined);
  };
}

/** Sends PING over RESP; resolves with the first reply line, e.g. "+PONG". */
export function redisPing(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host });
    let reply = '';
    const done = (err?: Error) => {
      socket.destroy();
      if (err) reject(err);
      else resolve(reply.split('\r\n')[0] ?? '');
    };
    socket.setTimeout(timeoutMs, () => done(new Error(`no reply from ${host}:${port} within ${timeoutMs} ms`)));
    socket.once('error', (err) => done(err));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) done();
    });
  });
}

/** Ready when something accepts TCP connections on 127.0.0.1:port. */
export function tcpProbe(port: number): Probe {
  return () =>
    new Promise((resolve) => {
      const socket = connect({ port, host: '127.0.0.1' });
      const done = (missing: string | undefined) => {
        socket.destroy();
        resolve(missing);
      };
      socket.setTimeout(1000, () => done(`127.0.0.1:${port} did not accept a connection`));
      socket.once('error', (err) => done(`127.0.0.1:${port}: ${err.message}`));
      socket.once('connect', () => done(undefined));
    });
}

export function redisProbe(port: number): Probe {
  return async () => {
    const reply = await redisPing(port);
    return reply === '+PONG' ? undefined : `PING → ${reply}`;
  };
}

/** Starts our own Redis only when nothing answers PING on the port; refuses a non-Redis listener. */
export async function redisNeedsStarting(port: number): Promise<boolean> {
  let reply: string;
  try {
    reply = await redisPing(port);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') return true;
    throw new Error(`something on 127.0.0.1:${port} does not answer like Redis: ${(err as Error).message}`);
  }
  if (reply === '+PONG') return false;
  throw new Error(`the Redis on 127.0.0.1:${port} answered PING with ${reply}; the topology needs one without a password`);
}

interface SidecarMetadata {
  actorRuntime?: { runtimeStatus?: string; hostReady?: boolean; placement?: string; activeActors?: Array<{ type?: string }> };
  scheduler?: { connected_addresses?: string[] };
}

/**
 * Ready when the actor runtime runs, placement is connected, every awaited actor type is
 * registered and the scheduler (where reminders live) is connected.
 */
export function actorRuntimeProbe(httpPort: number, actorTypes: string[]): Probe {
  return httpProbe(`http://127.0.0.1:${httpPort}/v1.0/metadata`, (body) => {
    const md = body as SidecarMetadata;
    if (!md.scheduler?.connected_addresses?.length) return 'scheduler not connected';
    const rt = md.actorRuntime;
    if (!rt || rt.runtimeStatus !== 'RUNNING') return `actor runtime ${rt?.runtimeStatus ?? 'absent'}`;
    if (rt.placement !== 'placement: connected') return `actor runtime ${rt.placement ?? 'placement unknown'}`;
    if (!rt.hostReady) return 'actor host not ready';
    const registered = new Set((rt.activeActors ?? []).map((a) => a.type));
    const missing = actorTypes.filter((t) => !registered.has(t));
    return missing.length > 0 ? `actor types not registered: ${missing.join(', ')} (have: ${[...registered].join(', ') || 'none'})` : undefined;
  });
}

export function allOf(probes: Probe[]): Probe {
  return async () => {
    for (const probe of probes) {
      const missing = await probe();
      if (missing !== undefined) return missing;
    }
    return undefined;
  };
}

export function startupError(err: unknown): Error {
  if (err instanceof NotReadyError && err.process) {
    const where = `${err.process.spec.name} (log: ${err.process.spec.logDir}/${err.process.spec.name}.log)`;
    return new Error(`Dapr topology failed to start: ${err.message}\n--- last output of ${where} ---\n${err.process.tail()}`);
  }
  return err instanceof Error ? err : new Error(String(err));
}
