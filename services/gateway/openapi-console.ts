// OpenAPI entries of the console's bills and usage: pages and exports (docs/console.md).
// Spread into openapi.ts.

import { DEFAULT_PAGE_SIZE, DEFAULT_SPENDING_DAYS, EXPORT_FORMATS, MAX_MODEL_FILTER_LENGTH, MAX_PAGE_SIZE, MAX_SPENDING_DAYS } from '../ledger/console-query';
import { BILLING_KINDS } from '../../lib/events';
import { billItemSchema, billPageSchema, usageItemSchema, usagePageSchema } from '../ledger/console-items';
import { BODY_413, CREDENTIAL_400, errorAnswer, jsonSchemaOf } from './openapi-answers';
import { FORM_TOKEN_FIELD } from './middleware/auth';
import { limitsSchema } from '../../lib/limits';
import { z } from 'zod';

const badQuery = {
  description: `invalid_request with param: page or size not an integer in range, format not csv or jsonl, from or to not an RFC 3339 date-time, to before from, model empty or too long, kind not a bill kind (or given for usage), images not true or false, through not a whole number, a repeated or unknown query parameter; ${CREDENTIAL_400}`,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};
const noKey = { description: 'Missing or unknown API key', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
const unavailable = errorAnswer("ledger_unavailable, actor_unavailable or oauth_unavailable (the issuer's keys cannot be fetched); retry later");
const oauth = { description: 'credential_family_mismatch (OAuth token) or account_suspended', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };

/** What every console route may answer besides its own: no credential, a suspended account, a dependency down. */
const refusals = { '401': noKey, '403': oauth, '503': unavailable };

const nano = z.number().int().nonnegative();
const spendFigures = z.object({
  spend_per_day: nano.describe('Charged in the current UTC day (nano-USD)'),
  spend_per_month: nano.describe('Charged in the current UTC month'),
  spend_total: nano.describe('Charged in all'),
  held: nano.describe('Open now, counted against every period\'s limit until the calls end'),
});
const windowCounts = z.object({ requests: z.number().int().nonnegative(), tokens: z.number().int().nonnegative() });

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

export const consoleSchemas = {
  Spending: jsonSchemaOf(z.object({
    from: day.describe('The first day read (UTC), included'),
    to: day.describe('The last day read, included'),
    items: z.array(z.object({
      day,
      model: z.string(),
      charged: nano.describe("What the day's calls of this model charged (nano-USD): the sum of their usage rows' charged shares; 0 when the platform bore the cost"),
    })).describe('By day, then by model; a day or model without usage has no item'),
  }), 'output'),
  BillItem: jsonSchemaOf(billItemSchema, 'output'),
  UsageItem: jsonSchemaOf(usageItemSchema, 'output'),
  BillPage: jsonSchemaOf(billPageSchema, 'output'),
  UsagePage: jsonSchemaOf(usagePageSchema, 'output'),
  CallerLimits: jsonSchemaOf(z.object({
    key: limitsSchema.nullable().describe("The API key's own limits ({} when it has none); null for a member token"),
    account: limitsSchema.describe("The account's limits over all its keys and credentials; spend in nano-USD"),
    rate_usage: z.object({
      window_start: z.iso.datetime().describe('The current minute window (rates are counted per whole minute)'),
      reset_at: z.iso.datetime(),
      account: windowCounts.describe("What the window has counted for the whole account"),
      key: windowCounts.nullable().describe("What it has counted for this key; null for a member token"),
    }).nullable().describe('Under a rate limit (the key\'s or the account\'s): what the current minute has counted (tokens as corrected once calls settle); null when neither has one'),
    spend_usage: z.object({
      account: spendFigures.extend({
        leased: nano.describe('Of held, what funds leases lock: counted against the account\'s spend limits until their gateways return them (an idle lease after GATEWAY_FUNDS_LEASE_IDLE_MS), even with no call in flight'),
      }).describe('What the whole account has been charged and holds open (its open holds and what its funds leases still lock)'),
      key: spendFigures.nullable().describe("The same for this key (its rotation chain counts as one key: the first key's id), its own open holds and its lease-carved calls that recorded progress; null for a member token"),
    }).describe('What the spend limits count, read from the FundsHold actor whether or not a spend limit is set'),
  }), 'output'),
};

const pageParameters = [
  { name: 'page', in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1 } },
  { name: 'size', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } },
];
/** The filters of pages and exports (each given narrows the list; a page's total counts what they list). */
const filterParameters = (what: 'bills' | 'usage') => [
  { name: 'from', in: 'query', required: false, schema: { type: 'string', format: 'date-time' }, description: 'RFC 3339 with a time zone; items at or after it' },
  { name: 'to', in: 'query', required: false, schema: { type: 'string', format: 'date-time' }, description: 'RFC 3339 with a time zone; items before it' },
  { name: 'model', in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: MAX_MODEL_FILTER_LENGTH }, description: 'Items of this model only (exactly)' },
  ...(what === 'bills' ? [{ name: 'kind', in: 'query', required: false, schema: { type: 'string', enum: [...BILLING_KINDS] }, description: 'Bills of this kind only' }] : []),
  { name: 'images', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'] }, description: 'true: only the items of image tasks (with a taskId); false: none of them' },
  { name: 'through', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: "An earlier page's through: the list as it was then (rows recorded since are left out), so that paging while new rows arrive neither repeats nor skips a row; not a filter (a page with only this is still read by position)" },
];
const FILTERED = 'With a filter, the ledger reads the whole list to find and count the items (it keeps no index by model, kind or time), so the cost grows with the account\'s history.';

function pagePath(what: 'bills' | 'usage', item: 'Bill' | 'Usage') {
  return {
    get: {
      summary: `A page of the caller's own ${what} (pool-3), newest first, optionally filtered`,
      description: `Without a filter, read by position. ${FILTERED}`,
      security: [{ apiKey: [] }, { oauth: [] }],
      parameters: [...pageParameters, ...filterParameters(what)],
      responses: {
        '200': { description: `A page of ${what}`, content: { 'application/json': { schema: { $ref: `#/components/schemas/${item}Page` } } } },
        '400': badQuery,
        ...refusals,
      },
    },
  };
}

function exportPath(what: 'bills' | 'usage', item: 'Bill' | 'Usage') {
  const parameters = [{ name: 'format', in: 'query', required: false, schema: { type: 'string', enum: [...EXPORT_FORMATS], default: 'csv' } }, ...filterParameters(what)];
  const answer = {
    description: `Content-Disposition: attachment. csv: a header row, then one row per item with the ${item}Item fields as columns (an absent field is an empty cell${what === 'usage' ? "; the route as the last two, upstream and attempts: `<upstream>:<outcome>:<ms>ms[:borne]` per attempt, `;`-separated, in order" : ''}); jsonl: one ${item}Item per line`,
    content: {
      'text/csv': { schema: { type: 'string' } },
      'application/x-ndjson': { schema: { type: 'string' } },
    },
  };
  // The form's fields: the query's parameters, and the credential when no header carries it.
  const fields: Record<string, unknown> = {
    [FORM_TOKEN_FIELD]: { type: 'string', minLength: 1, description: 'The API key or OAuth access token, when no Authorization header is sent (a browser form can send none); never both' },
  };
  for (const parameter of parameters) fields[parameter.name] = { ...parameter.schema, ...('description' in parameter ? { description: parameter.description } : {}) };
  return {
    get: {
      summary: `Export of the caller's own ${what} (pool-3), streamed: the items of every page with the same filters, in the same order`,
      security: [{ apiKey: [] }, { oauth: [] }],
      parameters,
      responses: { '200': answer, '400': badQuery, ...refusals },
    },
    post: {
      summary: `The same export, asked by an HTML form (what the web console submits, so that the browser saves the file as it arrives)`,
      description: `The parameters are the form's fields, not the query (which must be empty). The credential is the Authorization header or the ${FORM_TOKEN_FIELD} field (RFC 6750's form-encoded body parameter), not both. The answer is the GET's.`,
      security: [{ apiKey: [] }, { oauth: [] }, {}],
      requestBody: {
        required: true,
        content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: false, properties: fields } } },
      },
      responses: {
        '200': answer,
        '400': { ...badQuery, description: `${badQuery.description.replace('query parameter', 'field')}; any query parameter; ambiguous_credential: both an Authorization header and an ${FORM_TOKEN_FIELD} field, or the field twice` },
        '401': { ...noKey, description: `Missing, empty or unknown credential` },
        '403': oauth,
        '413': errorAnswer(`${BODY_413}: the form is larger than 4 KiB`),
        '415': errorAnswer('unsupported_media_type: the body is not application/x-www-form-urlencoded (UTF-8)'),
        '503': unavailable,
      },
    },
  };
}

export const consolePaths = {
  '/api/distribution/api-credit/limits': {
    get: {
      summary: "The limits in force for the caller: its API key's and its account's (docs/auth.md, Limits); what the web console shows",
      security: [{ apiKey: [] }, { oauth: [] }],
      responses: {
        '200': { description: 'Limits', content: { 'application/json': { schema: { $ref: '#/components/schemas/CallerLimits' } } } },
        '400': { ...badQuery, description: `invalid_request naming the parameter: this route takes no query parameter; ${CREDENTIAL_400}` },
        ...refusals,
      },
    },
  },
  '/api/distribution/api-credit/spending': {
    get: {
      summary: "What the caller's account was charged per UTC day and model (pool-3), from its usage: the sums the ledger keeps as it records each call",
      security: [{ apiKey: [] }, { oauth: [] }],
      parameters: [
        { name: 'from', in: 'query', required: false, schema: { type: 'string', format: 'date' }, description: `The first UTC day (YYYY-MM-DD), included; default ${DEFAULT_SPENDING_DAYS - 1} days before to` },
        { name: 'to', in: 'query', required: false, schema: { type: 'string', format: 'date' }, description: `The last UTC day, included; default today. At most ${MAX_SPENDING_DAYS} days from from` },
      ],
      responses: {
        '200': { description: 'Charged per day and model', content: { 'application/json': { schema: { $ref: '#/components/schemas/Spending' } } } },
        '400': badQuery,
        ...refusals,
      },
    },
  },
  '/api/distribution/api-credit/bills/page': pagePath('bills', 'Bill'),
  '/api/distribution/api-credit/usage/page': pagePath('usage', 'Usage'),
  '/api/distribution/api-credit/bills/export': exportPath('bills', 'Bill'),
  '/api/distribution/api-credit/usage/export': exportPath('usage', 'Usage'),
};
