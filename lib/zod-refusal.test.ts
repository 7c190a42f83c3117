import { z } from 'zod';
import { unknownKeyRefusal } from './zod-refusal';

const firstIssue = (schema: z.ZodType, value: unknown) => {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected a refusal');
  return result.error.issues[0];
};

describe('unknownKeyRefusal', () => {
  const schema = z.strictObject({ limit: z.string().optional(), options: z.strictObject({ seed: z.number().optional() }).optional() });

  it('names an unknown query parameter', () => {
    const refusal = unknownKeyRefusal(firstIssue(schema, { cursor: 'x' }), 'query');
    expect([refusal?.code, refusal?.message, refusal?.param]).toEqual(['invalid_request', 'unknown query parameter cursor', 'cursor']);
  });

  it('names an unknown field with its path in a body', () => {
    const refusal = unknownKeyRefusal(firstIssue(schema, { options: { seed: 1, temperature: 2 } }), 'body');
    expect([refusal?.message, refusal?.param]).toEqual(['unknown field options.temperature', 'options.temperature']);
  });

  it('leaves every other issue to its caller', () => {
    expect(unknownKeyRefusal(firstIssue(schema, { limit: 5 }), 'query')).toBeUndefined();
    expect(unknownKeyRefusal(undefined, 'body')).toBeUndefined();
  });
});
