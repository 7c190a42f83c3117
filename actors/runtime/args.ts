// The host's check of an actor call's argument, the same on both hosts: each actor class names
// the schema of every method's argument (exported from its interface file), and a call whose
// argument does not fit is refused with invalid_request before the actor's turn begins, so it
// changes nothing. The actor then reads the values (exact amounts, its own rules).

import type { z } from 'zod';
import { GatewayError } from '../../lib/errors';
import type { ActorClass } from './port';

export function checkArgument(cls: ActorClass, method: string, arg: unknown): void {
  const schema: z.ZodType | undefined = cls.args[method];
  if (!schema) throw new GatewayError('not_found', `${cls.actorType} has no method ${method}`);
  const result = schema.safeParse(arg);
  if (result.success) return;
  const issue = result.error.issues[0];
  const at = issue?.path.join('.') || 'argument';
  throw new GatewayError('invalid_request', `${cls.actorType}.${method}: ${at}: ${issue?.message}`, issue?.path.length ? { param: at } : {});
}
