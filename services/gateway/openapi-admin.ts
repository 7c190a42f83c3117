// The operator API in the OpenAPI document, generated from the zod schemas its routes parse with
// (routes/admin-schemas.ts). Every route takes the operator token.

import { accountAnswer, accountBody, apiKeyAnswer, apiKeyBody, creditAnswer, creditBody, reconciliationAnswer, repairAnswer } from './routes/admin-schemas';
import { BODY_400, BODY_413, BODY_415, CREDENTIAL_400, errorAnswer, jsonSchemaOf, UNAVAILABLE } from './openapi-answers';

export const adminSecuritySchemes = {
  adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token: Authorization: Bearer $GATEWAY_ADMIN_TOKEN' },
};

export const adminSchemas = {
  AccountRequest: jsonSchemaOf(accountBody, 'input'),
  Account: jsonSchemaOf(accountAnswer, 'output'),
  ApiKeyRequest: jsonSchemaOf(apiKeyBody, 'input'),
  ApiKeyCreated: jsonSchemaOf(apiKeyAnswer, 'output'),
  CreditRequest: jsonSchemaOf(creditBody, 'input'),
  Credit: jsonSchemaOf(creditAnswer, 'output'),
  Reconciliation: jsonSchemaOf(reconciliationAnswer, 'output'),
  Repair: jsonSchemaOf(repairAnswer, 'output'),
};

const admin = [{ adminToken: [] }];
const json = (name: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });
const body = (name: string) => ({ required: true, content: json(name) });
const answer = (description: string, name: string) => ({ description, content: json(name) });
const accountId = { name: 'accountId', in: 'path', required: true, schema: { type: 'string' } };
/** Every operator route: the token, and what any route may refuse. */
const refusals = {
  '400': errorAnswer(`invalid_request naming the field, ${BODY_400}, ${CREDENTIAL_400}`),
  '401': errorAnswer('unauthorized: the operator token is missing or wrong'),
  '403': errorAnswer('admin_disabled: GATEWAY_ADMIN_TOKEN is not set'),
  '413': errorAnswer(`${BODY_413} (64 KiB)`),
  '415': errorAnswer(BODY_415),
  '503': errorAnswer(UNAVAILABLE),
};
const withoutBody = { ...refusals } as Record<string, unknown>;
delete withoutBody['413'];
delete withoutBody['415'];

export const adminPaths = {
  '/admin/v1/accounts': {
    post: { summary: 'Create an account (both pools start at zero)', security: admin, requestBody: body('AccountRequest'), responses: { '201': answer('The account', 'Account'), ...refusals } },
  },
  '/admin/v1/accounts/{accountId}/api-keys': {
    post: {
      summary: 'Create an API key for the account; the key is shown once', security: admin, parameters: [accountId], requestBody: body('ApiKeyRequest'),
      responses: { '201': answer('The key', 'ApiKeyCreated'), ...refusals, '400': errorAnswer(`invalid_scope (unknown or repeated), invalid_request, ${BODY_400}, ${CREDENTIAL_400}`), '404': errorAnswer('account_not_found') },
    },
  },
  '/admin/v1/accounts/{accountId}/credits': {
    post: {
      summary: 'Credit a pool of the account, idempotent by reference', security: admin, parameters: [accountId], requestBody: body('CreditRequest'),
      responses: { '200': answer('The credit and the balance after it', 'Credit'), ...refusals, '404': errorAnswer('account_not_found'), '409': errorAnswer('credit_reference_reused: the reference was applied before with another amount; nothing moved') },
    },
  },
  '/admin/v1/accounts/{accountId}/orders': {
    post: {
      summary: 'A top-up order made by an operator: paid and fulfilled like the owner’s own', security: admin, parameters: [accountId],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderRequest' } } } },
      responses: { '201': answer('The order, status created', 'Order'), ...refusals, '400': errorAnswer(`invalid_request, idempotency_key_invalid, ${BODY_400}, ${CREDENTIAL_400}`), '404': errorAnswer('account_not_found'), '409': errorAnswer('idempotency_key_reused') },
    },
  },
  '/admin/v1/reconciliation': {
    get: { summary: "Every ledger account's balance recomputed from its bill rows against its FundsHold actor", security: admin, responses: { '200': answer('The differences, each naming the events the ledger lacks', 'Reconciliation'), ...withoutBody } },
  },
  '/admin/v1/reconciliation/repair': {
    post: { summary: "The differing accounts' actors deliver their missing events to the ledger (idempotent by event id)", security: admin, responses: { '200': answer('What was delivered, and the reconciliation after', 'Repair'), ...refusals } },
  },
};
