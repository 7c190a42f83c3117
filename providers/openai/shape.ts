// Reading untyped JSON from an upstream's answer: each accessor returns the shape it names
// or fails the call as a 'protocol' error that names the field it could not find.

import { ProviderError } from '../port';

export type Json = Record<string, unknown>;

export function asOptionalObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

export function asObject(value: unknown, what: string): Json {
  return asOptionalObject(value) ?? badShape(what);
}

export function asArray(value: unknown, what: string): unknown[] {
  return Array.isArray(value) ? value : badShape(what);
}

export function badShape(what: string): never {
  throw new ProviderError('protocol', `upstream answer has no valid ${what}`);
}
