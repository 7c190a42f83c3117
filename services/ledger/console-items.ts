// The items of the console's pages and exports, once: the ledger builds them in this shape, the
// CSV columns follow their fields in order, and the OpenAPI document is generated from them.

import { z } from 'zod';
import { BILLING_KINDS, USAGE_UNITS } from '../../lib/events';
import { routeRecordSchema } from '../../lib/route-record';

const amount = (description: string) => z.number().int().describe(`${description}, nano-USD (exact integer)`);
const occurredAt = z.iso.datetime().describe('When the change happened (RFC 3339, UTC)');
const requestId = z.string().describe('The X-Request-Id of the HTTP request that caused it');
const taskId = z.string().describe('Image task (images only)');

export const billItemSchema = z.object({
  id: z.string().describe('The billing event id'),
  occurredAt,
  kind: z.enum(BILLING_KINDS).describe('debit: an operator correction (balanceDelta −amount); release: a hold ended without a charge (amount = the hold); platform_borne: the platform bore the cost (amount = the contractual cost, balanceDelta 0)'),
  amount: amount('What the entry is about: the credit, the charge, the released hold, the borne cost'),
  balanceDelta: amount('Signed change of the balance'),
  holdId: z.string().optional(),
  requestId: requestId.optional(),
  taskId: taskId.optional(),
  model: z.string().optional(),
  profileId: z.string().optional(),
  reference: z.string().optional().describe('Credit reference, or why a hold was released'),
});

export const usageItemSchema = z.object({
  id: z.string().describe('<usage event id>:<unit>'),
  occurredAt,
  unit: z.enum(USAGE_UNITS),
  quantity: z.number().int(),
  unitPrice: amount('Price per unit'),
  cost: amount('quantity × unitPrice'),
  charged: amount("This line's share of the charge: a call's charge (never above its hold) covers its lines in order, so the last lines carry any shortfall"),
  platformBorne: z.boolean().describe('The call was charged nothing for a cost above zero: the platform bore it (e.g. a late image artifact after UNKNOWN_IMAGE_V1)'),
  holdId: z.string(),
  requestId,
  taskId: taskId.optional(),
  model: z.string(),
  profileId: z.string(),
  reasoningTokens: z.number().int().optional().describe('TEXT_OUTPUT: how many of the quantity were reasoning tokens (billed as output, as providers bill them)'),
  route: routeRecordSchema.optional().describe("How the call was routed: the upstream (provider entry) whose answer is charged and every attempt in order, the charged one last; on each row of the call. Absent when the call's settle said none (images, calls before routing). CSV: the columns upstream and attempts"),
});

/** An item of the console: a ledger row without the account and pool (always the caller's), with the image task. */
export type BillItem = z.infer<typeof billItemSchema>;
export type UsageItem = z.infer<typeof usageItemSchema>;

const pageOf = (item: z.ZodType) => z.object({
  items: z.array(item).describe('Newest first (the order the ledger recorded them); empty past the last page'),
  page: z.number().int(),
  size: z.number().int(),
  total: z.number().int().describe('Every item of the account that the filters list (every item without a filter)'),
  through: z.number().int().describe("How many rows the account had in the list read (the query's through, or every row it had): pass it as through to the next pages, so that rows recorded meanwhile neither repeat nor shift the list"),
});
export const billPageSchema = pageOf(billItemSchema);
export const usagePageSchema = pageOf(usageItemSchema);
