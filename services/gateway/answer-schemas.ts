// The success bodies of the routes whose answers were described only in words: zod schemas from
// which the OpenAPI document takes its JSON Schema (openapi.ts). Relayed provider bodies (chat
// completions, Anthropic messages) are loose objects: the gateway guarantees the fields named here
// and passes the provider's others through.

import type { Same } from '../../lib/same-type';
import { z } from 'zod';
import type { BalanceView } from '../../actors/funds-hold/FundsHoldInterface';
import { ORDER_CURRENCY, PAYMENT_EVENT_TYPES, type OrderStatus, type OrderView } from '../../actors/order/OrderInterface';
import { SCALE } from '../../lib/money';
import type { CallbackReceipt } from './orders/use-case';

const nanoUsd = z.number().int();
const stringList = z.array(z.string());

const catalogEntry = z.looseObject({
  id: z.string(),
  object: z.literal('model'),
  display_name: z.string(),
  capabilities_profile_id: z.string(),
  capabilities: stringList,
  pricing_status: z.record(z.string(), z.string()).describe('Per priced operation: ready, not_offered, unknown, …'),
  prices: z.record(z.string(), nanoUsd).describe('The prices in force now, nano-USD per unit, by unit: TEXT_INPUT, TEXT_INPUT_CACHE_READ, TEXT_INPUT_CACHE_WRITE, TEXT_INPUT_CACHE_WRITE_1H, TEXT_OUTPUT, IMAGE, SECOND (and the capability operations); a prompt-cache unit absent here is billed at the unit it refines'),
  prices_effective_from: z.string().nullable().describe('When the prices shown took force (ISO 8601 UTC): the date of the price_schedule entry in force; null when the undated prices are'),
  price_schedule: z.array(z.object({
    effective_from: z.string().describe('ISO 8601 UTC: the entry is in force from then until the next entry\'s'),
    prices: z.record(z.string(), nanoUsd).describe('nano-USD per unit while the entry is in force; replaces the undated prices whole'),
    pricing_status: z.record(z.string(), z.string()).optional().describe('The statuses while the entry is in force; absent: the model\'s'),
  })).describe('The dated prices as the catalog file lists them, in order (past, current and future entries); a call is charged the prices in force when it is reserved'),
  free_contract: z.boolean(),
  limits: z.looseObject({
    max_tokens: z.number().int().optional(), output_budget: z.number().int().optional(),
    max_image_tokens: z.number().int().optional().describe('The most prompt tokens one inline image costs on this model, when the catalog states it: a chat\'s hold and its tokens_per_minute count bound every inline image (and PDF page image) at it, and a stream cut before its prompt was stated counts an image in proportion to it. Absent: the rule of the provider kind (docs/money.md, "Inline images and PDFs")'),
  }),
  profiles: z.array(z.looseObject({
    profile_id: z.string(), wire_format: z.string(), compat_profile: z.string(), capabilities: stringList, chat_runtime_supported: z.boolean(),
  })),
});
export const catalogAnswer = z.object({ object: z.literal('list'), data: z.array(catalogEntry) });

export const capabilitiesAnswer = z.looseObject({
  candidate_contract: z.literal(true),
  notice: z.string(),
  actor_host: z.enum(['embedded', 'dapr']),
  funding_pool: z.string(),
  routes: z.record(z.string(), z.looseObject({ path: z.string(), ready: z.boolean() })),
  compatibility_gate: z.looseObject({ path_prefix: z.string(), routes: stringList, open: z.boolean(), eligible_models: stringList }),
  capability_gates: z.record(z.string(), z.looseObject({ ready: z.boolean(), ready_models: stringList })),
  models: z.array(z.object({
    id: z.string(),
    operations: z.record(z.string(), z.union([z.object({ ready: z.literal(true) }), z.object({ ready: z.literal(false), reason: z.string() })])),
  })),
});

export const openApiAnswer = z.looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) });

export const chatCompletionAnswer = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(z.looseObject({ index: z.number().int(), message: z.looseObject({ role: z.string() }) })),
  usage: z.looseObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() }).optional(),
});

export const anthropicMessageAnswer = z.looseObject({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string(),
  content: z.array(z.looseObject({ type: z.string() })),
  usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
});

const openAiModel = z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() });
const anthropicModel = z.object({ type: z.literal('model'), id: z.string(), display_name: z.string(), created_at: z.string() });

/** GET /v1/models in the OpenAI shape, or the Anthropic one (chosen by the request's anthropic-version). */
export const compatModelListAnswer = z.union([
  z.object({ object: z.literal('list'), data: z.array(openAiModel) }),
  z.object({ data: z.array(anthropicModel), has_more: z.boolean(), first_id: z.string().nullable(), last_id: z.string().nullable() }),
]);

/** GET /v1/models/{id}: one entry of that list, in the same shape. */
export const compatModelAnswer = z.union([openAiModel, anthropicModel]);

/** POST /v1/embeddings: one vector per input item, numbers or base64 float32 as asked, and the prompt tokens billed. */
export const embeddingsAnswer = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ object: z.literal('embedding'), index: z.number().int(), embedding: z.union([z.array(z.number()), z.string().describe('base64 of the float32 values, little-endian')]) })),
  model: z.string(),
  usage: z.object({ prompt_tokens: z.number().int().describe('Billed as TEXT_INPUT'), total_tokens: z.number().int() }),
});

export const countTokensAnswer = z.object({
  input_tokens: z.number().int().nonnegative().describe("The prompt's input tokens: the provider's own count where it has one, else the profile's tokenizer, else a quarter of the messages' JSON bytes"),
});

/** GET /api/distribution/api-credit/balance: a pool's balance view in USD at scale 9. */
export const balanceAnswer = z.object({
  currency: z.string(), scale: z.number().int(),
  accountId: z.string(), pool: z.string(),
  balance: nanoUsd, held: nanoUsd, available: nanoUsd.describe('balance − held − leased'), openHolds: z.number().int(),
  leased: nanoUsd.describe('What open funds leases of gateway instances still lock (not yet spent)'), openLeases: z.number().int(),
});
export const entitlementAnswer = balanceAnswer.extend({ subject: z.string().describe("The token's subject (sub)") });

export const imageSucceededAnswer = z.object({
  taskId: z.string(),
  status: z.enum(['succeeded', 'unknown']).describe('unknown only for a late artifact released after UNKNOWN_IMAGE_V1 (late_artifact: true, charged 0)'),
  model: z.string(),
  charged: nanoUsd.describe('Charged to the balance, nano-USD'),
  created: z.number().int(),
  resolution: z.literal('image_unknown_resolved').optional(),
  late_artifact: z.boolean().optional(),
  data: z.array(z.looseObject({ url: z.string().optional(), b64_json: z.string().optional(), revised_prompt: z.string().optional() })).min(1).max(1),
});

const paymentRecord = z.object({
  eventId: z.string(), type: z.enum(PAYMENT_EVENT_TYPES), amount: z.number().int(), currency: z.string(),
  occurredAt: z.string(), receivedAt: z.string(), applied: z.boolean(), note: z.string(),
});
export const ORDER_STATUSES = ['created', 'payment_pending', 'failed', 'paid', 'fulfilled', 'payment_mismatch'] as const satisfies readonly OrderStatus[];
const orderStatus = z.enum(ORDER_STATUSES);
export const orderAnswer = z.object({
  orderId: z.string().regex(/^ord_[0-9a-f]{32}$/),
  accountId: z.string(),
  amount: nanoUsd.describe('nano-USD'),
  currency: z.literal(ORDER_CURRENCY),
  scale: z.literal(SCALE),
  status: orderStatus.describe('fulfilled only once the credit of the amount has been committed to the balance; a checkout callback makes an order paid at most. payment_mismatch: a payment of another amount or currency, held for review, never credited'),
  createdAt: z.string(),
  createdBy: z.enum(['console', 'operator']),
  payments: z.array(paymentRecord).describe('Every checkout callback seen, applied or not (the first and the latest 25 when there are more than 50)'),
  paidAt: z.string().optional(),
  fulfilledAt: z.string().optional().describe('Present exactly when the status is fulfilled'),
  creditReference: z.string().describe('order:<orderId>, the reference of the one credit the order makes'),
});
export const checkoutReceiptAnswer = z.object({
  received: z.literal(true),
  eventId: z.string(),
  orderId: z.string(),
  applied: z.boolean().describe('false: recorded only (a duplicate success, an out-of-order or late failure or pending notice), or a replay'),
  replayed: z.boolean().describe('true: this event id was processed before with the same payload (the provider delivered it again); nothing was recorded or moved again'),
  status: orderStatus,
});

// The answers are built from these types: a field added to one and not to its schema does not compile.
const sameShapes: [
  Same<z.infer<typeof orderAnswer>, OrderView & { scale: typeof SCALE }>,
  Same<z.infer<typeof checkoutReceiptAnswer>, CallbackReceipt>,
  Same<Omit<z.infer<typeof balanceAnswer>, 'currency' | 'scale'>, BalanceView>,
] = [true, true, true];
void sameShapes;

/** One event of a chat stream (text/event-stream): in OpenAPI 3.1 an event stream's schema describes each event. */
export const streamEventAnswer = z.looseObject({
  event: z.string().optional().describe('Anthropic wire: message_start … message_stop, error; OpenAI wire: none (message)'),
  data: z.string().describe('A JSON object (chat.completion.chunk, or the Anthropic event), an error object, or [DONE] at the end of an OpenAI stream'),
  id: z.string().optional(),
});
