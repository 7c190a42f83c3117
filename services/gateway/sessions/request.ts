// What the prototype session routes accept (docs/sessions.md): the session body, session ids,
// the resume position of an event stream, and the capabilities a run may ask for.

import { z } from 'zod';
import { GatewayError } from '../../../lib/errors';
import { isCanonicalUuid } from '../../../lib/uuid';
import type { Capability } from '../capabilities/gates';
import { parseJsonObject } from '../json-object';

export const DEFAULT_WORKSPACE = 'default';
/** Lower-case letters, digits, `-` and `_`, starting with a letter or digit, at most 64 characters. */
const WORKSPACE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const sessionBodySchema = z.strictObject({
  workspace: z.string().regex(WORKSPACE_NAME, 'must be 1 to 64 lower-case letters, digits, "-" or "_", starting with a letter or digit').optional(),
});

/** `POST /v1/sessions`: no body, or `{"workspace"?}`; any other field is refused. */
export function parseSessionBody(body: unknown): { workspace: string } {
  if (body === undefined) return { workspace: DEFAULT_WORKSPACE };
  return { workspace: parseJsonObject(sessionBodySchema, body).workspace ?? DEFAULT_WORKSPACE };
}

/** Session ids are canonical UUIDs: anything else is a session nobody has (the same 404). */
export function isSessionId(value: string): boolean {
  return isCanonicalUuid(value);
}

/**
 * Where a reader resumes: after the `Last-Event-ID` header's id, else after the `last_event_id`
 * query's, else from the start. The header wins: a reconnecting EventSource keeps its first URL
 * and sends the newer id in the header.
 */
export function resumeAfter(header: string | string[] | undefined, query: unknown): { after: number; param: ResumeParam } {
  const [given, param]: [unknown, ResumeParam] = header !== undefined ? [header, 'Last-Event-ID'] : [query, 'last_event_id'];
  if (given === undefined) return { after: 0, param };
  if (typeof given !== 'string' || !/^\d{1,15}$/.test(given.trim())) {
    throw new GatewayError('invalid_request', `${param} must be the id of an event of this session (a non-negative integer)`, { param });
  }
  return { after: Number(given.trim()), param };
}

/** Where the resume id came from: the header, or the query parameter. */
export type ResumeParam = 'Last-Event-ID' | 'last_event_id';

/** A run delivers through the session's events: only Agent Run, whose channel that is, may be asked for. */
export function runCapabilities(requested: readonly Capability[]): Capability[] {
  const other = requested.filter((c) => c !== 'agent_run');
  if (other.length > 0) {
    throw new GatewayError('invalid_request', `X-Payg-Capabilities: ${other.join(', ')} cannot be used on a session run (only agent_run delivers through session events)`, { param: 'X-Payg-Capabilities' });
  }
  return [...requested];
}
