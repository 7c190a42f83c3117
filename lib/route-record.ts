// How a call was routed across its profile's upstreams (provider entries): the upstream whose
// answer is charged and every attempt, in order. A settle may carry it; FundsHold puts it on the
// usage event of that settle and the ledger on each usage row of the call (docs/money.md,
// "Routes on usage rows"). One schema checks it wherever it crosses a boundary.

import { z } from 'zod';
import { GatewayError } from './errors';

/** How one attempt ended. Failures before any output are the ones a call falls back from. */
export const ROUTE_OUTCOMES = ['served', 'refused', 'unavailable', 'rate_limited', 'timeout', 'rejected', 'broken'] as const;
export type RouteOutcome = (typeof ROUTE_OUTCOMES)[number];
/** The outcomes of the attempt that is charged (the last one): it answered, or was cut after output. */
export const CHARGED_OUTCOMES: readonly RouteOutcome[] = ['served', 'broken'];
export const MAX_ROUTE_ATTEMPTS = 16;
export const MAX_UPSTREAM_LENGTH = 128;

/** How a call was routed: the upstream that served it and every attempt, in order (the serving one last). */
export interface RouteRecord {
  /** The provider entry (catalog `providers` key) whose answer is charged. */
  upstream: string;
  attempts: RouteAttempt[];
}
export interface RouteAttempt {
  upstream: string;
  /** 'served' | 'refused' (connect error) | 'unavailable' (5xx) | 'rate_limited' (429) | 'timeout' (no first byte in time) | 'rejected' (4xx other than 429) | 'broken' (cut after output) */
  outcome: string;
  durationMs: number;
  /** True when the provider may have billed this failed attempt (e.g. a timeout): its cost, if any, is the platform's, never the customer's. */
  platformBorne?: boolean;
}

const upstream = z.string().min(1).max(MAX_UPSTREAM_LENGTH);

export const routeAttemptSchema = z.strictObject({
  upstream: upstream.describe('The provider entry tried'),
  outcome: z.enum(ROUTE_OUTCOMES).describe('served; refused (connect error); unavailable (5xx); rate_limited (429); timeout (no first byte in time); rejected (4xx other than 429); broken (cut after output)'),
  durationMs: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe('How long the attempt took, in milliseconds'),
  platformBorne: z.boolean().optional().describe('The provider may have billed this failed attempt: its cost, if any, is borne by the platform, never charged'),
});

/**
 * A route record: 1 to 16 attempts in order; the last is the charged one (its upstream is
 * `upstream`, its outcome served or broken), every earlier one failed before any output.
 */
export const routeRecordSchema = z.strictObject({
  upstream: upstream.describe('The provider entry (catalog providers key) whose answer is charged'),
  attempts: z.array(routeAttemptSchema).min(1).max(MAX_ROUTE_ATTEMPTS).describe('Every attempt in order, the charged one last'),
}).superRefine((route, ctx) => {
  // Zod runs this even when a part failed already: only a list of attempts is looked at.
  if (!Array.isArray(route.attempts) || route.attempts.length === 0) return;
  const last = route.attempts.length - 1;
  if (route.attempts[last]?.upstream !== route.upstream) {
    ctx.addIssue({ code: 'custom', path: ['attempts', last, 'upstream'], message: 'the last attempt is the charged one: its upstream must be the route\'s upstream' });
  }
  route.attempts.forEach((attempt, i) => {
    if (CHARGED_OUTCOMES.includes(attempt?.outcome) !== (i === last)) {
      ctx.addIssue({ code: 'custom', path: ['attempts', i, 'outcome'], message: `only the last attempt is ${CHARGED_OUTCOMES.join(' or ')}; the others failed before any output` });
    }
  });
}) satisfies z.ZodType<RouteRecord>;

/** A route that passed the schema: a RouteRecord whose outcomes are known. */
export type CheckedRoute = z.infer<typeof routeRecordSchema>;

/**
 * A route off a request, checked: absent stays absent; a bad one is refused with invalid_request
 * naming where (`route.attempts.1.outcome`), so the settle that carries it changes nothing.
 */
export function checkRoute(route: unknown): CheckedRoute | undefined {
  if (route === undefined) return undefined;
  const result = routeRecordSchema.safeParse(route);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = ['route', ...(issue?.path ?? [])].join('.');
  throw new GatewayError('invalid_request', `${param}: ${issue?.message}`, { param });
}

/** `%`, `:` and `;` of an upstream name percent-encoded, so the attempts text splits unambiguously. */
const textOf = (name: string) => name.replace(/[%:;]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The attempts as one CSV cell, in order, `;`-separated: `<upstream>:<outcome>:<duration>ms`,
 * with `:borne` after a platform-borne one (`a:timeout:30000ms:borne;b:served:340ms`).
 */
export function attemptsText(route: RouteRecord): string {
  return route.attempts.map((a) => `${textOf(a.upstream)}:${a.outcome}:${a.durationMs}ms${a.platformBorne ? ':borne' : ''}`).join(';');
}
