// The one refusal that reads alike wherever zod checks a request: an unknown field or query
// parameter. zod names it apart from the issue's path (it is the key, not a place in the value),
// so a caller's own wording of the other issues cannot cover it.

import type { z } from 'zod';
import { GatewayError } from './errors';

/** 400 invalid_request naming the first unknown key of `issue` (with its path), or undefined when the issue is another. */
export function unknownKeyRefusal(issue: z.core.$ZodIssue | undefined, where: 'body' | 'query'): GatewayError | undefined {
  if (issue?.code !== 'unrecognized_keys' || issue.keys.length === 0) return undefined;
  const path = issue.path.join('.');
  const param = path ? `${path}.${issue.keys[0]}` : issue.keys[0];
  return new GatewayError('invalid_request', where === 'query' ? `unknown query parameter ${param}` : `unknown field ${param}`, { param });
}
