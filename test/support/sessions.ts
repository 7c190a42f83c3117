// HTTP helpers for the prototype session routes: create, run, list, and follow a session's
// Server-Sent Events as a client would (incrementally, ending when the test has what it wants).

import { json } from './api';
import { sseReader } from './sse';

export interface StreamedEvent {
  /** Undefined for frames that are no event of the session (stream.gap). */
  id?: number;
  event: string;
  data: Record<string, any>;
}

export function createSession(base: string, apiKey: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return json(`${base}/v1/sessions`, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

export async function newSession(base: string, apiKey: string, workspace?: string): Promise<string> {
  const created = await createSession(base, apiKey, workspace === undefined ? undefined : { workspace });
  if (created.status !== 201) throw new Error(`session: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.session_id;
}

export function startRun(base: string, apiKey: string, sessionId: string, body: unknown, headers: Record<string, string> = {}) {
  return json(`${base}/v1/sessions/${sessionId}/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

export function workspaces(base: string, apiKey: string) {
  return json(`${base}/v1/workspaces`, { headers: { authorization: `Bearer ${apiKey}` } });
}

export interface Followed {
  status: number;
  headers: Headers;
  /** Parsed events (the error body's JSON, as data, when status is not 200). */
  events: StreamedEvent[];
  /** Why reading stopped: `until` held, the server ended the stream, the time ran out, or the connection broke. */
  ended: 'until' | 'closed' | 'timeout' | 'error';
  body?: any;
}

export interface FollowOptions {
  lastEventId?: number;
  query?: string;
  /** Stops reading (and disconnects) once this holds for the events so far. */
  until?: (events: StreamedEvent[]) => boolean;
  timeoutMs?: number;
  headers?: Record<string, string>;
}

/** Follows GET /v1/sessions/{id}/events like an EventSource client, for at most timeoutMs. */
export async function follow(base: string, apiKey: string, sessionId: string, options: FollowOptions = {}): Promise<Followed> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 20_000);
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, ...(options.headers ?? {}) };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const events: StreamedEvent[] = [];
  try {
    const response = await fetch(`${base}/v1/sessions/${sessionId}/events${options.query ?? ''}`, { headers, signal: controller.signal });
    if (response.status !== 200) {
      const text = await response.text();
      return { status: response.status, headers: response.headers, events, ended: 'closed', body: text ? JSON.parse(text) : undefined };
    }
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const parser = sseReader((event) =>
      events.push({ ...(event.id !== undefined ? { id: Number(event.id) } : {}), event: event.event ?? 'message', data: JSON.parse(event.data) }),
    );
    let ended: Followed['ended'] = 'closed';
    try {
      for (;;) {
        if (options.until?.(events)) {
          ended = 'until';
          break;
        }
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {
      ended = controller.signal.aborted ? 'timeout' : 'error';
    }
    controller.abort();
    return { status: 200, headers: response.headers, events, ended };
  } catch (error) {
    if (controller.signal.aborted) return { status: 0, headers: new Headers(), events, ended: 'timeout' };
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

export const RUN_END = new Set(['run.completed', 'run.failed']);

/** Until the run (or, without an id, any run) has ended. */
export function runEnded(runId?: string) {
  return (events: StreamedEvent[]) => events.some((e) => RUN_END.has(e.event) && (runId === undefined || e.data.run_id === runId));
}

export function ofRun(events: StreamedEvent[], runId: string): StreamedEvent[] {
  return events.filter((e) => e.data.run_id === runId);
}
