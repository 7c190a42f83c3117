// The request bodies in the OpenAPI document, generated from the zod schemas the routes parse
// with. A route checks some fields apart, to refuse with a code naming the rule (max_tokens,
// n, thinking: chat/limits.ts; n: images): those are added here, for the document only, with the
// bounds those checks apply.

import { z } from 'zod';
import { chatBodySchema, messagesBodySchema } from './chat/request';
import { embeddingsBodySchema, embeddingsInputSchema } from './embeddings/request';
import { MAX_TOKENS_CEILING } from './chat/limits';
import { imageBodySchema } from './images/request';
import { callbackBody, orderBody } from './orders/request';
import { jsonSchemaOf } from './openapi-answers';

const maxTokens = z.number().int().min(0).max(MAX_TOKENS_CEILING)
  .describe('0 or omitted: the model output budget, else its maximum, else 1024. A lower model limit takes precedence.');
const thinking = z.looseObject({ budget_tokens: z.number().int().min(0).optional().describe('At most the effective max_tokens; quoted numbers are refused.') });

const chatRequest = chatBodySchema.extend({ max_tokens: maxTokens.optional(), n: z.literal(1).nullable().optional().describe('1, or null: one completion.'), thinking: thinking.optional() })
  .describe('OpenAI chat-completions wire. max_completion_tokens is refused (use max_tokens). Refused too, as the hold cannot bound their cost: service_tier other than auto or default, web_search_options, audio, modalities other than ["text"], and content parts the provider fetches or prices apart (an image_url whose url is not a data: URL, a file part naming a file_id, input_audio). Body ≤ the effective limit (≤ 32 MiB).');
const messagesRequest = messagesBodySchema.extend({
  model: z.string().optional().describe('Required on /v1/messages; ignored on the open route (the path names the model)'),
  max_tokens: maxTokens.optional(),
  thinking: thinking.optional(),
}).describe('Anthropic Messages wire, with the limits of the chat route. Fields other than model, messages, system, max_tokens, stream, temperature, top_p, top_k, stop_sequences, metadata, thinking, tools and tool_choice are refused, and so are server tools, Anthropic-defined client tools (bash, text editor, computer use) and content blocks whose source is a URL or a file stored with the provider (at any depth).');
const imageRequest = imageBodySchema.extend({
  n: z.literal(1).optional().describe('Exactly one image per request.'),
  response_format: z.enum(['url', 'b64_json']).default('url'),
  size: z.string().optional().describe('Passed to the provider as given, like the other OpenAI image fields (quality, style, user).'),
}).describe('OpenAI images wire, one image. The same Idempotency-Key with a different body (or model path) conflicts.');

const embeddingsRequest = embeddingsBodySchema.extend({
  input: embeddingsInputSchema.describe('A text, texts, an array of token ids, or arrays of token ids; never empty. Held for at most its UTF-8 bytes plus its token ids, billed per prompt token.'),
  encoding_format: z.enum(['float', 'base64']).default('float'),
}).describe('OpenAI embeddings wire. Other fields are refused.')
  // A real model of the default catalog: the fuzzer's examples reach the money path.
  .meta({ examples: [{ model: 'sim-embed', input: ['hello', 'world'], encoding_format: 'base64', dimensions: 8 }] });

export const requestSchemas = {
  ChatRequest: jsonSchemaOf(chatRequest, 'input'),
  MessagesRequest: jsonSchemaOf(messagesRequest, 'input'),
  ImageRequest: jsonSchemaOf(imageRequest, 'input'),
  EmbeddingsRequest: jsonSchemaOf(embeddingsRequest, 'input'),
  OrderRequest: jsonSchemaOf(orderBody.describe('Top-up amount in nano-USD (1 USD = 1e9); at most 10,000 USD'), 'input'),
  CheckoutEvent: jsonSchemaOf(callbackBody, 'input'),
};
