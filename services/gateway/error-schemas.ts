// The error answers in the OpenAPI document, generated from the one error responder's own tables
// (lib/errors.ts, lib/error-responder.ts): every code the gateway can send and each wire's error
// types are listed from the maps the responder answers with, so the document cannot miss one.

import { z } from 'zod';
import { WIRE_ERROR_TYPE } from '../../lib/error-responder';
import { ERROR_STATUS, type ErrorCode } from '../../lib/errors';
import { jsonSchemaOf } from './openapi-answers';

const CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];
const code = z.enum(CODES).describe("The gateway's error code");
const wireTypes = (wire: 'openai' | 'anthropic') => [...new Set(Object.values(WIRE_ERROR_TYPE).map((types) => types[wire]))] as [string, ...string[]];

const nativeError = z.object({
  error: z.looseObject({
    code,
    message: z.string(),
    param: z.string().optional().describe('The parameter at fault; absent (never null) when no single one is'),
    request_id: z.string(),
  }),
});

/** An image task's failure: the error with the task's id and state beside it; never a URL or base64. */
const imageTaskError = nativeError.extend({
  taskId: z.string(),
  status: z.enum(['failed', 'unresolved', 'unknown']),
  model: z.string().optional(),
  deadline: z.iso.datetime().optional().describe('unresolved: when UNKNOWN_IMAGE_V1 resolves the task'),
  resolution: z.literal('image_unknown_resolved').optional(),
});

const openAiError = z.object({
  error: z.looseObject({
    message: z.string(),
    type: z.enum(wireTypes('openai')).describe('OpenAI error type'),
    param: z.string().nullable().describe('null when no single parameter is at fault, as OpenAI sends it'),
    code,
    request_id: z.string(),
  }),
}).describe("OpenAI's error shape, which the official SDK parses");

const anthropicError = z.object({
  type: z.literal('error'),
  error: z.looseObject({ type: z.enum(wireTypes('anthropic')).describe('Anthropic error type'), message: z.string(), code }),
  request_id: z.string().describe('At the top level, as Anthropic sends it'),
}).describe("Anthropic's error shape, which the official SDK parses");

export const errorSchemas = {
  Error: jsonSchemaOf(nativeError, 'output'),
  ImageTaskError: jsonSchemaOf(imageTaskError, 'output'),
  OpenAIError: jsonSchemaOf(openAiError, 'output'),
  AnthropicError: jsonSchemaOf(anthropicError, 'output'),
};
