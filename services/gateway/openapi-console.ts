// OpenAPI entries of the console's bills and usage: pages and exports (docs/console.md).
// Spread into openapi.ts.

import { DEFAULT_PAGE_SIZE, EXPORT_FORMATS, MAX_PAGE_SIZE } from '../ledger/console-query';
import { CREDENTIAL_400, errorAnswer } from './openapi-answers';

const badQuery = {
  description: `invalid_request with param: page or size not an integer in range, format not csv or jsonl, from or to not an RFC 3339 date-time, to before from, a repeated or unknown query parameter; ${CREDENTIAL_400}`,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};
const noKey = { description: 'Missing or unknown API key', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
const unavailable = errorAnswer("ledger_unavailable, actor_unavailable or oauth_unavailable (the issuer's keys cannot be fetched); retry later");
const oauth = { description: 'credential_family_mismatch (OAuth token)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };

const amount = (description: string) => ({ type: 'integer', description: `${description}, nano-USD (exact integer)` });
const common = {
  id: { type: 'string' },
  occurredAt: { type: 'string', format: 'date-time', description: 'When the change happened (RFC 3339, UTC)' },
  holdId: { type: 'string' },
  requestId: { type: 'string', description: 'The X-Request-Id of the HTTP request that caused it' },
  taskId: { type: 'string', format: 'uuid', description: 'Image task (images only)' },
  model: { type: 'string' },
  profileId: { type: 'string' },
};

export const consoleSchemas = {
  BillItem: {
    type: 'object',
    required: ['id', 'occurredAt', 'kind', 'amount', 'balanceDelta'],
    properties: {
      ...common,
      id: { type: 'string', description: 'The billing event id' },
      kind: { type: 'string', enum: ['credit', 'hold', 'charge', 'release', 'platform_borne'], description: 'release: a hold ended without a charge (amount = the hold); platform_borne: the platform bore the cost (amount = the contractual cost, balanceDelta 0)' },
      amount: amount('What the entry is about: the credit, the charge, the released hold, the borne cost'),
      balanceDelta: amount('Signed change of the balance'),
      reference: { type: 'string', description: 'Credit reference, or why a hold was released' },
    },
  },
  UsageItem: {
    type: 'object',
    required: ['id', 'occurredAt', 'unit', 'quantity', 'unitPrice', 'cost', 'charged', 'platformBorne', 'holdId', 'requestId', 'model', 'profileId'],
    properties: {
      ...common,
      id: { type: 'string', description: '<usage event id>:<unit>' },
      unit: { type: 'string', enum: ['TEXT_INPUT', 'TEXT_OUTPUT', 'IMAGE', 'SECOND'] },
      quantity: { type: 'integer' },
      unitPrice: amount('Price per unit'),
      cost: amount('quantity × unitPrice'),
      charged: amount("This line's share of the charge: a call's charge (never above its hold) covers its lines in order, so the last lines carry any shortfall"),
      platformBorne: { type: 'boolean', description: 'The call was charged nothing for a cost above zero: the platform bore it (e.g. a late image artifact after UNKNOWN_IMAGE_V1)' },
    },
  },
  ...Object.fromEntries((['Bill', 'Usage'] as const).map((name) => [`${name}Page`, {
    type: 'object',
    required: ['items', 'page', 'size', 'total'],
    properties: {
      items: { type: 'array', items: { $ref: `#/components/schemas/${name}Item` }, description: 'Newest first (the order the ledger recorded them); empty past the last page' },
      page: { type: 'integer' },
      size: { type: 'integer' },
      total: { type: 'integer', description: 'Every item of the account' },
    },
  }])),
};

const pageParameters = [
  { name: 'page', in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1 } },
  { name: 'size', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE } },
];
const exportParameters = [
  { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: [...EXPORT_FORMATS], default: 'csv' } },
  { name: 'from', in: 'query', required: false, schema: { type: 'string', format: 'date-time' }, description: 'RFC 3339 with a time zone; items at or after it' },
  { name: 'to', in: 'query', required: false, schema: { type: 'string', format: 'date-time' }, description: 'RFC 3339 with a time zone; items before it' },
];

function pagePath(what: 'bills' | 'usage', item: 'Bill' | 'Usage') {
  return {
    get: {
      summary: `A page of the caller's own ${what} (pool-3), newest first`,
      security: [{ apiKey: [] }, { oauth: [] }],
      parameters: pageParameters,
      responses: {
        '200': { description: `A page of ${what}`, content: { 'application/json': { schema: { $ref: `#/components/schemas/${item}Page` } } } },
        '400': badQuery,
        '401': noKey,
        '403': oauth,
        '503': unavailable,
      },
    },
  };
}

function exportPath(what: 'bills' | 'usage', item: 'Bill' | 'Usage') {
  return {
    get: {
      summary: `Export of the caller's own ${what} (pool-3), streamed: the items of every page, in the same order, filtered by time`,
      security: [{ apiKey: [] }, { oauth: [] }],
      parameters: exportParameters,
      responses: {
        '200': {
          description: `Content-Disposition: attachment. csv: a header row, then one row per item with the ${item}Item fields as columns (an absent field is an empty cell); jsonl: one ${item}Item per line`,
          content: {
            'text/csv': { schema: { type: 'string' } },
            'application/x-ndjson': { schema: { type: 'string' } },
          },
        },
        '400': badQuery,
        '401': noKey,
        '403': oauth,
        '503': unavailable,
      },
    },
  };
}

export const consolePaths = {
  '/api/distribution/api-credit/bills/page': pagePath('bills', 'Bill'),
  '/api/distribution/api-credit/usage/page': pagePath('usage', 'Usage'),
  '/api/distribution/api-credit/bills/export': exportPath('bills', 'Bill'),
  '/api/distribution/api-credit/usage/export': exportPath('usage', 'Usage'),
};
